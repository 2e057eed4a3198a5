import Synchronization

/// The locks of a server on its own: a ``DAVLockTable`` in this process,
/// behind a lock, on the monotonic clock, kept in the share's private folder
/// too (see `FileLockStore+Persistence`) so a restart keeps them.
final class FileLockStore: DAVLockStore {
    private let table: Mutex<DAVLockTable>
    /// Monotonic nanoseconds.
    let now: @Sendable () -> Int64
    /// Where the locks are kept, if anywhere.
    let persistencePath: String?

    /// Reads the kept locks from `persistencePath`, if given.
    init(
        persistencePath: String? = nil, capacity: Int = DAVLockTable.defaultCapacity,
        now: @escaping @Sendable () -> Int64 = FileLockStore.monotonicNow
    ) {
        self.now = now
        self.persistencePath = persistencePath
        var table = DAVLockTable(capacity: capacity)
        if let persistencePath {
            let current = now()
            for lock in FileLockStore.load(from: persistencePath, monotonicNow: current) {
                _ = table.add(lock, now: current)
            }
        }
        self.table = Mutex(table)
    }

    private static let start = ContinuousClock.now

    /// Nanoseconds on the monotonic clock since the process started.
    static func monotonicNow() -> Int64 {
        let elapsed = start.duration(to: .now).components
        return elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
    }

    func reading<T: Sendable>(_ body: @escaping @Sendable (DAVLockTable, Int64) -> T) -> T {
        let now = self.now()
        return table.withLock { body($0, now) }
    }

    /// `nil` while a change holds the table (it may be flushing the kept copy to disk).
    func readingWithoutWaiting<T>(_ body: (DAVLockTable, Int64) -> T) -> T? {
        let now = self.now()
        return table.withLockIfAvailable { body($0, now) }
    }

    /// A change is written to the kept copy before the table's lock is let go,
    /// so two changes are kept in the order they were made.
    func changing<T: Sendable>(_ body: @escaping @Sendable (inout DAVLockTable, Int64) -> T) -> (T, [String: DAVLock]) {
        let now = self.now()
        return table.withLock { table in
            let before = table.locks
            let result = body(&table, now)
            if table.locks != before, let persistencePath {
                FileLockStore.save(Array(table.locks.values), to: persistencePath, monotonicNow: now)
            }
            return (result, table.locks)
        }
    }
}
