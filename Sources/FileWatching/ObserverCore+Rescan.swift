/// Scanning a subtree again and reporting how it differs from the tree: after
/// a queue overflow, on every poll, and (later) against a saved state.
/// Items are paired by identity, so a rename found by a rescan is a rename,
/// not a removal and an addition.
extension ObserverCore {
    mutating func rescan(from start: Tree.Index, reason: String?) {
        guard tree.isLive(start) else { return }
        // Everything under `start`, by identity, to find where items went
        // (hard links, several items of one identity, are rare: kept aside).
        var byIdentity = IdentityIndex()
        tree.walk(from: start) { index in
            if index != start { byIdentity.add(tree.identity(of: index), index) }
        }
        clearVisited(from: start)
        tree.set(start, flag: Tree.Flag.visited, true)

        var stack: [Tree.Index] = [start]
        while let directory = stack.popLast() {
            guard tree.isLive(directory) else { continue }
            let path = tree.path(of: directory)
            guard let entries = listAndWatch(directory, at: path) else {
                // Keep what is known under it; its parent's events or the next poll settle it.
                markVisited(subtree: directory)
                continue
            }
            for entry in entries {
                guard filter.includes(entry.name, in: path), case .success(let metadata) = entry.metadata else {
                    continue
                }
                var slot = tree.child(of: directory, named: entry.name)
                if let occupant = slot {
                    if tree.identity(of: occupant) == metadata.identity && tree[occupant].kind == metadata.kind {
                        tree.set(occupant, flag: Tree.Flag.visited, true)
                        if metadata.kind == .file && !tree.metadata(of: occupant).hasSameContentStamp(as: metadata) {
                            tree.set(occupant, metadata: metadata)
                            beginWriting(occupant, metadata: metadata, closed: true)
                        } else {
                            tree.set(occupant, metadata: metadata)
                        }
                        if metadata.kind == .directory { stack.append(occupant) }
                        continue
                    }
                    if tree[occupant].kind != .directory && metadata.kind != .directory {
                        // Another file under the same name: moved here over it, or written anew.
                        let source = movedSource(metadata, byIdentity: byIdentity)
                        replace(occupant, with: metadata, replacedBy: source)
                        tree.set(occupant, flag: Tree.Flag.visited, true)
                        continue
                    }
                    remove(occupant)
                    slot = nil
                }
                if let source = movedSource(metadata, byIdentity: byIdentity), tree[source].kind == metadata.kind,
                    !tree.isSame(directory, asOrUnder: source)
                {
                    move(source, to: directory, name: entry.name)
                    tree.set(source, metadata: metadata)
                    tree.set(source, flag: Tree.Flag.visited, true)
                    if metadata.kind == .directory { stack.append(source) }
                    continue
                }
                // As at the first scan: a file unchanged for the settle time is
                // complete, and so is a recent one no process holds open for
                // writing (the kernel's read lease tells, asked only for these
                // few recent files). Not where the subtree is polled: there a
                // writer may be on another machine, which no lease here sees.
                // Any other may still be being written: the settle check
                // decides, and says `finished`.
                let writing =
                    metadata.kind == .file && metadata.modified > now.wall - options.settleTime.nanoseconds
                    && (isPolled(directory) || fileSystem.hasNoWriters(at: path.appending(entry.name)) != true)
                let index = add(name: entry.name, in: directory, metadata: metadata, writing: writing)
                if writing { writes.closed(index, at: now.monotonic) }
                tree.set(index, flag: Tree.Flag.visited, true)
                if metadata.kind == .directory { stack.append(index) }
            }
        }

        // What was not seen is gone: report the topmost of each gone subtree.
        var gone: [Tree.Index] = []
        tree.walk(from: start) { index in
            if !tree.has(index, flag: Tree.Flag.visited) && tree.has(tree[index].parent, flag: Tree.Flag.visited) {
                gone.append(index)
            }
        }
        for index in gone where tree.isLive(index) { remove(index) }
        if let reason { emit(.rescanned(path: tree.path(of: start), reason: reason)) }
    }

    /// An item elsewhere in the rescanned subtree with this identity that is
    /// no longer at its own path (so it moved; not a second hard link).
    private func movedSource(_ metadata: FileMetadata, byIdentity: IdentityIndex) -> Tree.Index? {
        for candidate in byIdentity.items(with: metadata.identity)
        where tree.isLive(candidate) && !tree.has(candidate, flag: Tree.Flag.visited)
            && tree.identity(of: candidate) == metadata.identity
        {
            if case .success(let there) = fileSystem.metadata(at: tree.path(of: candidate)),
                there.identity == metadata.identity
            {
                continue
            }
            return candidate
        }
        return nil
    }

    private mutating func clearVisited(from start: Tree.Index) {
        var all: [Tree.Index] = []
        tree.walk(from: start) { all.append($0) }
        for index in all { tree.set(index, flag: Tree.Flag.visited, false) }
    }

    private mutating func markVisited(subtree start: Tree.Index) {
        var all: [Tree.Index] = []
        tree.walk(from: start) { all.append($0) }
        for index in all { tree.set(index, flag: Tree.Flag.visited, true) }
    }
}

/// Items by identity for one rescan: one slot per identity, and a list only
/// for the identities that several items share (hard links).
struct IdentityIndex {
    private var first: [FileIdentity: Tree.Index] = [:]
    private var more: [FileIdentity: [Tree.Index]] = [:]

    mutating func add(_ identity: FileIdentity, _ index: Tree.Index) {
        if first[identity] == nil { first[identity] = index } else { more[identity, default: []].append(index) }
    }

    func items(with identity: FileIdentity) -> [Tree.Index] {
        guard let index = first[identity] else { return [] }
        return [index] + (more[identity] ?? [])
    }
}
