import Synchronization

/// The locks of a server on its own: a ``DAVLockTable`` in this process,
/// behind a lock, on the monotonic clock, kept in the share's private folder
/// too (a journal, see `FileLockStore+Journal`) so a restart keeps them.
final class FileLockStore: DAVLockStore {
    /// The table and the journal that keeps it, changed together.
    private struct State {
        var table: DAVLockTable
        var journal: Journal?
    }

    private let state: Mutex<State>
    /// Monotonic nanoseconds.
    let now: @Sendable () -> Int64
    /// Seconds since the epoch.
    let wallNow: @Sendable () -> Int64
    /// Where the locks are kept, if anywhere.
    let persistencePath: String?

    /// Reads the kept locks from `persistencePath`, if given, and rewrites
    /// the file with those (a line torn by a crash is gone then).
    init(
        persistencePath: String? = nil, capacity: Int = DAVLockTable.defaultCapacity,
        capacityPerUser: Int = DAVLockTable.defaultCapacityPerUser,
        now: @escaping @Sendable () -> Int64 = FileLockStore.monotonicNow,
        wallNow: @escaping @Sendable () -> Int64 = FileLockStore.wallNow
    ) {
        self.now = now
        self.wallNow = wallNow
        self.persistencePath = persistencePath
        var table = DAVLockTable(capacity: capacity, capacityPerUser: capacityPerUser)
        var journal: Journal? = nil
        if let persistencePath {
            let (current, wall) = (now(), wallNow())
            // A file that cannot be read is left alone: no journal, rather than an empty one over it.
            if let kept = Journal.load(from: persistencePath, monotonicNow: current, wallNow: wall) {
                table = DAVLockTable(capacity: capacity, capacityPerUser: capacityPerUser, locks: kept)
                var opened = Journal(path: persistencePath)
                opened.rewrite(kept, monotonicNow: current, wallNow: wall)
                journal = opened
            }
        }
        self.state = Mutex(State(table: table, journal: journal))
    }

    private static let start = ContinuousClock.now

    /// Nanoseconds on the monotonic clock since the process started.
    static func monotonicNow() -> Int64 {
        let elapsed = start.duration(to: .now).components
        return elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
    }

    func reading<T: Sendable>(_ body: @escaping @Sendable (DAVLockTable, Int64) -> T) -> T {
        let now = self.now()
        return state.withLock { body($0.table, now) }
    }

    /// `nil` while a change holds the table (it may be writing to the journal).
    func readingWithoutWaiting<T>(_ body: (DAVLockTable, Int64) -> T) -> T? {
        let now = self.now()
        return state.withLockIfAvailable { body($0.table, now) }
    }

    /// A change is written to the journal before the table's lock is let go,
    /// so changes are kept in the order they were made; it writes the
    /// records of the locks it changed, not the table.
    func changing<T: Sendable>(_ body: @escaping @Sendable (inout DAVLockTable, Int64) -> T) -> (T, [String: DAVLock]) {
        let now = self.now()
        return state.withLock { state in
            let result = body(&state.table, now)
            let changed = state.table.takeChanges()
            if !changed.isEmpty {
                state.journal?.record(changed, locks: state.table.locks, monotonicNow: now, wallNow: wallNow())
            }
            return (result, state.table.locks)
        }
    }
}
