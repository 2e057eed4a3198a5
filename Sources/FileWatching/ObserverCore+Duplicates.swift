/// New items that are copies of existing ones: found by the identity
/// attribute a copy tool carried along (`cp -a`, the Files app), or, opt-in,
/// by the same size and content. Reported as `duplicated` with the source,
/// in place of `added`, once the copy is complete.
extension ObserverCore {
    /// Whether new files wait until complete to be reported (so a copy can be
    /// told from a new document). Not during a fresh initial scan, whose
    /// items are all there already.
    var detectsDuplicatesNow: Bool {
        guard options.storesIdentityAttribute || options.detectsDuplicateContent else { return false }
        if isScanned { return true }
        if case .restored = start { return true }
        return false
    }

    /// Reports a new item: at once, or, for a file being written while
    /// duplicates are detected, once it is complete.
    mutating func announce(_ index: Tree.Index) {
        guard tree[index].kind == .file, detectsDuplicatesNow else {
            emit(.added(changedItem(index)))
            return
        }
        if tree.has(index, flag: Tree.Flag.writing) {
            tree.set(index, flag: Tree.Flag.unreported, true)
        } else {
            reportComplete(index)
        }
    }

    /// Reports a complete new file: as a duplicate of the item it was copied
    /// from, or as added.
    mutating func reportComplete(_ index: Tree.Index) {
        tree.set(index, flag: Tree.Flag.unreported, false)
        let path = tree.path(of: index)
        let id = tree.id(of: index)
        var source: Tree.Index? = nil
        if options.storesIdentityAttribute {
            let stored = fileSystem.identityAttribute(at: path)
            if let stored, stored != id, let holder = tree.index(of: stored), holder != index,
                !tree.has(holder, flag: Tree.Flag.unreported)
            {
                source = holder
            }
            if stored != id { fileSystem.setIdentityAttribute(id, at: path) }
        }
        if source == nil && options.detectsDuplicateContent { source = sameContent(as: index) }
        if let source {
            emit(.duplicated(changedItem(index), source: tree.path(of: source)))
        } else {
            emit(.added(changedItem(index)))
        }
        indexBySize(index)
    }

    // MARK: Ids claimed twice

    /// After a scan: of two items whose attribute names one id, the one
    /// that held it in the saved state keeps it (the scan found it to be
    /// the same item); of two the scan found, the older (birth time, then
    /// inode) keeps it. The other keeps a new id, written on it. What the
    /// scan reported is corrected before it is delivered.
    mutating func settleIdentityConflicts() {
        let conflicts = attributeConflicts
        attributeConflicts.removeAll()
        idsGivenByScan.removeAll()
        for (path, stored, holderRestored) in conflicts {
            guard let newcomer = tree.index(at: path) else { continue }
            // Only an item that claims the id by its own attribute too is in
            // the contest: one that holds it from the saved state without
            // the attribute (a document saved anew since, by a program that
            // does not carry attributes over) is the document, and keeps it.
            // Nor one the saved state gave it: ages cannot tell, as ext4
            // gives a freed inode number to the next file with the freed
            // file's birth time within a tick.
            if let holder = tree.index(of: stored), holder != newcomer, !holderRestored,
                isOlder(newcomer, than: holder),
                fileSystem.identityAttribute(at: tree.path(of: holder)) == stored
            {
                let newcomerID = tree.id(of: newcomer)
                let placeholder = ItemID(rawValue: ~newcomerID.rawValue)
                tree.setID(newcomer, to: placeholder)
                tree.setID(holder, to: newcomerID)
                tree.setID(newcomer, to: stored)
                replaceIDsInPending([stored: newcomerID, newcomerID: stored])
                fileSystem.setIdentityAttribute(newcomerID, at: tree.path(of: holder))
                // Reported during the scan, under the id it had then, the
                // newcomer had that id written on it: it gets its own back.
                fileSystem.setIdentityAttribute(stored, at: path)
            } else {
                fileSystem.setIdentityAttribute(tree.id(of: newcomer), at: path)
            }
        }
    }

    private func isOlder(_ a: Tree.Index, than b: Tree.Index) -> Bool {
        let (first, second) = (tree.metadata(of: a), tree.metadata(of: b))
        if first.created != second.created && first.created != 0 && second.created != 0 {
            return first.created < second.created
        }
        return first.identity.inode < second.identity.inode
    }

    // MARK: Same content

    /// Remembers a reported file under its size, for finding its copies.
    mutating func indexBySize(_ index: Tree.Index) {
        guard options.detectsDuplicateContent, tree[index].kind == .file, tree[index].size > 0 else { return }
        filesBySize[tree[index].size, default: []].append(index)
        filesBySizeCount += 1
        if filesBySizeCount > 2 * tree.count + 1024 { indexAllFilesBySize() }
    }

    /// Rebuilds the size index from the tree (after the scan, and when stale entries pile up).
    mutating func indexAllFilesBySize() {
        var index: [Int64: [Tree.Index]] = [:]
        var count = 0
        tree.walk(from: Tree.rootIndex) { node in
            let record = tree[node]
            if record.kind == .file && record.size > 0 && record.flags & Tree.Flag.unreported == 0 {
                index[record.size, default: []].append(node)
                count += 1
            }
        }
        filesBySize = index
        filesBySizeCount = count
    }

    /// An existing file with the same size and content: a sample of both
    /// (start, middle, end) first, then every byte.
    private func sameContent(as index: Tree.Index) -> Tree.Index? {
        let size = tree[index].size
        guard size > 0, let candidates = filesBySize[size] else { return nil }
        let path = tree.path(of: index)
        var sample: [UInt8]? = nil
        var seen = Set<Tree.Index>()
        for candidate in candidates
        where candidate != index && seen.insert(candidate).inserted && tree.isLive(candidate)
            && tree[candidate].kind == .file && tree[candidate].size == size
            && !tree.has(candidate, flag: Tree.Flag.unreported)
        {
            if sample == nil { sample = contentSample(at: path, size: size) }
            let candidatePath = tree.path(of: candidate)
            guard let sample, contentSample(at: candidatePath, size: size) == sample else { continue }
            if sameBytes(path, candidatePath, size: size) { return candidate }
        }
        return nil
    }

    private func contentSample(at path: ItemPath, size: Int64) -> [UInt8]? {
        let chunk = 16 * 1024
        var sample: [UInt8] = []
        for offset in Set([0, max(0, size / 2 - Int64(chunk) / 2), max(0, size - Int64(chunk))]).sorted() {
            guard let bytes = fileSystem.readBytes(at: path, offset: offset, count: chunk) else { return nil }
            sample += bytes
        }
        return sample
    }

    private func sameBytes(_ a: ItemPath, _ b: ItemPath, size: Int64) -> Bool {
        let chunk = 1 << 20
        var offset: Int64 = 0
        while offset < size {
            guard let left = fileSystem.readBytes(at: a, offset: offset, count: chunk),
                let right = fileSystem.readBytes(at: b, offset: offset, count: chunk), left == right, !left.isEmpty
            else { return false }
            offset += Int64(left.count)
        }
        return true
    }
}
