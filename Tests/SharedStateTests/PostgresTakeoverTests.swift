import ChangeLog
import FileshareTestSupport
import Logging
import SharedState
import Testing

/// The writer of a shared log changing hands: the epoch fences the one
/// replaced, the next numbers on from what was committed, and a follower's
/// origins reach the records the leader commits.
@Suite("taking over the change log in PostgreSQL", .timeLimit(.minutes(5)))
struct PostgresTakeoverTests {
    static let logger = PostgresServerTests.logger

    static func entry(_ path: String) -> ChangeLogEntry {
        ChangeLogEntry(
            event:
                #"{"type":"added","path":"\#(path)","id":"00000000000000aa","kind":"file","size":1,"writing":false}"#,
            time: 1_764_000_000_000_000_000)
    }

    @Test("the server that takes over numbers on; the one it replaced is refused at its next commit")
    func fenced() async throws {
        try await PostgresChangeLogTests.withDatabase { database in
            let first = try await PostgresChangeLog.open(
                folder: "f", database: database, mode: .following, logger: Self.logger)
            let second = try await PostgresChangeLog.open(
                folder: "f", database: database, mode: .following, logger: Self.logger)
            // A follower appends nothing.
            #expect(throws: ChangeLogError.self) { try second.append([Self.entry("x")]) }
            try await first.beginWriting()
            try first.append([Self.entry("a"), Self.entry("b")])
            try await first.flush()
            #expect(first.latest == 2)

            // The second takes over without the first noticing (a partition).
            try await second.beginWriting()
            #expect(second.isWriting && second.latest == 2)
            try first.append([Self.entry("late")])
            await #expect(throws: ChangeLogError.self) { try await first.flush() }
            try second.append([Self.entry("c")])
            try await second.flush()
            #expect(second.latest == 3)
            guard case .records(let records, _) = try await second.read(after: 0, limit: 10) else {
                Issue.record("expired")
                return
            }
            #expect(records.map(\.seq) == [1, 2, 3])
            #expect(!records.contains { $0.event.contains("late") }, "the replaced writer's record is not kept")

            // Stepping down: appends refused, the log followed again.
            second.endWriting()
            #expect(!second.isWriting)
            #expect(throws: ChangeLogError.self) { try second.append([Self.entry("d")]) }
            first.close()
            second.close()
        }
    }

    @Test("a follower's registered origin is given to the leader's record of its paths, and released")
    func followerOrigin() async throws {
        try await PostgresChangeLogTests.withDatabase { database in
            let leader = try await PostgresChangeLog.open(
                folder: "f", database: database, mode: .following, logger: Self.logger)
            try await leader.beginWriting()
            let origins = PostgresOrigins(folder: "f", database: database)
            let origin = ChangeOrigin(face: "api", client: "10.0.0.7", user: "ann", method: "PUT")
            let key = try await origins.register(paths: ["docs"], origin: origin)
            // Under a registered folder; and one elsewhere, without an origin.
            try leader.append([Self.entry("docs/a.txt"), Self.entry("other.txt")])
            try await leader.flush()
            await origins.release(key)
            try leader.append([Self.entry("docs/b.txt")])
            try await leader.flush()

            let reader = try await PostgresChangeLog.open(
                folder: "f", database: database, mode: .reading, logger: Self.logger)
            for log in [leader, reader] {
                guard case .records(let records, _) = try await log.read(after: 0, limit: 10) else {
                    Issue.record("expired")
                    return
                }
                #expect(records.map(\.origin) == [origin, nil, nil], "\(records.map(\.jsonLine))")
            }
            leader.close()
            reader.close()
        }
    }
}
