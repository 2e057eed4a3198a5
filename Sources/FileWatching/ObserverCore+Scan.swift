/// The initial scan, and the scan of every directory that appears later
/// (`mkdir -p`, `cp -r`, `tar x`, a folder moved in): the watch is added
/// first, then the directory is listed, so nothing created in between is lost.
extension ObserverCore {
    /// Scans the whole tree. Emits `scan-started`, the items (when asked),
    /// and `scan-completed`.
    mutating func scan(at time: Timestamp) {
        now = time
        let started = time.monotonic
        emit(.scanStarted(root: rootDescription))
        if options.pollingInterval != nil {
            tree.set(Tree.rootIndex, flag: Tree.Flag.polled, true)
            polledRoots.insert(Tree.rootIndex)
            nextPoll = time.monotonic + options.pollingInterval!.nanoseconds
        }
        if let (reason, hint) = rootDegradation {
            degrade(Tree.rootIndex, path: .root, reason: reason, hint: hint)
        }
        switch start {
        case .fresh:
            populate(Tree.rootIndex, report: options.reportsInitialItems, fresh: true)
        case .restored:
            scanFromRestoredTree()
        case .empty(let message):
            if let message { emit(.error(message: message, path: nil)) }
            populate(Tree.rootIndex, report: true, fresh: true)
        }
        settleIdentityConflicts()
        isScanned = true
        if options.detectsDuplicateContent { indexAllFilesBySize() }
        let elapsed = Int((monotonicNanoseconds() - started) / 1_000_000)
        emit(.scanCompleted(root: rootDescription, items: tree.count, elapsedMilliseconds: max(0, elapsed)))
    }

    /// Lists `start` and every directory under it, adding what is found.
    /// `fresh` means the directory's children in the tree are known to be
    /// empty (so listings can be appended in order without lookups);
    /// `complete` that the files arrived complete (a folder moved in), so
    /// none is taken for one still being written.
    mutating func populate(_ start: Tree.Index, report: Bool, fresh: Bool, complete: Bool = false) {
        var stack: [Tree.Index] = [start]
        let recent = complete ? Int64.max : now.wall - options.settleTime.nanoseconds
        /// Folders of the tree found moved into the new one: not fresh.
        var arrivedFolders: Set<Tree.Index> = []
        while let directory = stack.popLast() {
            let path = tree.path(of: directory)
            guard let entries = listAndWatch(directory, at: path) else { continue }
            let isFresh = (fresh && !arrivedFolders.contains(directory)) || tree.childIndices(of: directory).isEmpty
            var found: [(name: [UInt8], metadata: FileMetadata)] = []
            found.reserveCapacity(entries.count)
            for entry in entries {
                guard filter.includes(entry.name, in: path) else { continue }
                switch entry.metadata {
                case .success(let metadata):
                    found.append((entry.name, metadata))
                case .failure(let errno):
                    if errno != .notFound {
                        emit(
                            .error(
                                message: "cannot read '\(path.appending(entry.name))': \(errno)",
                                path: path.appending(entry.name)))
                    }
                }
            }
            var subdirectories: [Tree.Index] = []
            var movedHere = 0
            if isScanned && report {
                // Live: an item moved into a folder not watched yet raises no
                // arrival, only a departure from its old name, handled later.
                // Found here, it is the tree's item, moved.
                found.removeAll { entry in
                    guard tree.child(of: directory, named: entry.name) == nil,
                        let source = movedIn(entry.metadata, at: path.appending(entry.name), into: directory)
                    else { return false }
                    move(source, to: directory, name: entry.name)
                    tree.set(source, metadata: entry.metadata)
                    if entry.metadata.kind == .directory {
                        subdirectories.append(source)
                        arrivedFolders.insert(source)
                    }
                    movedHere += 1
                    return true
                }
            }
            let added = add(found, in: directory, at: path, fresh: isFresh && movedHere == 0)
            for (index, (name, metadata)) in zip(added, found) {
                // Already there (reported by an event that came first): same
                // item or not, the event handlers settle it.
                guard let index else { continue }
                if report && metadata.kind == .file && metadata.modified > recent
                    && fileSystem.hasNoWriters(at: path.appending(name)) != true
                {
                    // Changed within the settle time and (as far as the kernel
                    // can tell) still open for writing: perhaps still being
                    // written. A file closed just before the scan is complete;
                    // asking costs a lease only for these few recent files.
                    // (Only for reported items: `finished` follows a report of
                    // `"writing": true`, never an item the consumer was not told of.)
                    tree.set(index, flag: Tree.Flag.writing, true)
                    writes.activity(
                        on: index, at: now.monotonic, closed: true, size: metadata.size,
                        modified: metadata.modified)
                }
                if report { announce(index) }
                if metadata.kind == .directory { subdirectories.append(index) }
            }
            if !isScanned, let scanProgress { scanProgress(tree.count) }
            // In name order: the first subdirectory is listed (and watched) first.
            stack.append(contentsOf: subdirectories.reversed())
        }
    }

    /// Adds the items of one listing (sorted by name) to `directory`, with
    /// new ids; `nil` for a name the tree already has. `fresh`: the directory
    /// had no children, so each item goes at the end.
    ///
    /// Ids derived from identities alone are made with the tree under one
    /// taking of its lock for the whole listing, not one per item: the
    /// initial scan adds a hundred thousand items, and readers still never
    /// wait for more than one folder's items (the listing and the `statx`
    /// calls are done already). Ids kept in an identity attribute are read
    /// from the disk, outside the lock, item by item.
    private mutating func add(
        _ found: [(name: [UInt8], metadata: FileMetadata)], in directory: Tree.Index, at path: ItemPath, fresh: Bool
    ) -> [Tree.Index?] {
        guard options.storesIdentityAttribute else {
            return treeStore.modify { tree in
                found.map { name, metadata in
                    let id = Self.derivedID(for: metadata, in: tree)
                    if fresh { return tree.append(name: name, in: directory, metadata: metadata, id: id) }
                    if tree.child(of: directory, named: name) != nil { return nil }
                    return tree.insert(name: name, in: directory, metadata: metadata, id: id)
                }
            }
        }
        return found.map { name, metadata in
            if !fresh && tree.child(of: directory, named: name) != nil { return nil }
            let id = newID(for: metadata, at: path.appending(name))
            return fresh
                ? tree.append(name: name, in: directory, metadata: metadata, id: id)
                : tree.insert(name: name, in: directory, metadata: metadata, id: id)
        }
    }

    /// The item elsewhere in the tree that the one on disk at `path` is, if
    /// it left its own path (so it moved here; not a second hard link). Found
    /// by the id its identity gives, by its identity among the items whose
    /// id came otherwise (a copy's, one kept across an atomic save), by the
    /// id its identity attribute holds, or among the items the current read
    /// renames away (`departing`). Whether the tree has an item at `path`
    /// is the caller's to weigh.
    func movedIn(_ metadata: FileMetadata, at path: ItemPath, into directory: Tree.Index) -> Tree.Index? {
        var candidates = [ItemID.derived(from: metadata.identity, discriminator: 0)]
        if let index = tree.foreignIndex(of: metadata.identity) { candidates.append(tree.id(of: index)) }
        if options.storesIdentityAttribute, let stored = fileSystem.identityAttribute(at: path) {
            candidates.append(stored)
        }
        // An item whose id is not its identity's (given back by a saved
        // state, or kept through a save that replaced its inode), renamed
        // away in this read into a folder not watched yet.
        let departing = departures.isEmpty ? [] : self.departing
        for index in departing where tree.isLive(index) && tree.identity(of: index) == metadata.identity {
            candidates.append(tree.id(of: index))
        }
        for id in candidates {
            guard let index = tree.index(of: id), tree.identity(of: index) == metadata.identity,
                tree[index].kind == metadata.kind, !tree.isSame(directory, asOrUnder: index)
            else { continue }
            if case .success(let there) = fileSystem.metadata(at: tree.path(of: index)),
                there.identity == metadata.identity
            {
                continue
            }
            // Gone from its path, unless its folder's path leads nowhere
            // now (the folder renamed by a rename not read yet): the path
            // then says nothing, and a hard link made to the file would be
            // taken for the file itself, moved. (An item this read renames
            // away has left, whatever its path, and so has one in a folder
            // it renames away.)
            let parent = tree[index].parent
            if parent != Tree.rootIndex && !departing.contains(where: { tree.isSame(index, asOrUnder: $0) }),
                case .failure = fileSystem.metadata(at: tree.path(of: parent))
            {
                continue
            }
            return index
        }
        return nil
    }

    /// Whether a directory is the root or a mount point (another device than its parent).
    func isFileSystemBoundary(_ directory: Tree.Index) -> Bool {
        let parent = tree[directory].parent
        return parent < 0 || tree[directory].device != tree[parent].device
    }

    /// Lists a directory, sorted by name, after adding its watch (unless it
    /// is polled); `nil` when it cannot be listed, which is reported or, for a
    /// folder moved by a rename not read yet, settled later.
    mutating func listAndWatch(_ directory: Tree.Index, at path: ItemPath) -> [DirectoryEntry]? {
        if usesWatches && !isPolled(directory) && isFileSystemBoundary(directory),
            let kind = fileSystem.eventsUnsupported(at: path)
        {
            degrade(
                directory, path: path, reason: "unsupported-filesystem",
                hint:
                    "\(path.isRoot ? "the root" : "'\(path)'") is on \(kind), where changes made by other machines raise no events; it is polled (use --poll to choose the interval)"
            )
        }
        let listing = fileSystem.listDirectory(at: path, watch: usesWatches && !isPolled(directory))
        if directory != Tree.rootIndex, let listed = listing.listed {
            let known = tree.identity(of: directory)
            if listed.device != known.device || listed.inode != known.inode {
                // Another folder is at the path now: a rename (not read
                // yet) raced the look-up. What was listed and watched is
                // that folder's, not this one's: taking its watch would
                // hand its events to this item. Settled once the rename's
                // events are read and the tree has the folder where the
                // disk has it (`rescanDisplaced`).
                displaced.insert(directory)
                return nil
            }
        }
        record(listing.watch, for: directory, path: path)
        switch listing.entries {
        case .success(let entries):
            return entries.sorted { $0.name.lexicographicallyPrecedes($1.name) }
        case .failure(let errno):
            if errno == .notFound && directory != Tree.rootIndex { displaced.insert(directory) }
            unreadable(directory, path: path, errno: errno)
            return nil
        }
    }

    /// A directory that could not be listed: gone (its parent's events will
    /// say so), unreadable (polled until it can be read), or an error.
    mutating func unreadable(_ directory: Tree.Index, path: ItemPath, errno: Errno) {
        switch errno {
        case .notFound, .notDirectory, .loop:
            break
        case .accessDenied, .permission:
            let (reason, hint) = ObserverCore.degradation(for: errno, path: path)
            degrade(directory, path: path, reason: reason, hint: hint)
        default:
            emit(.error(message: "cannot list '\(path)': \(errno)", path: path))
        }
    }
}
