public import Logging
import NIOCore
import NIOPosix
import NIOSSL
public import PostgresNIO
public import ServiceLifecycle

/// The shared database: a pool of connections to one PostgreSQL database,
/// checked when it opens. What several servers of one folder share lives
/// here: the change log, the folder's lock and origins, sessions, share
/// links, WebDAV locks and resumable uploads.
///
/// Open it with ``open(_:logger:)``. Its pool works while it runs as a
/// `Service`: ``whileRunning(_:)`` runs it around a piece of work (the
/// whole server, in `fileshare serve --database`), and
/// ``withRunning(_:logger:_:)`` opens and runs it.
public final class Database: Service, Sendable {
    /// Where it is (its description carries no credentials).
    public let url: DatabaseURL
    /// The pool of connections.
    public let client: PostgresClient
    /// The server's version, as it says (`SHOW server_version`).
    public let serverVersion: String
    let logger: Logger

    private init(url: DatabaseURL, client: PostgresClient, serverVersion: String, logger: Logger) {
        self.url = url
        self.client = client
        self.serverVersion = serverVersion
        self.logger = logger
    }

    /// Connects once to check that the database is there and the login
    /// works (a pool alone would wait and try again), and makes the pool,
    /// which works once it runs (``run()``).
    /// - Throws: ``DatabaseError`` `.unavailable`, saying why.
    public static func open(_ url: DatabaseURL, logger: Logger) async throws(DatabaseError) -> Database {
        let version = try await checkConnection(url, logger: logger)
        let client = PostgresClient(configuration: try url.clientConfiguration(), backgroundLogger: logger)
        return Database(url: url, client: client, serverVersion: version, logger: logger)
    }

    /// Runs the pool until the service group shuts down gracefully (or
    /// the task is cancelled); what still runs on it then fails.
    public func run() async {
        await client.run()
    }

    /// Opens the database and runs `body` with its pool running; the pool
    /// stops when `body` returns or throws.
    /// - Throws: ``DatabaseError`` when it cannot be opened, or what `body` threw.
    public static func withRunning<Result: Sendable>(
        _ url: DatabaseURL, logger: Logger, _ body: (Database) async throws -> Result
    ) async throws -> Result {
        let database = try await open(url, logger: logger)
        return try await database.whileRunning { try await body(database) }
    }

    /// Opens `count` pools on the database (as `count` servers of one
    /// folder have) and runs `body` with them running; they stop after it.
    public static func withRunning<Result: Sendable>(
        _ url: DatabaseURL, count: Int, logger: Logger, _ body: ([Database]) async throws -> Result
    ) async throws -> Result {
        func opening(_ opened: [Database]) async throws -> Result {
            guard opened.count < count else { return try await body(opened) }
            return try await withRunning(url, logger: logger) { try await opening(opened + [$0]) }
        }
        return try await opening([])
    }

    /// Runs `body` with the pool running (as the one service of a group),
    /// and shuts the pool down gracefully after it.
    public func whileRunning<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        let pool = ServiceGroup(configuration: ServiceGroupConfiguration(services: [self], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await pool.run() }
            let result: Result
            do {
                result = try await body()
            } catch {
                await pool.triggerGracefulShutdown()
                throw error
            }
            await pool.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        }
    }

    /// Connects once and asks the server's version.
    /// - Throws: ``DatabaseError`` `.unavailable`, saying why.
    public static func checkConnection(_ url: DatabaseURL, logger: Logger) async throws(DatabaseError) -> String {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try url.connectionConfiguration(), id: 0, logger: logger)
            do {
                let rows = try await connection.query("SHOW server_version", logger: logger).collect()
                try? await connection.close()
                return try rows.first?.decode(String.self) ?? "unknown"
            } catch {
                try? await connection.close()
                throw error
            }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(error, doing: "connect to \(url)")
        }
    }

    /// Runs `body` with a connection of the pool.
    /// - Throws: ``DatabaseError``: what `body` threw, or `.unavailable`.
    public func withConnection<Result: Sendable>(
        doing what: String, _ body: (PostgresConnection) async throws -> Result
    ) async throws(DatabaseError) -> Result {
        do {
            return try await client.withConnection { connection in try await body(connection) }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(error, doing: what)
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// - Throws: ``DatabaseError``: what `body` threw, or `.unavailable`, `.query`.
    public func withTransaction<Result: Sendable>(
        doing what: String, _ body: (PostgresConnection) async throws -> Result
    ) async throws(DatabaseError) -> Result {
        do {
            return try await client.withConnection { connection in
                try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
            }
        } catch let error as DatabaseError {
            throw error
        } catch let error as PostgresTransactionError {
            if let inner = error.closureError as? DatabaseError { throw inner }
            let cause = error.closureError ?? error.beginError ?? error.commitError ?? error.rollbackError
            throw DatabaseError(cause ?? error, doing: what)
        } catch {
            throw DatabaseError(error, doing: what)
        }
    }
}

extension DatabaseError {
    /// The error of a failed database call: `.unavailable` when the
    /// connection could not be made or broke, `.query` with the server's
    /// message when the server refused.
    init(_ error: any Error, doing what: String) {
        if let error = error as? DatabaseError {
            self = error
            return
        }
        let sendable = DatabaseError.SendableCause(description: String(reflecting: error))
        guard let error = error as? PSQLError else {
            if error is CancellationError {
                self.init(code: .closed, message: "cannot \(what): cancelled", cause: sendable)
            } else {
                self.init(code: .unavailable, message: "cannot \(what): \(error)", cause: sendable)
            }
            return
        }
        if error.code == .server, let info = error.serverInfo {
            let message = info[.message] ?? "error"
            let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            // Class 08 is a connection failure, 28 a refused login, 57P a shutdown.
            let sqlState = info[.sqlState] ?? ""
            let unavailable =
                sqlState.hasPrefix("08") || sqlState.hasPrefix("28") || sqlState.hasPrefix("57P")
                || sqlState == "3D000" || sqlState == "53300"
                // "database … is not currently accepting connections"
                || sqlState == "55000"
            self.init(
                code: unavailable ? .unavailable : .query, message: "cannot \(what): \(message)\(state)",
                cause: sendable)
            return
        }
        var reason = error.code.description
        if let underlying = error.underlying { reason += ": \(underlying)" }
        let closed = error.code == .poolClosed || error.code == .clientClosedConnection
        self.init(code: closed ? .closed : .unavailable, message: "cannot \(what): \(reason)", cause: sendable)
    }

    /// A cause kept as its text: PostgresNIO's errors are not all `Sendable`.
    struct SendableCause: Error, Sendable, CustomStringConvertible {
        var description: String
    }
}

extension DatabaseURL {
    /// The pool's configuration.
    func clientConfiguration() throws(DatabaseError) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS
            switch self.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(Self.tlsConfiguration(verify: false))
            case .require: tls = .require(Self.tlsConfiguration(verify: false))
            case .verifyFull: tls = .require(Self.tlsConfiguration(verify: true))
            }
            configuration = PostgresClient.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: tls)
        case .unixSocket(let folder, let port):
            configuration = PostgresClient.Configuration(
                unixSocketPath: folder + "/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    /// A single connection's configuration.
    func connectionConfiguration() throws(DatabaseError) -> PostgresConnection.Configuration {
        switch endpoint {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch self.tls {
                case .disable: tls = .disable
                case .prefer: tls = .prefer(try NIOSSLContext(configuration: Self.tlsConfiguration(verify: false)))
                case .require: tls = .require(try NIOSSLContext(configuration: Self.tlsConfiguration(verify: false)))
                case .verifyFull: tls = .require(try NIOSSLContext(configuration: Self.tlsConfiguration(verify: true)))
                }
            } catch {
                throw DatabaseError(
                    code: .unavailable, message: "cannot set up TLS for \(self): \(error)",
                    cause: DatabaseError.SendableCause(description: "\(error)"))
            }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: tls)
            configuration.options.connectTimeout = .seconds(10)
            return configuration
        case .unixSocket(let folder, let port):
            return PostgresConnection.Configuration(
                unixSocketPath: folder + "/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
    }

    private static func tlsConfiguration(verify: Bool) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if !verify { configuration.certificateVerification = .none }
        return configuration
    }
}
