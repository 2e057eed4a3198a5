public import ChangeLog
import FileWatching
import Logging
import PostgresNIO

/// The origins of the changes a follower makes, kept in the database while
/// they are under way: the leader's observer sees the change on disk, and
/// the commit of its record takes the origin of a registration on its
/// paths (or above or under them), as the leader's own registry does for
/// its own changes.
///
/// A registration expires by itself after ``lifetime`` (a follower that
/// dies leaves nothing behind for long); ``release(_:)`` removes it sooner.
public struct PostgresOrigins: Sendable {
    /// The folder's key.
    public let folder: String
    /// The database.
    public let database: Database
    /// How long a registration counts at most.
    public let lifetime: Duration

    /// Creates the origins of `folder`'s followers.
    public init(folder: String, database: Database, lifetime: Duration = .seconds(60)) {
        self.folder = folder
        self.database = database
        self.lifetime = lifetime
    }

    /// Registers a change under way on `paths` (relative to the folder's root).
    /// - Returns: The registration's id, for ``release(_:)``.
    /// - Throws: ``DatabaseError`` when the database cannot be reached.
    public func register(paths: [String], origin: ChangeOrigin) async throws(DatabaseError) -> Int64 {
        let seconds = Double(lifetime.components.seconds)
        let logger = database.logger
        let folder = self.folder
        return try await database.withConnection(doing: "register a change's origin") { connection in
            let rows = try await connection.query(
                """
                INSERT INTO change_origins (folder, paths, face, client, user_name, method, expires_at)
                VALUES (\(folder), \(paths)::text[], \(origin.face), \(origin.client), \(origin.user),
                    \(origin.method), now() + make_interval(secs => \(seconds)))
                RETURNING id
                """, logger: logger)
            for try await id in rows.decode(Int64.self) { return id }
            return 0
        }
    }

    /// Removes a registration (and every expired one of the folder).
    public func release(_ id: Int64) async {
        let logger = database.logger
        let folder = self.folder
        do {
            try await database.withConnection(doing: "release a change's origin") { connection in
                try await connection.query(
                    "DELETE FROM change_origins WHERE id = \(id) OR (folder = \(folder) AND expires_at < now())",
                    logger: logger)
            }
        } catch {
            // It expires by itself.
            logger.debug("cannot release a change's origin", metadata: ["error": "\(error.message)"])
        }
    }

    /// The paths a record's change is about (none for one that is not a change of an item).
    static func paths(of record: ChangeRecord) -> [String] {
        record.change?.itemPaths.map(\.description) ?? []
    }
}
