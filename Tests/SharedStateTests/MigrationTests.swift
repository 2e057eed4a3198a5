import FileshareTestSupport
import Logging
import PostgresNIO
import SharedState
import Testing

@Suite("schema migrations")
struct MigrationTests {
    static let logger = PostgresServerTests.logger

    static let steps = [
        Migration(version: 1, name: "one", statements: ["CREATE TABLE one (x int)"]),
        Migration(version: 2, name: "two", statements: ["CREATE TABLE two (x int)", "INSERT INTO two VALUES (2)"]),
    ]

    @Test("the plan: what is due, in order; a newer or gapped database is refused")
    func plan() {
        #expect(MigrationPlan(applied: [], known: Self.steps) == .apply(Self.steps))
        #expect(MigrationPlan(applied: [1], known: Self.steps.reversed()) == .apply([Self.steps[1]]))
        #expect(MigrationPlan(applied: [2, 1], known: Self.steps) == .upToDate)
        #expect(MigrationPlan(applied: [1, 2, 3], known: Self.steps) == .tooNew(database: 3, known: 2))
        #expect(MigrationPlan(applied: [1, 3], known: Self.steps) == .damaged(applied: [1, 3]))
        #expect(MigrationPlan(applied: [2], known: Self.steps) == .damaged(applied: [2]))
    }

    /// Runs `body` with `count` pools on the server's database.
    static func withDatabases(
        _ server: PostgresServer, count: Int = 1, _ body: ([Database]) async throws -> Void
    ) async throws {
        try await Database.withRunning(try DatabaseURL(server.url), count: count, logger: logger, body)
    }

    static func count(_ table: String, in database: Database) async throws -> Int? {
        try await database.withConnection(doing: "count") { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table)"), logger: logger)
                .collect().first?.decode(Int.self)
        }
    }

    @Test("each migration runs once, in order, also when servers start at once")
    func once() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server, count: 3) { databases throws in
                #expect(try await databases[0].schemaStatus(known: Self.steps).plan == .apply(Self.steps))
                let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                    for database in databases { group.addTask { try await database.migrate(Self.steps) } }
                    return try await group.reduce(into: [[Int]]()) { $0.append($1) }
                }
                #expect(applied.sorted { $0.count > $1.count } == [[1, 2], [], []])
                #expect(try await Self.count("two", in: databases[1]) == 1)
                let status = try await databases[2].schemaStatus(known: Self.steps)
                #expect(status.applied == [1, 2] && status.version == 2 && status.plan == .upToDate)
                // A later program's third step, alone.
                let third =
                    Self.steps + [Migration(version: 3, name: "three", statements: ["CREATE TABLE three (x int)"])]
                #expect(try await databases[0].migrate(third) == [3])
            }
        }
    }

    @Test("a schema newer than the program knows is refused with a clear message")
    func tooNew() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server) { databases throws in
                let database = databases[0]
                try await database.migrate(Self.steps)
                let error = await #expect(throws: DatabaseError.self) { try await database.migrate([Self.steps[0]]) }
                #expect(error?.code == .schemaTooNew)
                #expect(error?.message.contains("schema version 2; this fileshare knows up to 1") == true)
                #expect(error?.message.contains("use a newer fileshare") == true)
            }
        }
    }

    @Test("a failing migration leaves nothing: neither its tables nor its version")
    func failing() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server) { databases throws in
                let database = databases[0]
                try await database.migrate([Self.steps[0]])
                let broken = [
                    Self.steps[0], Self.steps[1],
                    Migration(version: 3, name: "broken", statements: ["CREATE TABLE four (x int)", "SELEC nonsense"]),
                ]
                let error = await #expect(throws: DatabaseError.self) { try await database.migrate(broken) }
                #expect(error?.code == .migrationFailed)
                #expect(error?.message.contains("migration 3 (broken) failed") == true, "\(error?.message ?? "")")
                #expect(error?.message.contains("syntax error") == true, "\(error?.message ?? "")")
                let status = try await database.schemaStatus(known: broken)
                #expect(status.applied == [1])
                await #expect(throws: DatabaseError.self) { try await Self.count("two", in: database) }
            }
        }
    }

    @Test("the product schema migrates a fresh database")
    func productSchema() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server) { databases throws in
                let database = databases[0]
                #expect(try await database.migrate() == Schema.migrations.map(\.version))
                #expect(try await database.schemaStatus().plan == .upToDate)
                #expect(try await Self.count("change_log", in: database) == 0)
            }
        }
    }

    @Test("a database that cannot be reached is reported as unavailable, with the reason")
    func unreachable() async throws {
        let folder = try TemporaryFolder()
        let error = await #expect(throws: DatabaseError.self) {
            _ = try await Database.open(try DatabaseURL("postgresql:///x?host=\(folder.path)"), logger: Self.logger)
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("cannot connect to postgresql:///x?host=") == true, "\(error?.message ?? "")")
    }
}
