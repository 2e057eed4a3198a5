import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The observer's tree, shared between its one writer (the core, on the
/// monitor thread) and any number of readers (``FileObserver/children(of:)``,
/// ``FileObserver/item(at:)`` and the other queries, on any thread).
///
/// The lock covers each change of the tree and each reader's look, nothing
/// more: the core reads the disk (listings, `statx`, content comparisons)
/// without it, so a long scan, a rescan or a duplicate check never makes a
/// reader wait longer than one change of the tree. The core is the only
/// writer, so its own reads need no lock: nothing changes the tree under it.
///
/// Readers see the tree between any two of its changes, which may be ahead
/// of the changes delivered: a rescan shows its findings as it goes, and
/// drops what is gone at its end.
///
/// Not a copy-on-write snapshot on purpose: a published copy would double the
/// tree's memory as soon as the writer changes it, and copy it whole for each
/// batch of events.
final class TreeStore: @unchecked Sendable {
    /// Changed only by the one writer, under the lock (`tree`'s `_modify`);
    /// read by that writer without the lock and by readers with it. No read
    /// ever overlaps a change, so the accesses need no dynamic exclusivity
    /// check (which would also cost the scan a check per access).
    @exclusivity(unchecked) private var storage: Tree
    private let lock = Mutex<Void>(())
    /// Readers waiting for the lock. The writer takes the lock up to a
    /// hundred thousand times a second during a scan; the mutex is not fair,
    /// so a woken reader would find it taken again, and again: the writer
    /// lets waiting readers go first.
    private let waitingReaders = Atomic<Int>(0)
    /// Counts the writer's changes (each `_modify` or `modify`, whether or
    /// not it changed anything): two equal readings mean the tree did not
    /// change in between. Written under the lock, read by anyone.
    private let changes = Atomic<UInt64>(0)

    init(_ tree: Tree) { storage = tree }

    /// The writer's view of the tree (the core's `tree`): reads without the
    /// lock, changes under it. Only the monitor thread (or a test owning the
    /// core) may use it.
    var tree: Tree {
        _read { yield storage }
        _modify {
            // A coroutine cannot yield inside `withLock`'s closure: the lock is
            // taken and released around the one change by hand.
            while waitingReaders.load(ordering: .relaxed) > 0 { sched_yield() }
            lock._unsafeLock()
            defer {
                changes.add(1, ordering: .releasing)
                lock._unsafeUnlock()
            }
            yield &storage
        }
    }

    /// The number of the tree's changes so far (see ``FileObserver/treeVersion``).
    var version: UInt64 { changes.load(ordering: .acquiring) }

    /// Makes a group of changes under one taking of the lock: the items of
    /// one folder's listing, during a scan that adds a hundred thousand.
    /// `body` must do no disk work: readers wait for it.
    func modify<Result>(_ body: (inout Tree) -> Result) -> Result {
        while waitingReaders.load(ordering: .relaxed) > 0 { sched_yield() }
        lock._unsafeLock()
        defer {
            changes.add(1, ordering: .releasing)
            lock._unsafeUnlock()
        }
        return body(&storage)
    }

    /// Runs `body` on the tree as it is now, from any thread. `body` must not
    /// keep the tree or do slow work: the writer waits for it.
    func read<Result>(_ body: (borrowing Tree) -> Result) -> Result {
        waitingReaders.add(1, ordering: .relaxed)
        lock._unsafeLock()
        waitingReaders.subtract(1, ordering: .relaxed)
        defer { lock._unsafeUnlock() }
        return body(storage)
    }
}
