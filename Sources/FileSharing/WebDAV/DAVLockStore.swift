/// Where a share's WebDAV locks live: in this process (``FileLockStore``,
/// kept in the private folder across restarts) or in the shared database
/// (SharedState's `PostgresLockStore`, one table for every server of the
/// folder, given in ``ShareConfiguration/SharedDatabase/locks``).
///
/// A store only keeps and hands out the locks; what a lock conflicts with,
/// what a request must submit, when a lock ends, is decided by
/// ``DAVLockTable`` for both, so those rules are tested once. The store
/// hands the table its clock's time: monotonic nanoseconds in the process,
/// the database's `now()` (nanoseconds since the epoch) in the database, so
/// every server of a folder judges expiry by one clock.
package protocol DAVLockStore: Sendable {
    /// Calls `body` with the locks as they are now and the store's time.
    /// - Throws: ``DAVLockStoreError`` when the locks cannot be read: never
    ///   an empty table in their place.
    func reading<T: Sendable>(_ body: @escaping @Sendable (DAVLockTable, Int64) -> T) async throws(DAVLockStoreError)
        -> T

    /// Calls `body` to change the locks, as one step no other change of the
    /// folder's locks interleaves with (on any server), and keeps the result.
    /// - Returns: What `body` returned, and every lock held afterwards.
    /// - Throws: ``DAVLockStoreError`` when the locks cannot be read or
    ///   changed: then nothing of `body`'s change is kept.
    func changing<T: Sendable>(_ body: @escaping @Sendable (inout DAVLockTable, Int64) -> T)
        async throws(DAVLockStoreError) -> (
            T, [String: DAVLock]
        )

    /// Calls `body` with the locks as they are now, when they can be read
    /// at once (in this process, and no change under way); `nil` otherwise.
    /// For an event loop, which must not wait.
    func readingWithoutWaiting<T>(_ body: (DAVLockTable, Int64) -> T) -> T?
}

extension DAVLockStore {
    /// Locks kept elsewhere (a database) cannot be read without waiting.
    package func readingWithoutWaiting<T>(_ body: (DAVLockTable, Int64) -> T) -> T? { nil }
}

/// The locks cannot be read or changed now (the database cannot be
/// reached): a request that depends on them is refused, never answered as
/// if no lock were held. Knows no HTTP; the faces answer 503 with ``message``.
package struct DAVLockStoreError: Error, Sendable, CustomStringConvertible {
    /// For a person: why.
    package var message: String
    package var description: String { message }

    /// Creates the error; `message` says why, for a person.
    package init(message: String) { self.message = message }
}
