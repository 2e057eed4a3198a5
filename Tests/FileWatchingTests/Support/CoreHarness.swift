@testable import FileWatching

/// Drives the observer's logic against a ``FakeFileSystem`` with a manual clock.
struct CoreHarness {
    let fs: FakeFileSystem
    var core: ObserverCore<FakeFileSystem>
    /// Monotonic time, nanoseconds.
    var clock: Int64 = 1_000_000_000
    /// Everything delivered so far, in order.
    var delivered: [Change] = []
    private var seen = 0
    /// When set, reads go through the rename pairing as the observer's
    /// thread does (an unpaired `movedFrom` waits for its partner across
    /// reads); otherwise every read is handled at once.
    var pairing: MovePairing?

    init(
        options: ObserverOptions = ObserverOptions(settleTime: .seconds(1), latency: .zero),
        setUp: (FakeFileSystem) -> Void = { _ in }
    ) {
        let fs = FakeFileSystem()
        setUp(fs)
        // What was set up is old: not taken for something still being written.
        fs.wall += 3_600_000_000_000
        self.fs = fs
        core = ObserverCore(
            fileSystem: fs, root: fs.metadata(of: 1), rootDescription: "/fake", options: options,
            usesWatches: options.pollingInterval == nil)
    }

    var now: Timestamp { Timestamp(monotonic: clock, wall: fs.wall) }

    mutating func start() {
        _ = fs.takeEvents()
        core.scan(at: now)
        delivered += core.takeBatch(force: true)
        seen = delivered.count
    }

    /// Stops the observer with its state saved, lets `offline` change the
    /// disk, and starts a new observer from the saved state.
    mutating func restart(offline: (FakeFileSystem) -> Void) {
        process(force: true)
        let identity = fs.metadata(of: 1).identity
        let bytes = core.encodedState(rootIdentity: identity)!
        fs.dropAllWatches()
        if let pairing { self.pairing = MovePairing(wait: .nanoseconds(pairing.wait)) }
        offline(fs)
        fs.wall += 5_000_000_000
        clock += 5_000_000_000
        core = ObserverCore(
            fileSystem: fs, root: fs.metadata(of: 1), rootDescription: "/fake", options: core.options,
            usesWatches: core.usesWatches)
        core.restore(try! StateFile.decode(bytes, root: "/fake", rootIdentity: identity))
        _ = fs.takeEvents()
        core.scan(at: now)
        delivered += core.takeBatch(force: true)
    }

    /// Hands the queued events to the core (at most `limit` of them, as a
    /// read with a small buffer), then ticks. With ``pairing``, what the
    /// pairing holds back waits, unless `force` asks for everything (a
    /// sync, a stop); once its wait is over, the renames still reporting
    /// are waited for and the queue read again, as the observer's thread does.
    mutating func process(force: Bool = false, atMost limit: Int? = nil) {
        var events = fs.takeEvents(atMost: limit)
        if var pairing {
            if !force, pairing.isDue(events, now: clock) {
                core.awaitRenames(reported: pairing.carried + events)
                events += fs.takeEvents(atMost: limit)
            }
            events = pairing.take(events, now: clock, flush: force)
            self.pairing = pairing
        }
        if !events.isEmpty {
            let fs = fs
            let held = pairing?.carried ?? []
            core.handle(events, at: now, held: held) { !held.isEmpty || !fs.queue.isEmpty }
        } else if force {
            core.now = now
            core.settleNames()
        }
        core.tick(at: now)
        delivered += core.takeBatch(force: force)
    }

    /// Catches up with the disk as `sync()` does: reads the queue, polls
    /// the polled subtrees now, and delivers everything pending.
    mutating func catchUp() {
        process(force: pairing != nil)
        if !core.polledRoots.isEmpty { core.poll() }
        process(force: true)
    }

    /// Lets time pass, ticking at each deadline on the way.
    mutating func advance(by duration: Duration) {
        let end = clock + duration.nanoseconds
        while true {
            process()
            let deadline = min(core.nextDeadline ?? .max, pairing?.deadline ?? .max)
            guard deadline <= end else { break }
            let step = max(deadline, clock + 1) - clock
            clock += step
            fs.wall += step
        }
        let rest = end - clock
        if rest > 0 {
            clock = end
            fs.wall += rest
        }
        process()
    }

    /// What was delivered since the last call.
    mutating func newChanges() -> [Change] {
        defer { seen = delivered.count }
        return Array(delivered[seen...])
    }

    /// The delivered changes after `scan-completed`.
    var liveChanges: [Change] {
        guard let index = delivered.firstIndex(where: { if case .scanCompleted = $0 { true } else { false } }) else {
            return []
        }
        return Array(delivered[(index + 1)...])
    }

    /// The tree's paths and kinds.
    var treeSnapshot: [ItemPath: ItemKind] {
        var result: [ItemPath: ItemKind] = [:]
        core.tree.walk(from: Tree.rootIndex) { index in
            if index != Tree.rootIndex { result[core.tree.path(of: index)] = core.tree[index].kind }
        }
        return result
    }

    /// The tree's ids by path.
    var treeIDs: [ItemPath: ItemID] {
        var result: [ItemPath: ItemID] = [:]
        core.tree.walk(from: Tree.rootIndex) { index in
            if index != Tree.rootIndex { result[core.tree.path(of: index)] = core.tree.id(of: index) }
        }
        return result
    }
}

extension Change {
    /// The change without ids, sizes and times, for readable expectations.
    var summary: String {
        switch self {
        case .added(let item):
            "added \(item.path)\(item.kind == .directory ? "/" : "")\(item.isWriting ? " writing" : "")"
        case .modified(let item): "modified \(item.path)\(item.isWriting ? " writing" : "")"
        case .finished(let path, _, let size): "finished \(path) \(size)"
        case .removed(let path, _, _): "removed \(path)"
        case .renamed(let from, let to, _, _): "renamed \(from) \(to)"
        case .moved(let from, let to, _, _): "moved \(from) \(to)"
        case .duplicated(let item, let source): "duplicated \(item.path) \(source)"
        case .rescanned(let path, let reason): "rescanned \(path) \(reason)"
        case .degraded(let path, let reason, _): "degraded \(path) \(reason)"
        case .error(let message, _): "error \(message)"
        case .rootRemoved: "root-removed"
        case .scanStarted: "scan-started"
        case .scanCompleted(_, let items, _): "scan-completed \(items)"
        }
    }
}
