import Accounts
import ArgumentParser
import ChangeLog
import FileSharing
import FileWatching
import Logging
import SharedState

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare db`: the shared database of several servers of one folder.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db",
        abstract: "The PostgreSQL database several servers of one folder share.",
        subcommands: [Check.self]
    )

    /// `fileshare db check URL`: whether a database is usable, as `cli.md` says.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say whether a database is usable: its server's version, its schema's, and what is due.",
            discussion: """
                Connects once, changes nothing. Exit 0: usable, the schema up to date; 3: usable, \
                migrations are due ('fileshare serve --database' runs them at start); 4: not usable by this \
                fileshare (its schema is newer, or damaged); 1: cannot connect or read; 2: bad usage \
                (an unreadable URL).
                """
        )

        @Argument(
            help: ArgumentHelp(
                "postgres://user@host:port/database, or postgresql:///database?host=/socket/folder (default: FILESHARE_DATABASE)",
                valueName: "URL"))
        var url: String?

        func run() async throws {
            let logger = CommandOutput.startLogging("fileshare.db", level: .critical)
            guard let text = url ?? ProcessInfoLite.environment["FILESHARE_DATABASE"].flatMap({ $0.isEmpty ? nil : $0 })
            else {
                CommandOutput.fail("give the database URL (or set FILESHARE_DATABASE)", code: 2)
            }
            let url: DatabaseURL
            do {
                url = try DatabaseURL(text)
            } catch {
                CommandOutput.fail(error.message, code: 2)
            }
            let database: SharedState.Database
            do {
                database = try await SharedState.Database.open(url, logger: logger)
            } catch {
                CommandOutput.fail(error.message, code: 1)
            }
            let status: SchemaStatus
            do {
                status = try await database.whileRunning { try await database.schemaStatus() }
            } catch let error as DatabaseError {
                CommandOutput.fail(error.message, code: 1)
            } catch {
                CommandOutput.fail("\(error)", code: 1)
            }
            var lines = ["database: \(url)", "server: PostgreSQL \(database.serverVersion)"]
            let code: Int32
            switch status.plan {
            case .upToDate:
                lines.append("schema: version \(status.version), up to date")
                code = 0
            case .apply(let due):
                lines.append(
                    "schema: version \(status.version); due: "
                        + due.map { "\($0.version) (\($0.name))" }.joined(separator: ", ")
                        + " ('fileshare serve --database' migrates at start)")
                code = 3
            case .tooNew(let version, let known):
                lines.append(
                    "schema: version \(version), newer than this fileshare knows (\(known)): use a newer fileshare")
                code = 4
            case .damaged(let applied):
                lines.append("schema: damaged: versions \(applied) are applied, not 1, 2, 3… without gaps")
                code = 4
            }
            CommandOutput.write(lines.joined(separator: "\n") + "\n")
            if code != 0 { Glibc.exit(code) }
        }
    }
}

/// The change log of `serve --database`: the database opened and migrated,
/// the folder's log in it.
struct SharedChangeLog {
    let database: SharedState.Database
    let log: PostgresChangeLog
    let key: String
    let logger: Logger

    /// What the server is given: the log, followed until this server takes
    /// the folder's lock, the origins of its changes while it follows, and
    /// the sessions, share links, WebDAV locks and resumable uploads all the
    /// folder's servers share. The one place the server and the database
    /// meet: the server's library knows only the stores' protocols.
    /// - Parameter uploadLifetime: How long a resumable upload no request moves is kept.
    func configuration(whileLeading: (@Sendable (FileObserver) async -> Void)?, uploadLifetime: Duration)
        -> ShareConfiguration.SharedDatabase
    {
        var shared = ShareConfiguration.SharedDatabase(
            changeLog: log, description: database.url.description,
            lock: LeadershipLock(folder: key, url: database.url, logger: logger),
            origins: DatabaseOrigins(origins: PostgresOrigins(folder: key, database: database)),
            whileLeading: whileLeading,
            sessions: PostgresSessionStore(folder: key, database: database),
            links: PostgresLinkStore(folder: key, database: database),
            linkVisitors: PostgresSessionStore(folder: key, database: database, kind: .link))
        shared.locks = PostgresLockStore(database: database, folder: key, logger: logger)
        // This server, as the writer of the uploads it claims.
        var random = SystemRandomNumberGenerator()
        shared.uploads = PostgresUploadState(
            database: database, folder: key, server: String(random.next(), radix: 16), lifetime: uploadLifetime,
            logger: logger)
        return shared
    }

    /// Opens the database (its pool runs as a service: ``SharedState/Database/whileRunning(_:)``),
    /// or exits as `cli.md` says: 2 for a URL that cannot be read, 1 for a
    /// database that cannot be reached.
    static func openDatabase(_ text: String, logger: Logger) async -> SharedState.Database {
        let url: DatabaseURL
        do {
            url = try DatabaseURL(text)
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        do {
            return try await SharedState.Database.open(url, logger: logger)
        } catch {
            CommandOutput.fail(error.message, code: 1)
        }
    }

    /// Migrates the database (its pool running) and opens the folder's log
    /// in it, or exits as `cli.md` says: 2 for a folder that cannot be
    /// named, 1 for a database that cannot be used.
    static func start(_ database: SharedState.Database, sharedFolder: String, logger: Logger) async
        -> SharedChangeLog
    {
        let key: String
        do {
            key = try FolderKey.key(forSharedFolder: sharedFolder)
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        do {
            try await database.migrate()
            let log = try await PostgresChangeLog.open(
                folder: key, database: database, mode: .following, logger: logger)
            logger.notice("the change log is in \(database.url)", metadata: ["folder": "\(key)"])
            return SharedChangeLog(database: database, log: log, key: key, logger: logger)
        } catch let error as DatabaseError {
            CommandOutput.fail(error.message, code: 1)
        } catch let error as ChangeLogError {
            CommandOutput.fail(error.message, code: 1)
        } catch {
            CommandOutput.fail("\(error)", code: 1)
        }
    }

    /// Commits what the log still holds (it was closed with the server);
    /// the database's pool stops after it.
    func close() async {
        do {
            try await log.flush()
        } catch {
            logger.error("the last changes could not be committed: \(error.message)")
        }
    }
}

/// The folder's advisory lock in the database, as the server's leadership driver holds it.
struct LeadershipLock: FolderLock {
    let folder: String
    let url: DatabaseURL
    let logger: Logger

    /// A follower tries to take the lead this often; a leader checks its connection this often.
    var retryInterval: Duration { .seconds(1) }

    func hold(reporting report: @escaping @Sendable (FolderLockEvent) -> Void) async {
        let leadership = FolderLeadership(
            folder: folder, url: url, retryInterval: retryInterval, logger: logger,
            onChange: { event in
                switch event {
                case .gained: report(.gained)
                case .lost: report(.lost)
                case .heldElsewhere: report(.heldElsewhere)
                case .unreachable: report(.unreachable)
                }
            })
        await leadership.run()
    }
}

/// The origins of a follower's changes, in the database.
struct DatabaseOrigins: SharedOrigins {
    let origins: PostgresOrigins

    func register(paths: [String], origin: ChangeOrigin) async throws -> Int64 {
        try await origins.register(paths: paths, origin: origin)
    }

    func release(_ key: Int64) async { await origins.release(key) }
}
