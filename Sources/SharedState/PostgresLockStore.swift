package import FileSharing
package import Logging
import PostgresNIO

/// The locks of a folder several servers share, in the database's
/// `dav_locks` table (migration 3), on the database's clock.
///
/// A change is one transaction that first takes `pg_advisory_xact_lock` on
/// the folder's key, then reads the folder's locks, lets ``DAVLockTable``
/// decide, and writes what changed: two servers' changes to one folder's
/// locks run one after the other, and the lock is let go at commit or
/// rollback (a server that dies mid-change holds nothing). An advisory lock
/// rather than SERIALIZABLE: a conflict check reads a set of locks (every
/// one above or under a path), which SERIALIZABLE can only protect by
/// aborting one of two overlapping transactions, to be retried by hand;
/// the advisory lock makes the second wait a few milliseconds instead, and
/// never fails. Readers take no lock: each query reads one snapshot.
package struct PostgresLockStore: DAVLockStore {
    let database: Database
    /// The folder's key.
    let folder: String
    let capacity: Int
    /// At most this many locks held by one user, on every server of the
    /// folder: the table's rule, applied under the folder's advisory lock.
    let capacityPerUser: Int
    let logger: Logger
    /// How long a caller waits for the database: its pool queues a request
    /// while it cannot connect, and a client is answered with a reason instead.
    let timeLimit: Duration
    /// The patience of a server's stores (5 s).
    package static let defaultTimeLimit: Duration = .seconds(5)

    /// The store of the locks of the folder whose key is `folder` (`FolderKey`), in `database`.
    package init(
        database: Database, folder: String, capacity: Int = DAVLockTable.defaultCapacity,
        capacityPerUser: Int = DAVLockTable.defaultCapacityPerUser,
        timeLimit: Duration = PostgresLockStore.defaultTimeLimit, logger: Logger
    ) {
        self.database = database
        self.folder = folder
        self.capacity = capacity
        self.capacityPerUser = capacityPerUser
        self.timeLimit = timeLimit
        self.logger = logger
    }

    package func reading<T: Sendable>(_ body: @escaping @Sendable (DAVLockTable, Int64) -> T)
        async throws(DAVLockStoreError)
        -> T
    {
        let (folder, logger, database) = (self.folder, self.logger, self.database)
        let (now, locks) = try await run("read the WebDAV locks") { () async throws(DatabaseError) in
            try await database.withConnection(doing: "read the WebDAV locks") { connection in
                try await Self.load(folder: folder, on: connection, logger: logger)
            }
        }
        return body(DAVLockTable(capacity: capacity, capacityPerUser: capacityPerUser, locks: locks), now)
    }

    package func changing<T: Sendable>(_ body: @escaping @Sendable (inout DAVLockTable, Int64) -> T)
        async throws(DAVLockStoreError) -> (
            T, [String: DAVLock]
        )
    {
        let (folder, logger, database) = (self.folder, self.logger, self.database)
        let (capacity, capacityPerUser) = (self.capacity, self.capacityPerUser)
        let deadline = ContinuousClock.now.advanced(by: timeLimit)
        return try await run("change the WebDAV locks") { () async throws(DatabaseError) in
            try await database.withTransaction(doing: "change the WebDAV locks") { connection in
                // The pool may hand out a connection only once the database is
                // back, long after the caller was told no: nothing is changed then.
                try Self.checkInTime(deadline)
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended('fileshare dav locks ' || \(folder), 0))",
                    logger: logger)
                let (now, locks) = try await Self.load(folder: folder, on: connection, logger: logger)
                var table = DAVLockTable(capacity: capacity, capacityPerUser: capacityPerUser, locks: locks)
                let before = table.locks
                let result = body(&table, now)
                let after = table.locks
                try Self.checkInTime(deadline)
                let gone = before.keys.filter { after[$0] == nil }
                // Ended ones go too: nobody reads them again.
                try await connection.query(
                    """
                    DELETE FROM dav_locks
                    WHERE folder = \(folder) AND (token = ANY(\(gone)::text[]) OR expires_ns <= \(now))
                    """, logger: logger)
                for lock in after.values where before[lock.token] != lock {
                    try await connection.query(
                        """
                        INSERT INTO dav_locks
                            (folder, token, root, deep, exclusive, owner, user_name, timeout_seconds, expires_ns)
                        VALUES (\(folder), \(lock.token), \(lock.root.description), \(lock.isDeep),
                            \(lock.isExclusive), \(lock.owner), \(lock.user), \(lock.timeout), \(lock.expires))
                        ON CONFLICT (folder, token) DO UPDATE
                        SET timeout_seconds = EXCLUDED.timeout_seconds, expires_ns = EXCLUDED.expires_ns
                        """, logger: logger)
                }
                return (result, after)
            }
        }
    }

    /// The database's time (nanoseconds since the epoch) and the folder's
    /// locks that have not ended by it, in one query (one snapshot).
    static func load(folder: String, on connection: PostgresConnection, logger: Logger) async throws -> (
        Int64, [DAVLock]
    ) {
        let rows = try await connection.query(
            """
            WITH clock AS (SELECT (extract(epoch FROM now()) * 1000000000)::int8 AS ns)
            SELECT clock.ns, l.token, l.root, l.deep, l.exclusive, l.owner, l.user_name, l.timeout_seconds,
                l.expires_ns
            FROM clock LEFT JOIN dav_locks l ON l.folder = \(folder) AND l.expires_ns > clock.ns
            """, logger: logger)
        var now: Int64 = 0
        var locks: [DAVLock] = []
        for try await (ns, token, root, deep, exclusive, owner, user, timeout, expires) in rows.decode(
            (Int64, String?, String?, Bool?, Bool?, String?, String?, Int64?, Int64?).self)
        {
            now = ns
            // A row whose path no longer reads (written by hand) is no lock.
            guard let token, let root, let path = try? SharePath(plain: root), let deep, let exclusive,
                let timeout, let expires
            else { continue }
            locks.append(
                DAVLock(
                    token: token, root: path, isDeep: deep, isExclusive: exclusive, owner: owner, user: user,
                    timeout: timeout, expires: expires))
        }
        return (now, locks)
    }

    /// Throws (rolling the transaction back) once `deadline` has passed:
    /// the caller has been answered already.
    static func checkInTime(_ deadline: ContinuousClock.Instant) throws {
        try Task.checkCancellation()
        guard ContinuousClock.now < deadline else {
            throw DatabaseError(code: .unavailable, message: "the database answered too late")
        }
    }

    /// Runs a database call, for ``timeLimit`` at most; its failure becomes a
    /// ``DAVLockStoreError`` saying why. A change the time limit cut off may
    /// still have been committed: the client is told it failed, and the lock
    /// then ends with its timeout.
    private func run<R: Sendable>(
        _ what: String, _ call: @escaping @Sendable () async throws(DatabaseError) -> R
    ) async throws(DAVLockStoreError) -> R {
        let answer: R?
        do {
            answer = try await withTimeLimit(timeLimit) { try await call() }
        } catch let error as DatabaseError {
            throw DAVLockStoreError(
                message: "the WebDAV locks are in a database that cannot be used now: \(error.message)")
        } catch {
            throw DAVLockStoreError(message: "the WebDAV locks cannot be read: \(error)")
        }
        guard let answer else {
            throw DAVLockStoreError(
                message:
                    "the WebDAV locks are in a database that did not answer within \(timeLimit.components.seconds) s; try again later"
            )
        }
        return answer
    }
}
