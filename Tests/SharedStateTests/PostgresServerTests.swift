import FileshareTestSupport
import Foundation
import Logging
import PostgresNIO
import SharedState
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The test harness itself: a throwaway server per test, gone on every path out.
@Suite("a throwaway PostgreSQL for tests")
struct PostgresServerTests {
    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    /// The postmaster's process id, from its pid file.
    static func postmaster(of server: PostgresServer) throws -> pid_t {
        let text = try String(contentsOfFile: server.folder("data/postmaster.pid"), encoding: .utf8)
        return try #require(text.split(separator: "\n").first.flatMap { pid_t($0) })
    }

    static func isAlive(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 }

    @Test("a server answers on its own socket, and is gone with its socket when the scope ends")
    func scope() async throws {
        var postmaster: pid_t = 0
        var socket = ""
        let version = try await withPostgres { server in
            postmaster = try Self.postmaster(of: server)
            socket = server.socketFolder + "/.s.PGSQL.5432"
            #expect(FileManager.default.fileExists(atPath: socket))
            let database = try await Database.open(try DatabaseURL(server.url), logger: Self.logger)
            return database.serverVersion
        }
        #expect(version.first?.isNumber == true, "\(version)")
        #expect(!Self.isAlive(postmaster))
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test("a test that throws still stops its server")
    func throwing() async throws {
        struct Boom: Error {}
        var postmaster: pid_t = 0
        await #expect(throws: Boom.self) {
            try await withPostgres { server in
                postmaster = try Self.postmaster(of: server)
                throw Boom()
            }
        }
        #expect(postmaster != 0 && !Self.isAlive(postmaster))
    }

    @Test("a cancelled test still stops its server")
    func cancelled() async throws {
        let started = AsyncStream<pid_t>.makeStream()
        let task = Task {
            try await withPostgres { server in
                started.continuation.yield(try Self.postmaster(of: server))
                try await Task.sleep(for: .seconds(600))
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        let postmaster = try #require(await iterator.next())
        task.cancel()
        _ = await task.result
        #expect(!Self.isAlive(postmaster))
    }

    @Test("two servers at once are separate")
    func separate() async throws {
        try await withPostgres { first in
            try await withPostgres { second in
                #expect(first.socketFolder != second.socketFolder)
                try await Database.withRunning(try DatabaseURL(first.url), logger: Self.logger) { one in
                    _ = try await one.withConnection(doing: "make a table") { connection in
                        try await connection.query("CREATE TABLE only_here (x int)", logger: Self.logger)
                    }
                }
                let seen = try await Database.withRunning(try DatabaseURL(second.url), logger: Self.logger) { two in
                    try await two.withConnection(doing: "look for it") { connection in
                        try await connection.query("SELECT to_regclass('only_here') IS NOT NULL", logger: Self.logger)
                            .collect().first?.decode(Bool.self)
                    }
                }
                #expect(seen == false)
            }
        }
    }
}
