import PostgresNIO

/// One step of the database's schema: a version and the statements that
/// take the schema from the version before to it.
public struct Migration: Sendable, Hashable {
    /// The version the schema has after this step (1, 2, 3…, one more each).
    public var version: Int
    /// What it does, for a person.
    public var name: String
    /// The SQL statements, run in order in the transaction of the migration.
    public var statements: [String]

    /// Creates a step.
    public init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}

/// What a database's schema needs, worked out from the versions it has
/// applied and the migrations this program knows (no database in here).
public enum MigrationPlan: Sendable, Hashable {
    /// Every known migration is applied.
    case upToDate
    /// These migrations are due, in this order.
    case apply([Migration])
    /// The database was migrated by a newer program: this one must not use it.
    case tooNew(database: Int, known: Int)
    /// The applied versions are not 1, 2, 3… without gaps.
    case damaged(applied: [Int])

    /// The plan for a database that applied `applied` (in any order).
    public init(applied: [Int], known: [Migration]) {
        let applied = applied.sorted()
        guard applied.enumerated().allSatisfy({ $0.offset + 1 == $0.element }) else {
            self = .damaged(applied: applied)
            return
        }
        let newest = applied.last ?? 0
        let knownNewest = known.map(\.version).max() ?? 0
        if newest > knownNewest {
            self = .tooNew(database: newest, known: knownNewest)
            return
        }
        let due = known.filter { $0.version > newest }.sorted { $0.version < $1.version }
        self = due.isEmpty ? .upToDate : .apply(due)
    }
}

/// The schema of fileshare's shared database.
public enum Schema {
    /// Every migration this program knows, oldest first.
    public static let migrations: [Migration] = [
        Migration(
            version: 1, name: "the change log",
            statements: [
                // One row per folder: the newest number handed out, so a
                // number is never handed out twice, even once retention
                // removed every record.
                """
                CREATE TABLE change_log_folders (
                    folder text PRIMARY KEY,
                    last_seq bigint NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                """
                CREATE TABLE change_log (
                    folder text NOT NULL REFERENCES change_log_folders (folder) ON DELETE CASCADE,
                    seq bigint NOT NULL CHECK (seq > 0),
                    time_ns bigint NOT NULL,
                    event text NOT NULL,
                    -- Who made it through fileshare (all null when nobody did).
                    origin_face text,
                    origin_client text,
                    origin_user text,
                    origin_method text,
                    PRIMARY KEY (folder, seq)
                )
                """,
            ]),
        Migration(
            version: 2, name: "the writer's epoch and the origins of followers' changes",
            statements: [
                // Moved on by each server that takes over writing a folder's
                // log; a commit names the epoch it writes in, so a writer
                // that lost the lead without noticing is refused (fencing).
                "ALTER TABLE change_log_folders ADD COLUMN writer_epoch bigint NOT NULL DEFAULT 0",
                // A follower's change in progress: the leader's observer sees
                // the change, and its commit gives the record this origin.
                """
                CREATE TABLE change_origins (
                    id bigserial PRIMARY KEY,
                    folder text NOT NULL,
                    paths text[] NOT NULL,
                    face text NOT NULL,
                    client text NOT NULL,
                    user_name text,
                    method text NOT NULL,
                    expires_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX change_origins_folder ON change_origins (folder, expires_at)",
            ]),
        Migration(
            version: 3, name: "WebDAV locks and resumable uploads",
            statements: [
                // One row per lock; its end on the database's clock
                // (nanoseconds since the epoch), so every server judges it alike.
                """
                CREATE TABLE dav_locks (
                    folder text NOT NULL,
                    token text NOT NULL,
                    root text NOT NULL,
                    deep boolean NOT NULL,
                    exclusive boolean NOT NULL,
                    owner text,
                    user_name text,
                    timeout_seconds bigint NOT NULL CHECK (timeout_seconds > 0),
                    expires_ns bigint NOT NULL,
                    PRIMARY KEY (folder, token)
                )
                """,
                // A resumable upload's state (its bytes stay in the folder's
                // staging area); `writer` holds it while one server writes,
                // for `writing_until` at most.
                """
                CREATE TABLE resumable_uploads (
                    folder text NOT NULL,
                    token text NOT NULL,
                    path text NOT NULL,
                    length bigint NOT NULL CHECK (length >= 0),
                    offset_bytes bigint NOT NULL DEFAULT 0,
                    conditions text[] NOT NULL DEFAULT '{}',
                    user_name text,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    expires_at timestamptz NOT NULL,
                    writer text,
                    writing_until timestamptz,
                    PRIMARY KEY (folder, token)
                )
                """,
            ]),
        Migration(
            version: 4, name: "sessions and share links",
            statements: [
                // The page's sessions (kind 'user') and share links' visitors
                // (kind 'link', user_name is the link's id). Only SHA-256 of
                // the session id is kept; the stamp ties a session to the
                // password it was signed in with. Times are the database's.
                """
                CREATE TABLE sessions (
                    folder text NOT NULL,
                    id_hash text NOT NULL,
                    kind text NOT NULL,
                    user_name text NOT NULL,
                    stamp text NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    last_seen timestamptz NOT NULL DEFAULT now(),
                    expires_at timestamptz NOT NULL,
                    PRIMARY KEY (folder, id_hash)
                )
                """,
                "CREATE INDEX sessions_user ON sessions (folder, kind, user_name)",
                "CREATE INDEX sessions_expiry ON sessions (folder, expires_at)",
                // A folder's share links; times in seconds since the epoch,
                // as the links' own file keeps them.
                """
                CREATE TABLE share_links (
                    folder text NOT NULL,
                    id text NOT NULL,
                    token_hash text NOT NULL,
                    item text NOT NULL,
                    path text NOT NULL,
                    access text NOT NULL,
                    creator text,
                    created bigint NOT NULL,
                    expires bigint,
                    password_hash text,
                    max_downloads integer,
                    downloads integer NOT NULL DEFAULT 0 CHECK (downloads >= 0),
                    ended text,
                    ended_at bigint,
                    PRIMARY KEY (folder, id),
                    UNIQUE (folder, token_hash)
                )
                """,
            ]),
    ]

    /// The newest version this program knows.
    public static var version: Int { migrations.map(\.version).max() ?? 0 }

    /// The advisory lock migrations are run under, so two servers starting
    /// at once migrate one after the other (`fileshar` in ASCII).
    static let migrationLock: Int64 = 0x6669_6C65_7368_6172
}

/// What the database's schema is, against what this program knows.
public struct SchemaStatus: Sendable, Hashable {
    /// The versions the database applied, oldest first (none for a new database).
    public var applied: [Int]
    /// What is due.
    public var plan: MigrationPlan

    /// The database's version (0 for a new database).
    public var version: Int { applied.max() ?? 0 }
}

extension Database {
    /// The schema's state, read without changing anything.
    /// - Throws: ``DatabaseError`` when the database cannot be read.
    public func schemaStatus(known: [Migration] = Schema.migrations) async throws(DatabaseError) -> SchemaStatus {
        let applied = try await withConnection(doing: "read the schema's version") { connection in
            let exists = try await connection.query(
                "SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger
            ).collect().first?.decode(Bool.self)
            guard exists == true else { return [Int]() }
            var versions: [Int] = []
            for try await version in try await connection.query(
                "SELECT version FROM schema_migrations ORDER BY version", logger: logger
            ).decode(Int.self) {
                versions.append(version)
            }
            return versions
        }
        return SchemaStatus(applied: applied, plan: MigrationPlan(applied: applied, known: known))
    }

    /// Brings the schema up to date: every due migration, in order, once,
    /// in one transaction under an advisory lock (servers starting at once
    /// wait for each other; a failure leaves nothing of it).
    /// - Returns: The versions applied now (none when it was up to date).
    /// - Throws: ``DatabaseError``: `.schemaTooNew` when a newer program
    ///   migrated the database, `.schemaDamaged`, `.migrationFailed` with
    ///   the statement's error, `.unavailable`.
    @discardableResult
    public func migrate(_ known: [Migration] = Schema.migrations) async throws(DatabaseError) -> [Int] {
        let logger = self.logger
        let url = self.url
        return try await withTransaction(doing: "migrate the schema") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Schema.migrationLock))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """, logger: logger)
            var applied: [Int] = []
            for try await version in try await connection.query(
                "SELECT version FROM schema_migrations ORDER BY version", logger: logger
            ).decode(Int.self) {
                applied.append(version)
            }
            switch MigrationPlan(applied: applied, known: known) {
            case .upToDate:
                return [Int]()
            case .tooNew(let database, let knownVersion):
                throw DatabaseError(
                    code: .schemaTooNew,
                    message:
                        "the database \(url) has schema version \(database); this fileshare knows up to \(knownVersion): use a newer fileshare"
                )
            case .damaged(let versions):
                throw DatabaseError(
                    code: .schemaDamaged,
                    message:
                        "the database \(url) lists schema versions \(versions), not 1, 2, 3… without gaps: it was changed by hand"
                )
            case .apply(let due):
                for migration in due {
                    for statement in migration.statements {
                        do {
                            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                        } catch {
                            let reason = DatabaseError(error, doing: "run it").message
                            throw DatabaseError(
                                code: .migrationFailed,
                                message:
                                    "migration \(migration.version) (\(migration.name)) failed, nothing of it was kept: \(reason)"
                            )
                        }
                    }
                    try await connection.query(
                        "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: logger)
                    logger.info(
                        "database migrated", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                }
                return due.map(\.version)
            }
        }
    }
}
