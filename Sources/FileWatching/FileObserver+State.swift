public import Logging

#if canImport(Glibc)
    import Glibc
#endif

extension FileObserver {
    /// What changed in `root` since `stateFile` was saved, without watching:
    /// the same changes a ``FileObserver`` with that state file reports before
    /// `scan-completed` (renamed and moved items keep their ids), then the
    /// new state is saved (unless `saving` is false).
    ///
    /// Without a state file yet, or with one that cannot be used (damaged,
    /// from another folder: said in an `error` change first), every item is
    /// reported as added.
    /// - Throws: ``FileWatchingError`` for a bad root, or when the new state cannot be written.
    public static func changesSinceSavedState(
        root: String, stateFile: String, options: ObserverOptions = ObserverOptions(), saving: Bool = true,
        logger: Logger
    ) throws(FileWatchingError) -> [Change] {
        var options = options
        options.stateFile = stateFile
        options.pollingInterval = nil
        var (core, rootIdentity) = try makeCore(
            root: root, options: options, inotifyFD: nil, usesWatches: false, logger: logger)
        core.scan(at: .now())
        let changes = core.takeBatch(force: true)
        if saving, let bytes = core.encodedState(rootIdentity: rootIdentity) {
            try AtomicFile.write(bytes, to: stateFile)
        }
        return changes
    }

    /// The items with `ids` as the state `stateFile` holds them for `root`
    /// (where an observer started from it has them before its first scan),
    /// or `nil` when there is no usable state. A server that takes over a
    /// folder compares them with its log (see `fileshare serve --database`).
    /// - Throws: ``FileWatchingError`` for a bad root.
    public static func savedItems(
        _ ids: Set<ItemID>, root: String, stateFile: String, options: ObserverOptions = ObserverOptions(),
        logger: Logger
    ) throws(FileWatchingError) -> [ItemID: Item]? {
        var options = options
        options.stateFile = stateFile
        options.pollingInterval = nil
        let (core, _) = try makeCore(root: root, options: options, inotifyFD: nil, usesWatches: false, logger: logger)
        guard case .restored = core.start else { return nil }
        var items: [ItemID: Item] = [:]
        for id in ids {
            guard let index = core.tree.index(of: id), index != Tree.rootIndex, !core.tree.isInFlight(index) else {
                continue
            }
            items[id] = core.tree.item(at: index)
        }
        return items
    }

    /// The state file's path relative to `root`, when it lies inside it (so
    /// the observer leaves it, and its temporary files, out).
    static func statePathInside(root: String, stateFile: String) -> String? {
        let name = stateFile.split(separator: "/").last.map(String.init) ?? stateFile
        let folder = stateFile.contains("/") ? String(stateFile[..<stateFile.lastIndex(of: "/")!]) : "."
        guard let resolved = realpath(folder.isEmpty ? "/" : folder, nil) else { return nil }
        defer { free(resolved) }
        let absolute = String(cString: resolved)
        if absolute == root { return name }
        guard absolute.hasPrefix(root + "/") else { return nil }
        return String(absolute.dropFirst(root.count + 1)) + "/" + name
    }
}
