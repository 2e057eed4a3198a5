import CFileshareShim
import Logging
import Synchronization

/// The observer's shared state and its monitor loop: one thread that waits
/// in `poll` on the inotify descriptor and an eventfd (to stop it or ask for
/// a barrier), feeds the core, and delivers batches to subscribers.
///
/// What may block is kept off the monitor thread: callbacks and state-file
/// writes run in order on the delivery thread (``DeliveryQueue``), and the
/// queries read the tree through ``TreeStore``, whose lock the core holds
/// only while it changes the tree, never while it reads the disk.
final class ObserverState: Sendable {
    enum Subscriber: Sendable {
        /// Yielded to on the monitor thread (a yield never blocks).
        case stream(AsyncStream<[Change]>.Continuation)
        /// Called on the delivery thread.
        case callback(Callback)
        /// Called on the monitor thread, in step with the tree: when it runs,
        /// the tree is exactly what the batch leads to. For in-memory work
        /// that never blocks (``FolderList``).
        case inStep(@Sendable ([Change]) -> Void)
    }

    /// A callback subscription; cancelled ones are skipped even for batches
    /// queued before the cancellation.
    final class Callback: Sendable {
        let handler: @Sendable ([Change]) -> Void
        let isCancelled = Atomic<Bool>(false)
        init(_ handler: @escaping @Sendable ([Change]) -> Void) { self.handler = handler }
    }

    struct Control {
        var started = false
        var stopRequested = false
        var stopped = false
        /// Stopped, and the last callbacks have run.
        var finished = false
        var rootRemoved = false
        var syncWaiters: [CheckedContinuation<Void, Never>] = []
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var subscribers: [UInt64: Subscriber] = [:]
        var nextKey: UInt64 = 0
    }

    /// The core, used by the monitor thread alone: the mutex hands it over
    /// to that thread (and lets a test hold the monitor still). Queries never
    /// take it; they read `tree`.
    let core: Mutex<ObserverCore<LinuxFileSystem>>
    /// The core's tree, for the queries.
    let tree: TreeStore
    private let delivery: DeliveryQueue
    /// Items found so far by the initial scan, and whether it is done.
    let scan = ScanCounter()
    private let control = Mutex(Control())
    /// The monitor's event source, handed to the thread at start.
    private let source: Mutex<(any EventSource)?>
    private let wakeFD: Int32
    private let rootIdentity: FileIdentity
    private let rootPath: String
    private let logger: Logger
    private let usesWatches: Bool
    /// Where the state is saved, if anywhere.
    private let stateFile: String?
    private let saveFailureReported = Atomic<Bool>(false)
    /// Why the last write of the state file failed, for the monitor to report.
    private let saveFailure = Mutex<String?>(nil)

    init(
        core: consuming sending ObserverCore<LinuxFileSystem>, source: sending (any EventSource)?,
        rootIdentity: FileIdentity, logger: Logger
    ) throws(FileWatchingError) {
        let fd = cfs_eventfd()
        if fd < 0 {
            throw FileWatchingError(code: .io, message: "eventfd failed: \(Errno(rawValue: -fd))")
        }
        self.wakeFD = fd
        self.rootPath = core.rootDescription
        self.usesWatches = source != nil
        self.stateFile = core.options.stateFile
        let scan = self.scan
        core.scanProgress = { count in scan.items.store(count, ordering: .relaxed) }
        self.tree = core.treeStore
        self.core = Mutex(core)
        self.delivery = DeliveryQueue(logger: logger)
        self.source = Mutex(source)
        self.rootIdentity = rootIdentity
        self.logger = logger
    }

    deinit { _ = cfs_close(wakeFD) }

    // MARK: Control

    func start() throws(FileWatchingError) {
        let alreadyStarted = control.withLock { control in
            defer { control.started = true }
            return control.started
        }
        if alreadyStarted {
            throw FileWatchingError(code: .invalidArgument, message: "the observer was already started")
        }
        let source = self.source.withLock { source in
            defer { source = nil }
            return source
        }
        let box = SourceBox(source)
        try delivery.start()
        do {
            try startDetachedThread { [self] in self.run(source: box.source) }
        } catch {
            delivery.stop()
            throw error
        }
    }

    func requestStop() {
        control.withLock { $0.stopRequested = true }
        _ = cfs_eventfd_signal(wakeFD)
    }

    func sync() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = control.withLock { control in
                guard control.started && !control.stopped else { return false }
                control.syncWaiters.append(continuation)
                return true
            }
            if accepted { _ = cfs_eventfd_signal(wakeFD) } else { continuation.resume() }
        }
    }

    func waitUntilStopped() async throws(FileWatchingError) {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = control.withLock { control in
                guard !control.finished else { return false }
                control.stopWaiters.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
        if control.withLock({ $0.rootRemoved }) {
            throw FileWatchingError(
                code: .rootRemoved, message: "\(rootPath): the watched folder was removed or moved away",
                path: rootPath)
        }
    }

    @discardableResult
    func subscribe(_ subscriber: Subscriber) -> UInt64 {
        let (key, finished) = control.withLock { control in
            control.nextKey += 1
            if control.stopped { return (control.nextKey, true) }
            control.subscribers[control.nextKey] = subscriber
            return (control.nextKey, false)
        }
        if case .stream(let continuation) = subscriber {
            if finished {
                continuation.finish()
            } else {
                continuation.onTermination = { [weak self] _ in self?.unsubscribe(key) }
            }
        }
        return key
    }

    var subscriberCount: Int { control.withLock { $0.subscribers.count } }

    func unsubscribe(_ key: UInt64) {
        let removed = control.withLock { $0.subscribers.removeValue(forKey: key) }
        if case .callback(let callback)? = removed { callback.isCancelled.store(true, ordering: .relaxed) }
    }

    /// Hands a batch to every subscriber: streams and in-step handlers now,
    /// callbacks through the delivery queue.
    private func deliver(_ batch: [Change]) {
        guard !batch.isEmpty else { return }
        let subscribers = control.withLock { $0.subscribers.sorted { $0.key < $1.key }.map(\.value) }
        var callbacks: [Callback] = []
        for subscriber in subscribers {
            switch subscriber {
            case .stream(let continuation): continuation.yield(batch)
            case .inStep(let handler): handler(batch)
            case .callback(let callback): callbacks.append(callback)
            }
        }
        guard !callbacks.isEmpty else { return }
        delivery.enqueue(changes: batch.count) { [callbacks] in
            for callback in callbacks where !callback.isCancelled.load(ordering: .relaxed) { callback.handler(batch) }
        }
    }

    /// Resumes waiters once everything delivered before has reached the callbacks.
    private func resume(_ waiters: [CheckedContinuation<Void, Never>]) {
        guard !waiters.isEmpty else { return }
        delivery.enqueue { for waiter in waiters { waiter.resume() } }
    }

    // MARK: The monitor loop

    private func run(source: (any EventSource)?) {
        let scanBatch = core.withLock { core in
            core.scan(at: .now())
            return core.takeBatch(force: true)
        }
        self.scan.completed.store(true, ordering: .releasing)
        // The scan's listings are freed; give their pages back.
        cfs_release_free_memory()
        if case .scanCompleted(_, let items, let elapsed)? = scanBatch.last {
            logger.debug("scan completed", metadata: ["items": "\(items)", "elapsed_ms": "\(elapsed)"])
        }
        deliver(scanBatch)

        var nextRootCheck = monotonicNanoseconds() + 1_000_000_000
        var events: [SourceEvent] = []
        var pairing = MovePairing(wait: core.withLock { $0.options.movePairingWait })
        // The state is saved after the scan, at most every two seconds while
        // changes come, and when the observer stops.
        var unsaved = stateFile != nil && !saveState()
        var nextSave = monotonicNanoseconds() + ObserverState.saveInterval
        while true {
            let now = monotonicNanoseconds()
            var deadline = core.withLock { $0.nextDeadline } ?? .max
            deadline = min(deadline, nextRootCheck)
            if unsaved { deadline = min(deadline, nextSave) }
            if let carried = pairing.deadline { deadline = min(deadline, carried) }
            let timeout = deadline <= now ? 0 : Int32(min((deadline - now + 999_999) / 1_000_000, 60_000))
            let ready = cfs_poll2(wakeFD, source?.descriptor ?? -1, timeout)
            if ready & 1 != 0 { _ = cfs_eventfd_drain(wakeFD) }
            let (stop, syncs) = control.withLock { control in
                defer { control.syncWaiters.removeAll() }
                return (control.stopRequested, control.syncWaiters)
            }
            if reportSaveFailure() { unsaved = true }
            if stop {
                // What is held back is delivered, so the saved state is exactly
                // what the consumers were told.
                let carried = pairing.take([], now: monotonicNanoseconds(), flush: true)
                deliver(
                    core.withLock { core in
                        if !carried.isEmpty { core.handle(carried, at: .now()) }
                        return core.takeBatch(force: true)
                    })
                if stateFile != nil && saveState() {
                    // The last write is waited for, so a failure is still said.
                    delivery.drain()
                    _ = reportSaveFailure()
                }
                finish(rootRemoved: false, resuming: syncs)
                return
            }
            events.removeAll(keepingCapacity: true)
            if let source, ready & 2 != 0 || !syncs.isEmpty {
                Self.readAll(source, into: &events)
            }
            var time = Timestamp.now()
            if let source, syncs.isEmpty, pairing.isDue(events, now: time.monotonic) {
                // The wait is over. A rename held up longer still holds its
                // directories' locks: wait for it, and read what it queued.
                core.withLock { $0.awaitRenames(reported: pairing.carried + events) }
                Self.readAll(source, into: &events)
                time = Timestamp.now()
            }
            // A rename's second half not read yet: its first waits for it
            // (a sync takes everything: what it covers is queued whole).
            events = pairing.take(events, now: time.monotonic, flush: !syncs.isEmpty)
            let checkRoot = time.monotonic >= nextRootCheck
            if checkRoot { nextRootCheck = time.monotonic + 1_000_000_000 }
            let held = pairing.carried
            let carrying = !held.isEmpty
            let queue = source?.descriptor ?? -1
            // A sync settles every name its read could not: what it covers
            // is read whole, and its caller looks at the tree next.
            let syncing = !syncs.isEmpty
            let (batch, rootRemoved) = core.withLock { core in
                if !events.isEmpty {
                    // More is queued when a rename's half is held back or the
                    // kernel's queue is readable (asked without reading it).
                    core.handle(events, at: time, held: held) {
                        !syncing && (carrying || (queue >= 0 && cfs_poll2(queue, -1, 0) & 1 != 0))
                    }
                } else if syncing {
                    core.now = time
                    core.settleNames()
                }
                // A sync covers polled subtrees too (the whole tree without
                // inotify, or a subtree degraded by the watch limit).
                if !syncs.isEmpty && !core.polledRoots.isEmpty {
                    core.now = time
                    core.poll()
                }
                core.tick(at: time)
                if checkRoot && !rootIsInPlace() { core.rootGone() }
                return (core.takeBatch(force: !syncs.isEmpty || core.isRootRemoved), core.isRootRemoved)
            }
            for change in batch {
                switch change {
                case .rescanned(let path, let reason):
                    logger.warning("rescanned after lost events", metadata: ["path": "\(path)", "reason": "\(reason)"])
                case .degraded(let path, let reason, _):
                    logger.warning("subtree polled", metadata: ["path": "\(path)", "reason": "\(reason)"])
                default: break
                }
            }
            deliver(batch)
            if stateFile != nil && !rootRemoved {
                if !batch.isEmpty { unsaved = true }
                if unsaved && time.monotonic >= nextSave {
                    unsaved = !saveState()
                    nextSave = time.monotonic + ObserverState.saveInterval
                }
            }
            resume(syncs)
            if rootRemoved {
                logger.notice("the watched root was removed", metadata: ["root": "\(rootPath)"])
                finish(rootRemoved: true, resuming: [])
                return
            }
        }
    }

    static let saveInterval: Int64 = 2_000_000_000

    /// Encodes the state when the tree matches what was delivered, and queues
    /// its write behind the callbacks of those changes (the write flushes to
    /// disk: off the monitor thread; and a consumer told of a change before
    /// the state that includes it is on disk misses nothing after a crash).
    /// Returns whether a write was queued; a failed one is reported by
    /// `reportSaveFailure`.
    private func saveState() -> Bool {
        guard let stateFile, let bytes = core.withLock({ $0.encodedState(rootIdentity: rootIdentity) }) else {
            return false
        }
        let (beforeSaving, mayWrite) = core.withLock { ($0.options.beforeSavingState, $0.options.mayWriteState) }
        delivery.enqueue { [self] in
            beforeSaving?()
            if let mayWrite, !mayWrite() { return }
            do throws(FileWatchingError) {
                try AtomicFile.write(bytes, to: stateFile)
                saveFailureReported.store(false, ordering: .relaxed)
            } catch {
                logger.error("cannot save the state", metadata: ["state": "\(stateFile)", "error": "\(error.message)"])
                saveFailure.withLock { $0 = error.message }
                _ = cfs_eventfd_signal(wakeFD)
            }
        }
        return true
    }

    /// Says a failed write of the state once, as an `error` change; returns
    /// whether one failed since the last call (the state is then saved again later).
    private func reportSaveFailure() -> Bool {
        guard
            let message = saveFailure.withLock({ failure in
                defer { failure = nil }; return failure
            })
        else {
            return false
        }
        if !saveFailureReported.exchange(true, ordering: .relaxed) {
            deliver([.error(message: "cannot save the state: \(message)", path: nil)])
        }
        return true
    }

    /// Reads every queued event (a rename split across two reads is joined
    /// by ``MovePairing``).
    private static func readAll(_ source: any EventSource, into events: inout [SourceEvent]) {
        while source.readAvailable(into: &events) > 0 && events.count < 1_000_000 {}
    }

    /// Whether the root path still leads to the watched directory (its
    /// parent may have been renamed, which inotify does not report).
    private func rootIsInPlace() -> Bool {
        var raw = cfs_stat()
        guard cfs_lstat_at(-100, rootPath, &raw) == 0 else { return false }  // AT_FDCWD
        return raw.dev == rootIdentity.device && raw.ino == rootIdentity.inode
    }

    private func finish(rootRemoved: Bool, resuming syncs: [CheckedContinuation<Void, Never>]) {
        let (subscribers, waiters) = control.withLock { control in
            control.stopped = true
            control.rootRemoved = rootRemoved
            defer {
                control.subscribers.removeAll()
                control.syncWaiters.removeAll()
            }
            return (Array(control.subscribers.values), control.syncWaiters)
        }
        for subscriber in subscribers {
            if case .stream(let continuation) = subscriber { continuation.finish() }
        }
        // The waiters resume after the last callbacks and the last write of the state.
        resume(syncs + waiters)
        delivery.enqueue { [self] in
            let stopWaiters = control.withLock { control in
                control.finished = true
                defer { control.stopWaiters.removeAll() }
                return control.stopWaiters
            }
            for waiter in stopWaiters { waiter.resume() }
        }
        delivery.stop()
    }
}

/// Carries the non-`Sendable` event source into the monitor thread, its only user.
private final class SourceBox: @unchecked Sendable {
    let source: (any EventSource)?
    init(_ source: (any EventSource)?) { self.source = source }
}

/// The initial scan's progress, readable from any thread.
final class ScanCounter: Sendable {
    let items = Atomic<Int>(0)
    let completed = Atomic<Bool>(false)
}
