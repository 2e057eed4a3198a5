import CFileshareShim
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches a folder tree and reports what changed, in the terms of `events.md`.
///
/// ```swift
/// let observer = try FileObserver(root: "Documents", logger: logger)
/// let changes = observer.changes()
/// try observer.start()
/// for await batch in changes {
///     for change in batch { print(change.jsonLine) }
/// }
/// ```
///
/// Changes arrive in ordered batches, once per latency window; several
/// consumers may subscribe, as async sequences (``changes(bufferingPolicy:)``)
/// or callbacks (``observe(_:)``). The current tree can be queried at any
/// time (``item(at:)``, ``item(id:)``, ``children(of:)``), and ``sync()``
/// waits until every change made before the call has been delivered.
public final class FileObserver: Sendable {
    /// The absolute path of the watched root, with symbolic links resolved.
    public let root: String
    /// The options the observer was made with.
    public let options: ObserverOptions
    let state: ObserverState

    /// Opens the root. Nothing is watched until ``start()``.
    ///
    /// - Parameters:
    ///   - root: The folder to watch (relative to the current directory or absolute).
    ///   - options: What to report, and how.
    ///   - logger: Where the observer logs; it never makes a logger of its own.
    /// - Throws: ``FileWatchingError`` when the root is missing, not a
    ///   folder, or unreadable, or when the kernel refuses an inotify instance.
    public init(root: String, options: ObserverOptions = ObserverOptions(), logger: Logger) throws(FileWatchingError) {
        // Without an inotify instance to be had (the per-user limit), the whole
        // tree is polled, and the first events say so.
        var reader: InotifyReader? = nil
        var fallback: (reason: String, hint: String)? = nil
        if options.pollingInterval == nil {
            do {
                reader = try InotifyReader()
            } catch  where error.code == .watchLimit {
                fallback = ("watch-limit", error.message + "; the tree is polled until then")
            }
        }
        var (core, rootIdentity) = try FileObserver.makeCore(
            root: root, options: options, inotifyFD: reader?.fd, usesWatches: reader != nil, logger: logger)
        core.rootDegradation = fallback
        self.root = core.rootDescription
        self.options = options
        self.state = try ObserverState(core: core, source: reader, rootIdentity: rootIdentity, logger: logger)
    }

    /// Opens the root, checks the options, and restores the saved state if
    /// there is one (an unusable one is said in the first events, never used).
    static func makeCore(root: String, options: ObserverOptions, inotifyFD: Int32?, usesWatches: Bool, logger: Logger)
        throws(FileWatchingError) -> (ObserverCore<LinuxFileSystem>, FileIdentity)
    {
        guard let resolved = FileObserver.resolve(root) else {
            let errno = Errno(rawValue: Glibc.errno)
            throw LinuxFileSystem.rootError(errno, path: root)
        }
        for pattern in options.excludedNames where pattern.isEmpty {
            throw FileWatchingError(
                code: .invalidArgument, message: "an empty exclusion glob matches nothing; remove it")
        }
        if options.stateFile != nil && options.reportsInitialItems {
            throw FileWatchingError(
                code: .invalidArgument,
                message: "a saved state and reporting every item cannot be combined; drop one of them")
        }
        var options = options
        if let stateFile = options.stateFile, let inside = statePathInside(root: resolved, stateFile: stateFile) {
            // The state file itself is not the user's: leave it out.
            options.excludedNames += ["/" + inside, "/" + inside + ".tmp-*"]
        }
        let fileSystem = try LinuxFileSystem(rootPath: resolved, inotifyFD: inotifyFD)
        let rootMetadata: FileMetadata
        switch fileSystem.rootMetadata() {
        case .success(let metadata): rootMetadata = metadata
        case .failure(let errno): throw LinuxFileSystem.rootError(errno, path: root)
        }
        guard rootMetadata.kind == .directory else {
            throw LinuxFileSystem.rootError(.notDirectory, path: root)
        }
        var core = ObserverCore(
            fileSystem: fileSystem, root: rootMetadata, rootDescription: resolved, options: options,
            usesWatches: usesWatches)
        if let stateFile = options.stateFile {
            if let bytes = try AtomicFile.read(stateFile) {
                do {
                    core.restore(try StateFile.decode(bytes, root: resolved, rootIdentity: rootMetadata.identity))
                } catch {
                    let message = "\(stateFile): \(error); starting afresh, with every item reported as added"
                    logger.warning("unusable state file", metadata: ["state": "\(stateFile)", "reason": "\(error)"])
                    core.start = .empty(message: message)
                }
            } else {
                core.start = .empty(message: nil)
            }
        }
        return (core, rootMetadata.identity)
    }

    deinit { state.requestStop() }

    private static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path.isEmpty ? "." : path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Starts watching: the initial scan runs on the observer's own thread,
    /// and its changes (`scan-started` … `scan-completed`) are the first
    /// delivered. Subscribe before starting to see them.
    /// - Throws: ``FileWatchingError`` when the observer was started before.
    public func start() throws(FileWatchingError) {
        try state.start()
    }

    /// Stops watching; every change sequence ends. Calling it again does nothing.
    public func stop() { state.requestStop() }

    /// Waits until every change made to the file system before the call has
    /// been delivered to every subscriber (a barrier, like watchman's
    /// cookies, but with no file written: inotify queues an event before the
    /// system call that caused it returns, so reading the queue dry is enough).
    /// Returns at once when the observer is not running.
    public func sync() async { await state.sync() }

    /// The observer's changes, as an asynchronous sequence of ordered batches.
    /// - Parameter bufferingPolicy: What to keep when the consumer falls
    ///   behind. The default keeps everything: dropping a batch would break
    ///   the replay rule.
    public func changes(
        bufferingPolicy: AsyncStream<[Change]>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<[Change]> {
        let (stream, continuation) = AsyncStream<[Change]>.makeStream(bufferingPolicy: bufferingPolicy)
        state.subscribe(.stream(continuation))
        return stream
    }

    /// Calls `handler` with every batch of changes until the returned token
    /// is cancelled or released.
    ///
    /// Handlers run one batch at a time, in order, on a delivery thread of
    /// the observer's own, never on the thread that reads the kernel's
    /// events: a handler may block (print, write to a socket) without
    /// holding up the observer. Nothing is dropped while a handler falls
    /// behind: the batches wait in memory (and a warning is logged past
    /// 100,000 waiting changes). When a handler runs, the observer's tree
    /// (``children(of:)``) may already be ahead of its batch.
    public func observe(_ handler: @escaping @Sendable ([Change]) -> Void) -> ObservationToken {
        let key = state.subscribe(.callback(ObserverState.Callback(handler)))
        return ObservationToken(state: state, key: key)
    }

    /// Calls `handler` with every batch on the monitor thread, when the tree
    /// is exactly what the batch leads to; `handler` must only do in-memory
    /// work (as ``FolderList`` does).
    func observeInStep(_ handler: @escaping @Sendable ([Change]) -> Void) -> ObservationToken {
        ObservationToken(state: state, key: state.subscribe(.inStep(handler)))
    }

    // The queries below take the tree's lock only for their own look at it:
    // the observer never holds it while it reads the disk, so a scan or a
    // rescan does not hold them up.

    /// The item at a root-relative path, as the observer knows it now.
    public func item(at path: ItemPath) -> Item? {
        state.tree.read { tree in
            tree.index(at: path).flatMap { $0 == Tree.rootIndex ? nil : tree.item(at: $0) }
        }
    }

    /// Gives the item the observer knows by `given` the id `id`, which no
    /// item has: for a consumer that knows the item by `id` from before
    /// (a server taking over a folder finds a document saved anew that the
    /// saved state did not hold, and keeps the id its log gave it). Changes
    /// not delivered yet carry `id`; those delivered carried `given`.
    /// Returns whether it did (not when `id` is taken or `given` unknown).
    @discardableResult
    public func adoptID(_ id: ItemID, for given: ItemID) -> Bool {
        state.core.withLock { $0.adoptID(id, for: given) }
    }

    /// The item with this id, as the observer knows it now.
    public func item(id: ItemID) -> Item? {
        state.tree.read { tree in
            tree.index(of: id).flatMap { $0 == Tree.rootIndex || tree.isInFlight($0) ? nil : tree.item(at: $0) }
        }
    }

    /// The items directly inside a folder (the root is ``ItemPath/root``),
    /// sorted by name bytes; `nil` when there is no such folder.
    public func children(of path: ItemPath) -> [Item]? {
        state.tree.read { tree in
            guard let index = tree.index(at: path), tree[index].kind == .directory else { return nil }
            return tree.childIndices(of: index).compactMap { tree.hasInFlightName($0) ? nil : tree.item(at: $0) }
        }
    }

    /// How far the initial scan has come: the items found so far, and whether
    /// it is complete (for a progress display on long scans).
    public var scanProgress: (items: Int, isComplete: Bool) {
        (state.scan.items.load(ordering: .relaxed), state.scan.completed.load(ordering: .acquiring))
    }

    /// A number that changes whenever the observer's tree does: what a
    /// query answered is still the answer while it reads the same (read it
    /// before the query; an answer kept under it is then never older than it).
    /// For caches of what is made from the tree, such as a large folder's
    /// listing.
    public var treeVersion: UInt64 { state.tree.version }

    /// The number of items under the root.
    public var itemCount: Int { state.tree.read { $0.count } }

    /// Waits until the observer stops; throws when it stopped because the
    /// root was removed or moved away.
    public func waitUntilStopped() async throws(FileWatchingError) {
        try await state.waitUntilStopped()
    }
}

/// Keeps a callback subscription alive; cancelling or releasing it ends it.
public final class ObservationToken: Sendable {
    let state: ObserverState
    private let key: UInt64

    init(state: ObserverState, key: UInt64) {
        self.state = state
        self.key = key
    }

    /// Ends the subscription.
    public func cancel() { state.unsubscribe(key) }

    deinit { state.unsubscribe(key) }
}
