import ChangeLog
import NIOCore
import Synchronization

/// What the WebDAV face remembers between requests: its locks (in a
/// ``DAVLockStore``) and the empty files it holds back.
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

    /// Where the locks are.
    let store: any DAVLockStore
    private let placeholders = Mutex<[SharePath: Placeholder]>([:])
    /// The locks as this server last saw them, to tell the activity feed
    /// what changed: after each change made here, and after each round of
    /// `expireLocks` (which also brings the changes other servers made).
    private let seen = Mutex<[String: DAVLock]>([:])
    /// The PROPFIND answers being made, which requests for the same answer share.
    let propfinds = CoalescedWork<WebDAVFace.PropfindKey, [ByteBuffer]>()
    /// Monotonic nanoseconds, for the held-back empty files.
    let now: @Sendable () -> Int64

    /// Told of each lock taken and released (`FolderActivity`).
    let activity: ActivityFeed

    init(
        store: any DAVLockStore = FileLockStore(), activity: ActivityFeed = ActivityFeed(),
        now: @escaping @Sendable () -> Int64 = FileLockStore.monotonicNow
    ) {
        self.store = store
        self.now = now
        self.activity = activity
    }

    // MARK: Locks

    /// Reads the locks.
    /// - Throws: ``DAVLockStoreError`` when they cannot be read.
    func readingLocks<T: Sendable>(_ body: @escaping @Sendable (DAVLockTable, Int64) -> T)
        async throws(DAVLockStoreError) -> T
    {
        try await store.reading(body)
    }

    /// Changes the locks as one step; what changed is told as activity.
    /// - Throws: ``DAVLockStoreError`` when they cannot be changed (nothing is).
    func changingLocks<T: Sendable>(_ body: @escaping @Sendable (inout DAVLockTable, Int64) -> T)
        async throws(DAVLockStoreError) -> T
    {
        let (result, locks) = try await store.changing(body)
        noticeLocks(locks)
        return result
    }

    /// Tells the activity feed how `locks` differ from those seen before.
    private func noticeLocks(_ locks: [String: DAVLock]) {
        let changes = seen.withLock { seen in
            defer { seen = locks }
            return activity.isActive ? ActivityFeed.lockChanges(from: seen, to: locks) : []
        }
        for change in changes { activity.publish(change) }
    }

    /// How many locks were held when this server last looked (for `/metrics`).
    var lockCount: Int { seen.withLock { $0.count } }

    func locks(covering path: SharePath) async throws(DAVLockStoreError) -> [DAVLock] {
        try await readingLocks { $0.locks(covering: path, now: $1) }
    }

    func locks(coveringOrUnder path: SharePath) async throws(DAVLockStoreError) -> [DAVLock] {
        try await readingLocks { $0.locks(coveringOrUnder: path, now: $1) }
    }

    /// ``locks(coveringOrUnder:)`` when they can be read at once; `nil` otherwise.
    func locksWithoutWaiting(coveringOrUnder path: SharePath) -> [DAVLock]? {
        store.readingWithoutWaiting { $0.locks(coveringOrUnder: path, now: $1) }
    }

    func lock(token: String) async throws(DAVLockStoreError) -> DAVLock? {
        try await readingLocks { $0.lock(token: token, now: $1) }
    }

    func removeLocks(under path: SharePath) async throws(DAVLockStoreError) {
        try await changingLocks { table, _ in table.removeAll(under: path) }
    }

    /// Drops the locks whose time is over.
    @discardableResult
    func expireLocks() async throws(DAVLockStoreError) -> [DAVLock] {
        try await changingLocks { $0.expire(now: $1) }
    }

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
    /// - Throws: ``DAVLockStoreError`` when the locks cannot be read (none is due then).
    func duePlaceholders() async throws(DAVLockStoreError) -> [(SharePath, Placeholder)] {
        let now = self.now()
        let waiting = allPlaceholders.filter { now - $0.1.created >= WebDAVState.placeholderGrace }
        guard !waiting.isEmpty else { return [] }
        let paths = waiting.map(\.0)
        let held = try await readingLocks { table, now in
            Set(paths.filter { !table.locks(covering: $0, now: now).isEmpty })
        }
        return waiting.filter { !held.contains($0.0) }
    }
}

extension WebDAVState: LockLookup {}
