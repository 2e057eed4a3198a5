public import Accounts
import Logging
import PostgresNIO

/// A folder's share links in the shared database: made on one server,
/// opened on any, revoked or used up on all at once.
///
/// Nothing is cached: every link opened asks the database (one
/// statement). Whether a link is open is decided at the database's clock;
/// a download is counted by one `UPDATE … WHERE downloads < max_downloads`,
/// so however many servers count at once, never past the limit.
public struct PostgresLinkStore: ShareLinkStore {
    /// The folder's key.
    public let folder: String
    /// The database.
    public let database: Database

    /// Creates the store of `folder`'s links.
    public init(folder: String, database: Database) {
        self.folder = folder
        self.database = database
    }

    /// The columns of a link, in the order ``link(_:)`` reads them.
    static let columns = """
        id, token_hash, item, path, access, creator, created, expires, password_hash, max_downloads, downloads,
        ended, ended_at
        """

    /// A link from a row of ``columns`` (an unknown access or ending, written by a newer program, ends it).
    static func link(_ row: PostgresRow) throws -> ShareLink {
        let (
            id, tokenHash, item, path, access, creator, created, expires, passwordHash, maxDownloads, downloads, ended,
            endedAt
        ) = try row.decode(
            (
                String, String, String, String, String, String?, Int64, Int64?, String?, Int?, Int, String?, Int64?
            ).self)
        var ending = ended.map { ShareLink.Ending(rawValue: $0) ?? .revoked }
        guard let kind = ShareLink.Access(rawValue: access) else {
            ending = .revoked
            return ShareLink(
                id: id, tokenHash: tokenHash, item: item, path: path, access: .read, creator: creator,
                created: created, expires: expires, passwordHash: passwordHash, maxDownloads: maxDownloads,
                downloads: downloads, ended: ending, endedAt: endedAt ?? created)
        }
        return ShareLink(
            id: id, tokenHash: tokenHash, item: item, path: path, access: kind, creator: creator, created: created,
            expires: expires, passwordHash: passwordHash, maxDownloads: maxDownloads, downloads: downloads,
            ended: ending, endedAt: endedAt)
    }

    public func add(_ link: ShareLink) async throws(AccountsError) {
        let folder = self.folder
        let keep = ShareLinks.keepEnded
        try await run("make a share link") { connection, logger in
            // Links that ended (or expired) long ago are forgotten, as the file forgets them.
            try await connection.query(
                """
                DELETE FROM share_links WHERE folder = \(folder)
                    AND coalesce(ended_at, expires) < extract(epoch FROM now())::bigint - \(keep)
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO share_links (folder, id, token_hash, item, path, access, creator, created, expires,
                    password_hash, max_downloads, downloads)
                VALUES (\(folder), \(link.id), \(link.tokenHash), \(link.item), \(link.path), \(link.access.rawValue),
                    \(link.creator), \(link.created), \(link.expires), \(link.passwordHash), \(link.maxDownloads),
                    \(link.downloads))
                """, logger: logger)
        }
    }

    public func lookup(tokenHash: String) async throws(AccountsError) -> ShareLinks.Lookup {
        let folder = self.folder
        return try await run("open a share link") { connection, logger in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns), extract(epoch FROM now())::bigint FROM share_links
                WHERE folder = \(folder) AND token_hash = \(tokenHash)
                """, logger: logger)
            for try await row in rows {
                let link = try Self.link(row)
                let now = try row.makeRandomAccess()[13].decode(Int64.self)
                return link.ending(at: now).map { .ended(link, $0) } ?? .open(link)
            }
            return .unknown
        }
    }

    public func link(id: String) async throws(AccountsError) -> ShareLink? {
        try await select("read a share link", .id(id)).first
    }

    public func links(visibleTo user: String?, isAdmin: Bool) async throws(AccountsError) -> [ShareLink] {
        if isAdmin { return try await select("list the share links", .all) }
        guard let user else { return [] }
        return try await select("list the share links", .creator(user))
    }

    public func revoke(id: String) async throws(AccountsError) -> Bool {
        let folder = self.folder
        return try await run("revoke a share link") { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE share_links SET ended = coalesce(ended, 'revoked'),
                    ended_at = coalesce(ended_at, extract(epoch FROM now())::bigint)
                WHERE folder = \(folder) AND id = \(id) RETURNING id
                """, logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    public func countDownload(id: String) async throws(AccountsError) -> Bool {
        let folder = self.folder
        return try await run("count a share link's download") { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE share_links SET downloads = downloads + 1
                WHERE folder = \(folder) AND id = \(id) AND (max_downloads IS NULL OR downloads < max_downloads)
                RETURNING downloads
                """, logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    public func follow(id: String, to path: String) async throws(AccountsError) {
        let folder = self.folder
        try await run("note where a link's item is") { connection, logger in
            try await connection.query(
                "UPDATE share_links SET path = \(path) WHERE folder = \(folder) AND id = \(id) AND path <> \(path)",
                logger: logger)
        }
    }

    public func itemDeleted(id: String) async throws(AccountsError) {
        let folder = self.folder
        try await run("end a link whose item is gone") { connection, logger in
            try await connection.query(
                """
                UPDATE share_links SET ended = 'deleted', ended_at = extract(epoch FROM now())::bigint
                WHERE folder = \(folder) AND id = \(id) AND ended IS NULL
                """, logger: logger)
        }
    }

    /// Which links ``select(_:_:)`` reads.
    enum Selection {
        case all
        case id(String)
        case creator(String)
    }

    private func select(_ what: String, _ selection: Selection) async throws(AccountsError) -> [ShareLink] {
        let folder = self.folder
        return try await run(what) { connection, logger in
            let query: PostgresQuery =
                switch selection {
                case .all:
                    "SELECT \(unescaped: Self.columns) FROM share_links WHERE folder = \(folder) ORDER BY created, id"
                case .id(let id):
                    "SELECT \(unescaped: Self.columns) FROM share_links WHERE folder = \(folder) AND id = \(id)"
                case .creator(let creator):
                    """
                    SELECT \(unescaped: Self.columns) FROM share_links WHERE folder = \(folder) AND creator = \(creator)
                    ORDER BY created, id
                    """
                }
            var links: [ShareLink] = []
            for try await row in try await connection.query(query, logger: logger) { links.append(try Self.link(row)) }
            return links
        }
    }

    private func run<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> Result
    ) async throws(AccountsError) -> Result {
        try await database.forAccounts(what, body)
    }
}
