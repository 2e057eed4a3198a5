/// Scanning a subtree again and reporting how it differs from the tree: after
/// a queue overflow, on every poll, and at a start from a saved state.
/// Items are paired by identity, so a rename found by a rescan is a rename,
/// not a removal and an addition.
///
/// A name whose item on disk is not the one the tree has there is settled
/// only once the whole subtree is listed, because what it is depends on
/// where the tree's item went: found elsewhere, that item moved and the one
/// at the name is new (or moved there itself); gone, the one at the name is
/// the same document saved anew (an atomic save, as the live path reports
/// it). Deciding at the name, in listing order, would take a file moved away
/// and replaced by a new one for a save, and the moved file for a new one.
extension ObserverCore {
    mutating func rescan(from start: Tree.Index, reason: String?, renewingFolders: Bool = false) {
        guard tree.isLive(start) else { return }
        // Everything under `start`, by identity, to find where items went
        // (hard links, several items of one identity, are rare: kept aside).
        var pass = RescanPass(renewsFolders: renewingFolders)
        // The ids of items set aside (earlier, and by this pass as it goes)
        // are reserved from copies' identity attributes until the pass ends.
        let outerReserved = reservedIDs
        defer { reservedIDs = outerReserved }
        if options.storesIdentityAttribute { reservedIDs.formUnion(setAsideEarlier.values.map(\.id)) }
        tree.walk(from: start) { index in
            if index != start { pass.byIdentity.add(tree.identity(of: index), index) }
        }
        clearVisited(from: start)
        tree.set(start, flag: Tree.Flag.visited, true)

        pass.directories = [start]
        repeat {
            while let directory = pass.directories.popLast() { relist(directory, pass: &pass) }
            // Every directory known so far is listed: the disputed names can be settled.
            settleDisputes(pass: &pass)
        } while !pass.directories.isEmpty

        // What was not seen is gone: report the topmost of each gone subtree.
        var gone: [Tree.Index] = []
        tree.walk(from: start) { index in
            if !tree.has(index, flag: Tree.Flag.visited) && tree.has(tree[index].parent, flag: Tree.Flag.visited) {
                gone.append(index)
            }
        }
        for index in gone where tree.isLive(index) { remove(index) }
        rememberSetAside(pass.setAside)
        if let reason { emit(.rescanned(path: tree.path(of: start), reason: reason)) }
    }

    /// Lists one directory again and settles each entry whose name is free in
    /// the tree or holds the same item; the others wait in `pass.disputes`.
    private mutating func relist(_ directory: Tree.Index, pass: inout RescanPass) {
        guard tree.isLive(directory) else { return }
        let path = tree.path(of: directory)
        guard let entries = listAndWatch(directory, at: path) else {
            // Keep what is known under it; its parent's events or the next poll settle it.
            markVisited(subtree: directory)
            return
        }
        pass.listed.append(directory)
        for entry in entries {
            guard filter.includes(entry.name, in: path), case .success(let metadata) = entry.metadata else {
                continue
            }
            guard let occupant = tree.child(of: directory, named: entry.name) else {
                arrive(entry.name, in: directory, metadata: metadata, pass: &pass)
                continue
            }
            if tree.identity(of: occupant) == metadata.identity && tree[occupant].kind == metadata.kind {
                keep(occupant, metadata: metadata, pass: &pass)
            } else {
                pass.disputes.append(RescanPass.Dispute(directory: directory, name: entry.name, metadata: metadata))
            }
        }
    }

    /// The tree's item is still at its name: its metadata is refreshed, and a
    /// file whose content changed is being written (closed, as far as known).
    private mutating func keep(_ occupant: Tree.Index, metadata: FileMetadata, pass: inout RescanPass) {
        tree.set(occupant, flag: Tree.Flag.visited, true)
        if metadata.kind == .file && !tree.metadata(of: occupant).hasSameContentStamp(as: metadata) {
            tree.set(occupant, metadata: metadata)
            beginWriting(occupant, metadata: metadata, closed: true)
        } else {
            tree.set(occupant, metadata: metadata)
        }
        if metadata.kind == .directory { pass.directories.append(occupant) }
    }

    /// An item on disk at a name the tree has free: moved there from
    /// elsewhere in the subtree, back from being set aside, or new.
    private mutating func arrive(
        _ name: [UInt8], in directory: Tree.Index, metadata: FileMetadata, pass: inout RescanPass
    ) {
        let path = tree.path(of: directory).appending(name)
        if let source = movedSource(metadata, byIdentity: pass.byIdentity)
            ?? movedIn(metadata, at: path, into: directory),
            tree[source].kind == metadata.kind, !tree.isSame(directory, asOrUnder: source)
        {
            move(source, to: directory, name: name)
            tree.set(source, metadata: metadata)
            tree.set(source, flag: Tree.Flag.visited, true)
            if metadata.kind == .directory { pass.directories.append(source) }
            return
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
            && (isPolled(directory) || fileSystem.hasNoWriters(at: path) != true)
        // An item set aside to free its name (by this rescan, or by an
        // earlier one that did not find it again) comes back under its own
        // id (unless a copy claimed the id meanwhile).
        let setAside =
            (pass.setAside.removeValue(forKey: metadata.identity)
            ?? setAsideEarlier.removeValue(forKey: metadata.identity)?.id).flatMap {
                tree.index(of: $0) == nil ? $0 : nil
            }
        let index = add(name: name, in: directory, metadata: metadata, writing: writing, id: setAside)
        if writing { writes.closed(index, at: now.monotonic) }
        tree.set(index, flag: Tree.Flag.visited, true)
        if metadata.kind == .directory { pass.directories.append(index) }
    }

    /// Settles the names whose item on disk is not the tree's, now that
    /// every listed identity has had the chance to claim its tree item:
    ///
    /// - the tree's item moved away meanwhile: the name is free, and the
    ///   disk's item arrives there;
    /// - the tree's item is the one on disk at another disputed name: it
    ///   waits for that name to be free (a chain of renames, settled from
    ///   its end);
    /// - the tree's item is nowhere on disk: two files are the same
    ///   document saved anew (it keeps its id, `modified`); otherwise it is
    ///   removed and the disk's item arrives.
    ///
    /// "Nowhere on disk" is known only once every folder is listed, and a
    /// folder that arrives at a disputed name is listed only after it
    /// arrives: so a round that settles by identity alone and finds folders
    /// to list returns to the listing first, and a cycle of names (swapped
    /// or rotated) is broken before anything is taken for gone. A cycle is
    /// broken by removing one of its items, which comes back under its id at
    /// its new name, as a stream that renames onto a name still taken could
    /// not be replayed. So is a chain of names whose disk item at one is a
    /// folder: the folder is listed only once it has its name, and the
    /// tree's item of the name at the chain's end may be in it (moved into
    /// the folder before the folder moved): taken for gone, that item would
    /// lose its id, and the file at its name would take it.
    private mutating func settleDisputes(pass: inout RescanPass) {
        while !pass.disputes.isEmpty {
            var claimant: [FileIdentity: Int] = [:]
            for (position, dispute) in pass.disputes.enumerated() { claimant[dispute.metadata.identity] = position }
            var waiting: [RescanPass.Dispute] = []
            var undecided: [RescanPass.Dispute] = []
            var settled = false
            for dispute in pass.disputes {
                guard tree.isLive(dispute.directory) else { continue }
                guard let occupant = tree.child(of: dispute.directory, named: dispute.name) else {
                    arrive(dispute.name, in: dispute.directory, metadata: dispute.metadata, pass: &pass)
                    settled = true
                    continue
                }
                let identity = tree.identity(of: occupant)
                if identity == dispute.metadata.identity && tree[occupant].kind == dispute.metadata.kind {
                    keep(occupant, metadata: dispute.metadata, pass: &pass)
                    settled = true
                } else if claimant[identity] != nil {
                    waiting.append(dispute)
                } else {
                    undecided.append(dispute)
                }
            }
            pass.disputes = waiting + undecided
            if settled {
                if !pass.directories.isEmpty { return }
                continue
            }
            // (With nothing undecided, the waiting names always close a
            // cycle; the first stands in should that ever fail, never to spin.)
            if let cycle = firstInCycle(waiting) ?? (undecided.isEmpty ? waiting.first : nil),
                let occupant = tree.child(of: cycle.directory, named: cycle.name)
            {
                setAside(occupant, pass: &pass)
                continue
            }
            // A folder on disk at a waiting name is not listed yet, and an
            // undecided name's tree item may be in it (moved into the folder
            // before the folder took the name): its name is freed first, as
            // in a cycle, so that it arrives and is listed before anything
            // is taken for gone.
            if let folder = waiting.first(where: { $0.metadata.kind == .directory }),
                let occupant = tree.child(of: folder.directory, named: folder.name)
            {
                setAside(occupant, pass: &pass)
                continue
            }
            // Every folder is listed and no name waits on a cycle: the
            // undecided names' tree items are nowhere on disk, unless the
            // disk changed while it was listed (a poll races the changes it
            // looks for): a folder changed since is listed again first.
            let relisted = relistChanged(pass: &pass)
            if !relisted.isEmpty {
                // Their names are settled again from the new listing.
                pass.disputes = (waiting + undecided).filter { !relisted.contains($0.directory) }
                return
            }
            // Those where a
            // folder is at stake go first: a folder that arrives is listed,
            // and may hold the tree item of a name where a file is disputed.
            var betweenFiles: [RescanPass.Dispute] = []
            for dispute in undecided {
                guard tree.isLive(dispute.directory),
                    let occupant = tree.child(of: dispute.directory, named: dispute.name)
                else { continue }
                if tree[occupant].kind != .directory && dispute.metadata.kind != .directory {
                    betweenFiles.append(dispute)
                } else if pass.renewsFolders && tree[occupant].kind == .directory
                    && dispute.metadata.kind == .directory
                {
                    // Inside a folder saved anew (`renewFolder`): another
                    // folder under the same name is the same folder saved
                    // anew; what is in it is settled by name when it is
                    // listed. (Elsewhere a folder is not taken for gone
                    // here: it may be inside the new folder, not listed
                    // yet, and set aside it comes back under its id.)
                    renew(occupant, with: dispute.metadata)
                    tree.set(occupant, flag: Tree.Flag.visited, true)
                    pass.directories.append(occupant)
                } else {
                    setAside(occupant, pass: &pass)
                    arrive(dispute.name, in: dispute.directory, metadata: dispute.metadata, pass: &pass)
                }
            }
            if !pass.directories.isEmpty {
                pass.disputes = waiting + betweenFiles
                return
            }
            for dispute in betweenFiles {
                guard tree.isLive(dispute.directory),
                    let occupant = tree.child(of: dispute.directory, named: dispute.name)
                else { continue }
                // Another file under the same name: moved here over it, or written anew.
                let source = movedSource(dispute.metadata, byIdentity: pass.byIdentity)
                if let source, tree.has(occupant, flag: Tree.Flag.unreported),
                    !tree.has(source, flag: Tree.Flag.unreported)
                {
                    // The tree's file at the name was never reported: no one
                    // holds its id for the document to keep. The known file
                    // that moved here keeps its own (it may have come by a
                    // swap after the unreported file was saved over and left).
                    remove(occupant)
                    move(source, to: dispute.directory, name: dispute.name)
                    tree.set(source, metadata: dispute.metadata)
                    tree.set(source, flag: Tree.Flag.visited, true)
                    continue
                }
                if source == nil, let id = pass.setAside[dispute.metadata.identity], tree.index(of: id) == nil {
                    // Unless it is an item set aside in this rescan (with the
                    // folder it was in, to free the folder's name): it comes
                    // back under its own id, and the tree's file at the name,
                    // found nowhere on disk, is gone.
                    remove(occupant)
                    arrive(dispute.name, in: dispute.directory, metadata: dispute.metadata, pass: &pass)
                    continue
                }
                replace(occupant, with: dispute.metadata, replacedBy: source)
                tree.set(occupant, flag: Tree.Flag.visited, true)
            }
            pass.disputes = waiting
            if !pass.directories.isEmpty { return }
        }
    }

    /// Puts back on the list (and returns) the folders listed in this pass
    /// whose content changed since (their modification time is not the one the tree had
    /// when they were listed), at most ``RescanPass/maximumRelists`` times
    /// a pass. Whether an item is "nowhere on disk" is decided only on
    /// listings that still hold: taken from a torn one, a file moved away
    /// and replaced at its name while the pass ran would give the newcomer
    /// its id, and itself a new one where it went.
    private mutating func relistChanged(pass: inout RescanPass) -> Set<Tree.Index> {
        guard pass.relists < RescanPass.maximumRelists else { return [] }
        let listed = pass.listed
        pass.listed.removeAll()
        var changed: Set<Tree.Index> = []
        for folder in listed where tree.isLive(folder) {
            guard case .success(let now) = fileSystem.metadata(at: tree.path(of: folder)),
                now.identity == tree.identity(of: folder), now.modified != tree.metadata(of: folder).modified
            else {
                pass.listed.append(folder)
                continue
            }
            tree.set(folder, metadata: now)
            pass.directories.append(folder)
            changed.insert(folder)
        }
        if !changed.isEmpty { pass.relists += 1 }
        return changed
    }

    /// A waiting name on a cycle: following, from name to name, the disputed
    /// name that the tree's item at each is on disk at leads back to it.
    private func firstInCycle(_ waiting: [RescanPass.Dispute]) -> RescanPass.Dispute? {
        var byIdentity: [FileIdentity: Int] = [:]
        for (position, dispute) in waiting.enumerated() { byIdentity[dispute.metadata.identity] = position }
        func next(_ position: Int) -> Int? {
            let dispute = waiting[position]
            guard tree.isLive(dispute.directory),
                let occupant = tree.child(of: dispute.directory, named: dispute.name)
            else { return nil }
            return byIdentity[tree.identity(of: occupant)]
        }
        for start in waiting.indices {
            var seen: Set<Int> = [start]
            var current = start
            while let following = next(current) {
                if following == start { return waiting[start] }
                guard seen.insert(following).inserted else { break }
                current = following
            }
        }
        return nil
    }

    /// A folder the tree has at a name where another was put from outside
    /// the tree or from a hidden name (a rename over it: a package's atomic
    /// save does that with `renameat2(RENAME_EXCHANGE)`, and the old tree
    /// leaves whole): the same folder saved anew, as two files are. It
    /// keeps its id, and so does each item in it whose name is still there
    /// (a file `modified` when it is another inode, as after any atomic
    /// save; a folder renewed in turn); names gone are `removed`, new names
    /// `added`. A package's readers and the documents open in it follow one
    /// id through every save.
    mutating func renewFolder(_ index: Tree.Index, with metadata: FileMetadata) {
        renew(index, with: metadata)
        rescan(from: index, reason: nil, renewingFolders: true)
    }

    /// Gives a folder the identity of the one now at its name: the old
    /// one's watch goes (it watches a folder elsewhere now), and the new one
    /// gets the folder's id in its identity attribute.
    private mutating func renew(_ index: Tree.Index, with metadata: FileMetadata) {
        if let wd = watchOfDirectory.removeValue(forKey: index) {
            watchedDirectories[wd] = nil
            fileSystem.removeWatch(wd)
        }
        tree.set(index, metadata: metadata)
        keepIdentityAttribute(of: index)
    }

    /// Keeps the ids of the items a rescan set aside and did not find again,
    /// for a later rescan (see ``setAsideEarlier``).
    private mutating func rememberSetAside(_ left: [FileIdentity: ItemID]) {
        for (identity, id) in left where tree.index(of: id) == nil {
            setAsideCount += 1
            setAsideEarlier[identity] = (id, setAsideCount)
        }
        guard setAsideEarlier.count > Self.setAsideEarlierLimit else { return }
        let cut = setAsideEarlier.values.map(\.order).sorted()[setAsideEarlier.count / 2]
        setAsideEarlier = setAsideEarlier.filter { $0.value.order >= cut }
    }

    /// Removes an item (and its subtree) whose name is needed, remembering
    /// their ids in case the rest of the rescan finds them elsewhere.
    private mutating func setAside(_ index: Tree.Index, pass: inout RescanPass) {
        var ids: [ItemID] = []
        tree.walk(from: index) {
            pass.setAside[tree.identity(of: $0)] = tree.id(of: $0)
            ids.append(tree.id(of: $0))
        }
        if options.storesIdentityAttribute { reservedIDs.formUnion(ids) }
        remove(index)
    }

    /// An item elsewhere in the rescanned subtree with this identity that is
    /// no longer at its own path (so it moved; not a second hard link). It
    /// may have been found at its path earlier in this rescan: a poll lists
    /// a tree that is changing, and an item renamed after its folder was
    /// listed is found again where it went (two names of one folder at
    /// once are a rename, as a folder has no hard links).
    private func movedSource(_ metadata: FileMetadata, byIdentity: IdentityIndex) -> Tree.Index? {
        for candidate in byIdentity.items(with: metadata.identity)
        where tree.isLive(candidate) && tree.identity(of: candidate) == metadata.identity {
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

/// The work of one rescan.
struct RescanPass {
    /// A name whose item on disk is not the one the tree has there.
    struct Dispute {
        var directory: Tree.Index
        var name: [UInt8]
        var metadata: FileMetadata
    }

    /// The tree's items under the rescanned directory, by identity.
    var byIdentity = IdentityIndex()
    /// Whether a folder found where the tree's folder was, the tree's not
    /// found, is that folder saved anew (inside a folder saved anew).
    var renewsFolders = false
    /// Directories to list, visited already.
    var directories: [Tree.Index] = []
    var disputes: [Dispute] = []
    /// Ids of items removed to free a name, by identity.
    var setAside: [FileIdentity: ItemID] = [:]
    /// The folders listed, for ``ObserverCore/relistChanged(pass:)``.
    var listed: [Tree.Index] = []
    /// How many times folders changed meanwhile were listed again.
    var relists = 0
    static let maximumRelists = 3
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
