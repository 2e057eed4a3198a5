package import FileSharing
package import Logging
import PostgresNIO

/// The resumable uploads of a folder several servers share, in the
/// database's `resumable_uploads` table (migration 3).
///
/// A claim is one `UPDATE … WHERE writer IS NULL OR writing_until < now()`:
/// PostgreSQL's row lock makes two servers' claims of one upload run one
/// after the other, and the second finds the row taken (409). The claim is a
/// lease (``claimLease``): a server that dies while writing holds the upload
/// no longer than that. The end of an upload (``lifetime`` after it last
/// moved) is on the database's clock; so are the limits on how many there
/// are (``register(_:limits:)``), counted under an advisory lock of the folder.
package struct PostgresUploadState: SharedUploadState {
    let database: Database
    /// The folder's key.
    let folder: String
    /// This server, as the `writer` of the uploads it writes.
    let server: String
    /// How long an upload no request moves is kept.
    let lifetime: Duration
    /// How long a claim holds at most (a request writing longer loses it).
    let claimLease: Duration
    let logger: Logger

    /// The state of the uploads of the folder whose key is `folder`
    /// (`FolderKey`), in `database`, for the server named `server`.
    package init(
        database: Database, folder: String, server: String,
        lifetime: Duration = PendingUploadLimits.standard.lifetime,
        claimLease: Duration = .seconds(3600), logger: Logger
    ) {
        self.database = database
        self.folder = folder
        self.server = server
        self.lifetime = lifetime
        self.claimLease = claimLease
        self.logger = logger
    }

    private var lifetimeSeconds: Double {
        Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18
    }
    private var leaseSeconds: Double {
        Double(claimLease.components.seconds) + Double(claimLease.components.attoseconds) / 1e18
    }

    package func register(_ upload: SharedUpload, limits: PendingUploadLimits) async throws(UploadStateError)
        -> PendingUploadLimitError?
    {
        let (folder, logger, seconds) = (self.folder, self.logger, lifetimeSeconds)
        return try await run("record a resumable upload", inTransaction: true) { connection in
            // One count and insert at a time per folder, across servers: two
            // starting at once would each see room for one more.
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtextextended('fileshare uploads ' || \(folder), 0))",
                logger: logger)
            let rows = try await connection.query(
                """
                SELECT count(*) FILTER (WHERE user_name = \(upload.owner)), count(*)
                FROM resumable_uploads WHERE folder = \(folder) AND expires_at > now()
                """, logger: logger)
            var counts: (owner: Int64, total: Int64) = (0, 0)
            for try await (owner, total) in rows.decode((Int64, Int64).self) { counts = (owner, total) }
            if counts.total >= limits.total { return PendingUploadLimitError(code: .folder, limits: limits) }
            if counts.owner >= limits.perOwner { return PendingUploadLimitError(code: .owner, limits: limits) }
            _ = try await connection.query(
                """
                INSERT INTO resumable_uploads
                    (folder, token, path, length, offset_bytes, conditions, user_name, expires_at)
                VALUES (\(folder), \(upload.token), \(upload.path.description), \(upload.length), 0,
                    \(upload.conditions)::text[], \(upload.owner), now() + make_interval(secs => \(seconds)))
                """, logger: logger)
            return nil
        }
    }

    package func claim(_ token: String) async throws(UploadStateError) -> UploadClaim {
        let (folder, logger, server, lease) = (self.folder, self.logger, self.server, leaseSeconds)
        return try await run("claim a resumable upload") { connection -> UploadClaim in
            let rows = try await connection.query(
                """
                WITH claimed AS (
                    UPDATE resumable_uploads
                    SET writer = \(server), writing_until = now() + make_interval(secs => \(lease))
                    WHERE folder = \(folder) AND token = \(token) AND expires_at > now()
                        AND (writer IS NULL OR writing_until < now())
                    RETURNING 1
                )
                SELECT (SELECT count(*) FROM claimed),
                    (SELECT count(*) FROM resumable_uploads WHERE folder = \(folder) AND token = \(token))
                """, logger: logger)
            for try await (claimed, exists) in rows.decode((Int64, Int64).self) {
                if claimed > 0 { return .claimed }
                return exists > 0 ? .busy : .unknown
            }
            return .unknown
        }
    }

    package func release(_ token: String, offset: Int64) async {
        let (folder, logger, server, seconds) = (self.folder, self.logger, self.server, lifetimeSeconds)
        do {
            try await run("release a resumable upload") { connection in
                _ = try await connection.query(
                    """
                    UPDATE resumable_uploads
                    SET writer = NULL, writing_until = NULL, offset_bytes = \(offset),
                        expires_at = now() + make_interval(secs => \(seconds))
                    WHERE folder = \(folder) AND token = \(token) AND writer = \(server)
                    """, logger: logger)
            }
        } catch {
            // The lease ends by itself.
            logger.debug("a resumable upload's claim cannot be released", metadata: ["error": "\(error)"])
        }
    }

    package func remove(_ token: String) async {
        let (folder, logger) = (self.folder, self.logger)
        do {
            try await run("forget a resumable upload") { connection in
                _ = try await connection.query(
                    "DELETE FROM resumable_uploads WHERE folder = \(folder) AND token = \(token)", logger: logger)
            }
        } catch {
            // It expires by itself, and the leader removes it then.
            logger.debug("a resumable upload cannot be forgotten", metadata: ["error": "\(error)"])
        }
    }

    package func expire() async throws(UploadStateError) -> [String] {
        let (folder, logger) = (self.folder, self.logger)
        return try await run("expire resumable uploads") { connection -> [String] in
            let rows = try await connection.query(
                """
                DELETE FROM resumable_uploads
                WHERE folder = \(folder) AND expires_at <= now() AND (writer IS NULL OR writing_until < now())
                RETURNING token
                """, logger: logger)
            var tokens: [String] = []
            for try await token in rows.decode(String.self) { tokens.append(token) }
            return tokens
        }
    }

    /// Runs `body` on a connection, for `PostgresLockStore.defaultTimeLimit` at
    /// most; a failure becomes an ``UploadStateError`` saying why.
    private func run<R: Sendable>(
        _ what: String, inTransaction: Bool = false, _ body: @escaping @Sendable (PostgresConnection) async throws -> R
    ) async throws(UploadStateError) -> R {
        let database = self.database
        let deadline = ContinuousClock.now.advanced(by: PostgresLockStore.defaultTimeLimit)
        let answer: R?
        do {
            answer = try await withTimeLimit(PostgresLockStore.defaultTimeLimit) {
                // A connection handed out only once the database is back
                // is too late: the caller was answered (a claim now would
                // hold the upload for its lease).
                let timely: @Sendable (PostgresConnection) async throws -> R = { connection in
                    try PostgresLockStore.checkInTime(deadline)
                    return try await body(connection)
                }
                return inTransaction
                    ? try await database.withTransaction(doing: what, timely)
                    : try await database.withConnection(doing: what, timely)
            }
        } catch let error as DatabaseError {
            throw UploadStateError(
                message: "resumable uploads are kept in a database that cannot be used now: \(error.message)")
        } catch {
            throw UploadStateError(message: "resumable uploads cannot be read: \(error)")
        }
        guard let answer else {
            throw UploadStateError(
                message: "resumable uploads are kept in a database that did not answer within 5 s; try again later")
        }
        return answer
    }
}
