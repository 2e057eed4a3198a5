import ChangeLog
import FileshareTestSupport
import Logging
import PostgresNIO
import SharedState
import Testing

/// What only the log in PostgreSQL does: readers in other servers, a second writer.
/// (What every log does is in ChangeLogTests, run against both.)
@Suite("the change log in PostgreSQL")
struct PostgresChangeLogTests {
    static let logger = PostgresServerTests.logger

    static func entry(_ index: Int) -> ChangeLogEntry {
        ChangeLogEntry(event: #"{"type":"removed","path":"file \#(index).txt"}"#, time: 1_764_000_000_000_000_000)
    }

    /// A migrated database of a throwaway server.
    static func withDatabase(_ body: (Database) async throws -> Void) async throws {
        try await withPostgres { server in
            try await Database.withRunning(try DatabaseURL(server.url), logger: logger) { database in
                try await database.migrate()
                try await body(database)
            }
        }
    }

    /// Whether `operation` finished within `timeout`.
    static func finishes(within timeout: Duration, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await operation()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    @Test("a reader in another server is woken by NOTIFY, and reads by cursor")
    func notified() async throws {
        try await Self.withDatabase { database in
            let writer = try await PostgresChangeLog.open(folder: "f", database: database, logger: Self.logger)
            // No poll within the test's time: only a notification can wake it.
            let reader = try await PostgresChangeLog.open(
                folder: "f", database: database, mode: .reading,
                options: PostgresChangeLog.Options(pollInterval: .seconds(3600)), logger: Self.logger)
            #expect(reader.latest == 0)
            // The listener is set up in the background: an append before it
            // listens is read at its start, so either way the reader wakes.
            let woken = Task { await reader.waitForRecords(after: 0) }
            try writer.append([Self.entry(1), Self.entry(2)])
            try await writer.flush()
            #expect(await Self.finishes(within: .seconds(20)) { await woken.value })
            #expect(reader.latest == 2)
            guard case .records(let records, let next) = try await reader.read(after: 0, limit: 10) else {
                throw PostgresError("expired")
            }
            #expect(records.map(\.seq) == [1, 2] && next == 2)
            #expect(records[1].event == Self.entry(2).event)
            // And again, once it surely listens.
            let again = Task { await reader.waitForRecords(after: 2) }
            try writer.append([Self.entry(3)])
            #expect(await Self.finishes(within: .seconds(20)) { await again.value })
            #expect(reader.latest == 3)
            #expect(throws: ChangeLogError.self) { try reader.append([Self.entry(4)]) }
            reader.close()
            writer.close()
        }
    }

    @Test("without a notification, the poll finds what was committed")
    func polled() async throws {
        try await Self.withDatabase { database in
            let writer = try await PostgresChangeLog.open(folder: "f", database: database, logger: Self.logger)
            let reader = try await PostgresChangeLog.open(
                folder: "f", database: database, mode: .reading,
                options: PostgresChangeLog.Options(pollInterval: .milliseconds(100)), logger: Self.logger)
            let woken = Task { await reader.waitForRecords(after: 0) }
            // A commit whose notification is lost: rows and number, no NOTIFY.
            try await database.withTransaction(doing: "commit by hand") { connection in
                try await connection.query(
                    "UPDATE change_log_folders SET last_seq = 1 WHERE folder = 'f'", logger: Self.logger)
                try await connection.query(
                    """
                    INSERT INTO change_log (folder, seq, time_ns, event) VALUES ('f', 1, 0, '{"type":"removed","path":"x"}')
                    """, logger: Self.logger)
            }
            #expect(await Self.finishes(within: .seconds(20)) { await woken.value })
            guard case .records(let records, _) = try await reader.read(after: 0, limit: 10) else {
                throw PostgresError("expired")
            }
            #expect(records.map(\.event) == [#"{"type":"removed","path":"x"}"#])
            // The writer, which began before, is caught: its number 1 is taken.
            try writer.append([Self.entry(1)])
            let error = await #expect(throws: ChangeLogError.self) { try await writer.flush() }
            #expect(error?.code == .busy)
            #expect(throws: ChangeLogError.self) { try writer.append([Self.entry(2)]) }
            reader.close()
            writer.close()
        }
    }

    @Test("two writers of one folder: the second to commit is refused, nothing is interleaved")
    func secondWriter() async throws {
        try await Self.withDatabase { database in
            let first = try await PostgresChangeLog.open(folder: "f", database: database, logger: Self.logger)
            let second = try await PostgresChangeLog.open(folder: "f", database: database, logger: Self.logger)
            try first.append([Self.entry(1), Self.entry(2)])
            try await first.flush()
            try second.append([Self.entry(10)])
            let error = await #expect(throws: ChangeLogError.self) { try await second.flush() }
            #expect(error?.code == .busy)
            #expect(error?.message.contains("only one may write it") == true)
            try first.append([Self.entry(3)])
            try await first.flush()
            guard case .records(let records, _) = try await first.read(after: 0, limit: 10) else {
                throw PostgresError("expired")
            }
            #expect(records.map(\.seq) == [1, 2, 3])
            #expect(!records.contains { $0.event.contains("file 10") })
            first.close()
            second.close()
        }
    }

    @Test("folders are separate logs in one table; reading a folder without a log says so")
    func folders() async throws {
        try await Self.withDatabase { database in
            let one = try await PostgresChangeLog.open(folder: "one", database: database, logger: Self.logger)
            let two = try await PostgresChangeLog.open(folder: "two", database: database, logger: Self.logger)
            try one.append([Self.entry(1), Self.entry(2)])
            try two.append([Self.entry(3)])
            try await one.flush()
            try await two.flush()
            #expect(one.latest == 2 && two.latest == 1)
            let error = await #expect(throws: ChangeLogError.self) {
                _ = try await PostgresChangeLog.open(
                    folder: "three", database: database, mode: .reading, logger: Self.logger)
            }
            #expect(error?.code == .notFound)
            one.close()
            two.close()
        }
    }

    @Test("text PostgreSQL cannot hold (a NUL) does not stop the writer")
    func nul() async throws {
        try await Self.withDatabase { database in
            let log = try await PostgresChangeLog.open(folder: "f", database: database, logger: Self.logger)
            let origin = ChangeOrigin(face: "api", client: "1.2.3.4:5", user: "a\u{0}b", method: "PUT")
            try log.append([ChangeLogEntry(event: #"{"type":"removed","path":"x"}"#, time: 0, origin: origin)])
            try await log.flush()
            #expect(log.latest == 1)
            log.close()
        }
    }
}

struct PostgresError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
