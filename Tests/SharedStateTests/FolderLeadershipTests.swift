import FileshareTestSupport
import Logging
import PostgresNIO
import SharedState
import Testing

/// Leadership of a folder among its servers: one at a time, and another takes over.
@Suite("leading a folder")
struct FolderLeadershipTests {
    static let logger = PostgresServerTests.logger

    @Test("one of two servers leads; when it stops, the other takes over")
    func takeover() async throws {
        try await withPostgres { server in
            let url = try DatabaseURL(server.url)
            let first = FolderLeadership(folder: "f", url: url, retryInterval: .milliseconds(100), logger: Self.logger)
            let second = FolderLeadership(folder: "f", url: url, retryInterval: .milliseconds(100), logger: Self.logger)
            let other = FolderLeadership(folder: "g", url: url, retryInterval: .milliseconds(100), logger: Self.logger)
            let firstRun = Task { await first.run() }
            #expect(await PostgresChangeLogTests.finishes(within: .seconds(20)) { await first.waitForLeadership() })
            let secondRun = Task { await second.run() }
            let otherRun = Task { await other.run() }
            // Another folder has a leader of its own.
            #expect(await PostgresChangeLogTests.finishes(within: .seconds(20)) { await other.waitForLeadership() })
            // Several tries of the second, and still only one leader.
            try await Task.sleep(for: .milliseconds(500))
            #expect(first.isLeader && !second.isLeader)
            firstRun.cancel()
            await firstRun.value
            #expect(!first.isLeader)
            #expect(await PostgresChangeLogTests.finishes(within: .seconds(20)) { await second.waitForLeadership() })
            secondRun.cancel()
            otherRun.cancel()
            await secondRun.value
            await otherRun.value
        }
    }

    @Test("a leader whose connection is cut loses the lead, and another takes it")
    func cutConnection() async throws {
        try await withPostgres { server in
            let url = try DatabaseURL(server.url)
            let first = FolderLeadership(folder: "f", url: url, retryInterval: .milliseconds(100), logger: Self.logger)
            let firstRun = Task { await first.run() }
            #expect(await PostgresChangeLogTests.finishes(within: .seconds(20)) { await first.waitForLeadership() })
            let second = FolderLeadership(folder: "f", url: url, retryInterval: .milliseconds(100), logger: Self.logger)
            let secondRun = Task { await second.run() }
            // The database ends the leader's session, as a network cut or an admin would.
            let database = try await Database.open(url, logger: Self.logger)
            try await database.withConnection(doing: "end the leader's session") { connection in
                try await connection.query(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_locks
                    WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
                    """, logger: Self.logger)
            }
            await database.close()
            #expect(await PostgresChangeLogTests.finishes(within: .seconds(20)) { await second.waitForLeadership() })
            // The first noticed, and now follows.
            #expect(await waitUntil { !first.isLeader })
            firstRun.cancel()
            secondRun.cancel()
            await firstRun.value
            await secondRun.value
        }
    }

    /// Polls `condition` for up to 20 s.
    func waitUntil(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<2000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }
}
