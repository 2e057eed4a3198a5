public import Accounts
import Logging
import PostgresNIO

/// Sessions in the shared database, so that every server of a folder
/// honours a session started on any of them, and a sign-out on one ends it
/// on all at once.
///
/// Nothing is cached: every request with a session cookie asks the
/// database (one statement). Only SHA-256 of a session id is kept
/// (``SessionStamp/hash(ofID:)``). Whether a session lives is decided by
/// the database's clock (``SessionTable/Limits``: idle and absolute
/// lifetimes); its last use is written at most once per ``touchInterval``,
/// not at every request, so the idle lifetime is kept to within that.
/// Ended sessions are removed at each sign-in.
public struct PostgresSessionStore: SessionStore {
    /// What the sessions are of.
    public enum Kind: String, Sendable {
        /// The page's sessions of users.
        case user
        /// The visitors who gave a share link's password (the "user" is the link's id).
        case link
    }

    /// The folder's key.
    public let folder: String
    /// The database.
    public let database: Database
    /// What the sessions are of: one kind never opens as the other.
    public let kind: Kind
    public let limits: SessionTable.Limits
    /// How often a session's last use is written, at most.
    public let touchInterval: Duration

    /// Creates the store of `folder`'s sessions of `kind`.
    public init(
        folder: String, database: Database, kind: Kind = .user, limits: SessionTable.Limits = SessionTable.Limits(),
        touchInterval: Duration = .seconds(30)
    ) {
        self.folder = folder
        self.database = database
        self.kind = kind
        self.limits = limits
        self.touchInterval = touchInterval
    }

    public func start(id: String, user: String, stamp: String) async throws(AccountsError) {
        let hash = SessionStamp.hash(ofID: id)
        let absolute = Self.seconds(limits.absolute)
        let idle = Self.seconds(limits.idle)
        let (folder, kind) = (self.folder, self.kind.rawValue)
        try await run("start a session") { connection, logger in
            try await connection.query(
                """
                DELETE FROM sessions WHERE folder = \(folder)
                    AND (expires_at <= now() OR last_seen <= now() - make_interval(secs => \(idle)))
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO sessions (folder, id_hash, kind, user_name, stamp, expires_at)
                VALUES (\(folder), \(hash), \(kind), \(user), \(stamp), now() + make_interval(secs => \(absolute)))
                """, logger: logger)
        }
    }

    public func session(_ id: String) async throws(AccountsError) -> SessionRecord? {
        let hash = SessionStamp.hash(ofID: id)
        let idle = Self.seconds(limits.idle)
        let touch = Self.seconds(touchInterval)
        let (folder, kind) = (self.folder, self.kind.rawValue)
        return try await run("read a session") { connection, logger in
            // One statement: the live session, and its last use written
            // only when the one written is older than the touch interval.
            let rows = try await connection.query(
                """
                WITH live AS (
                    SELECT user_name, stamp FROM sessions
                    WHERE folder = \(folder) AND id_hash = \(hash) AND kind = \(kind)
                        AND expires_at > now() AND last_seen > now() - make_interval(secs => \(idle))
                ), touched AS (
                    UPDATE sessions SET last_seen = now()
                    WHERE folder = \(folder) AND id_hash = \(hash) AND EXISTS (SELECT 1 FROM live)
                        AND last_seen <= now() - make_interval(secs => \(touch))
                    RETURNING 1
                )
                SELECT user_name, stamp FROM live
                """, logger: logger)
            for try await (user, stamp) in rows.decode((String, String).self) {
                return SessionRecord(user: user, stamp: stamp)
            }
            return nil
        }
    }

    public func end(_ id: String) async throws(AccountsError) {
        let hash = SessionStamp.hash(ofID: id)
        let folder = self.folder
        try await run("end a session") { connection, logger in
            try await connection.query(
                "DELETE FROM sessions WHERE folder = \(folder) AND id_hash = \(hash)", logger: logger)
        }
    }

    public func end(user: String, keeping stamp: String?) async throws(AccountsError) {
        let (folder, kind) = (self.folder, self.kind.rawValue)
        try await run("end a user's sessions") { connection, logger in
            try await connection.query(
                """
                DELETE FROM sessions WHERE folder = \(folder) AND kind = \(kind) AND user_name = \(user)
                    AND stamp IS DISTINCT FROM \(stamp)
                """, logger: logger)
        }
    }

    /// The sessions kept (ended or not), for tests and operators.
    public func count() async throws(AccountsError) -> Int {
        let (folder, kind) = (self.folder, self.kind.rawValue)
        return try await run("count the sessions") { connection, logger in
            let rows = try await connection.query(
                "SELECT count(*) FROM sessions WHERE folder = \(folder) AND kind = \(kind)", logger: logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
    }

    private func run<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> Result
    ) async throws(AccountsError) -> Result {
        try await database.forAccounts(what, body)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
