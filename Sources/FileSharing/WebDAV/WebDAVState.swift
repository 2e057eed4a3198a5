import ChangeLog
import Synchronization

/// What the WebDAV face remembers between requests: its locks (kept on disk
/// too, see `WebDAVState+Persistence`) and the empty files it holds back.
final class WebDAVState: Sendable {
    /// An empty file a client created that waits in the staging folder for its content.
    struct Placeholder: Sendable {
        var staging: String
        var created: Int64
        var origin: ChangeOrigin
    }

    /// How long an empty file no lock holds is kept back (Finder locks it
    /// right after its empty PUT).
    static let placeholderGrace: Int64 = 2_000_000_000

    private let table = Mutex(DAVLockTable())
    private let placeholders = Mutex<[SharePath: Placeholder]>([:])
    /// Monotonic nanoseconds.
    let now: @Sendable () -> Int64

    /// Where the locks are kept, if anywhere.
    let persistencePath: String?
    /// Told of each lock taken and released (`FolderActivity`).
    let activity: ActivityFeed

    init(
        persistencePath: String? = nil, activity: ActivityFeed = ActivityFeed(),
        now: @escaping @Sendable () -> Int64 = WebDAVState.monotonicNow
    ) {
        self.now = now
        self.persistencePath = persistencePath
        self.activity = activity
        if let persistencePath {
            let current = now()
            let kept = WebDAVState.load(from: persistencePath, monotonicNow: current)
            table.withLock { table in
                for lock in kept { _ = table.add(lock, now: current) }
            }
        }
    }

    private static let start = ContinuousClock.now

    /// Nanoseconds on the monotonic clock since the process started.
    static func monotonicNow() -> Int64 {
        let elapsed = start.duration(to: .now).components
        return elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
    }

    // MARK: Locks

    /// Reads the lock table.
    func readingLocks<T>(_ body: (DAVLockTable, Int64) -> T) -> T {
        let now = self.now()
        return table.withLock { body($0, now) }
    }

    /// Changes the lock table; a change is written to the kept copy, and
    /// told as activity (after the table's lock is let go).
    func changingLocks<T>(_ body: (inout DAVLockTable, Int64) -> T) -> T {
        let now = self.now()
        let (result, changes) = table.withLock { table in
            let before = table.locks
            let result = body(&table, now)
            guard table.locks != before else { return (result, [FolderActivity]()) }
            if let persistencePath {
                WebDAVState.save(Array(table.locks.values), to: persistencePath, monotonicNow: now)
            }
            return (result, activity.isActive ? ActivityFeed.lockChanges(from: before, to: table.locks) : [])
        }
        for change in changes { activity.publish(change) }
        return result
    }

    func locks(covering path: SharePath) -> [DAVLock] { readingLocks { $0.locks(covering: path, now: $1) } }

    /// Whether any lock is held (a quick test before looking for those on a path).
    var hasLocks: Bool { table.withLock { !$0.locks.isEmpty } }

    func locks(coveringOrUnder path: SharePath) -> [DAVLock] {
        readingLocks { $0.locks(coveringOrUnder: path, now: $1) }
    }

    func lock(token: String) -> DAVLock? { readingLocks { $0.lock(token: token, now: $1) } }

    func removeLocks(under path: SharePath) { changingLocks { table, _ in table.removeAll(under: path) } }

    /// Drops the locks whose time is over.
    func expireLocks() -> [DAVLock] { changingLocks { $0.expire(now: $1) } }

    // MARK: Held-back empty files

    func placeholder(at path: SharePath) -> Placeholder? { placeholders.withLock { $0[path] } }

    func placeholders(in folder: SharePath) -> [(SharePath, Placeholder)] {
        placeholders.withLock { $0.filter { $0.key.parent == folder }.map { ($0.key, $0.value) } }
    }

    func addPlaceholder(_ placeholder: Placeholder, at path: SharePath) {
        placeholders.withLock { $0[path] = placeholder }
    }

    /// Forgets the placeholder at `path` if it is still `staging`; returns whether it was.
    @discardableResult
    func removePlaceholder(at path: SharePath, staging: String) -> Bool {
        placeholders.withLock {
            guard $0[path]?.staging == staging else { return false }
            $0[path] = nil
            return true
        }
    }

    /// Forgets the placeholders at and under `path`; returns them.
    func removePlaceholders(under path: SharePath) -> [(SharePath, Placeholder)] {
        placeholders.withLock { entries in
            let removed = entries.filter { $0.key.isSame(asOrUnder: path) }.map { ($0.key, $0.value) }
            for (key, _) in removed { entries[key] = nil }
            return removed
        }
    }

    /// Every placeholder.
    var allPlaceholders: [(SharePath, Placeholder)] { placeholders.withLock { $0.map { ($0.key, $0.value) } } }

    /// The placeholders at and under `path`.
    func placeholders(under path: SharePath) -> [(SharePath, Placeholder)] {
        allPlaceholders.filter { $0.0.isSame(asOrUnder: path) }
    }

    /// The placeholders due to become files: no lock holds them and their grace is over.
    func duePlaceholders() -> [(SharePath, Placeholder)] {
        let now = self.now()
        return allPlaceholders.filter { path, placeholder in
            now - placeholder.created >= WebDAVState.placeholderGrace && locks(covering: path).isEmpty
        }
    }
}

extension WebDAVState: LockLookup {}
