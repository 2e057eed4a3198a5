import FileshareTestSupport
import Foundation
import Logging
import SharedState
import Testing

@testable import FileSharing

/// Resumable uploads whose state is in the database: a claim holds across
/// servers (each with its own pool, as separate processes have), ends with
/// its lease, and the uploads whose time is over go with their staged bytes.
@Suite("resumable uploads in the database", .timeLimit(.minutes(10)))
struct SharedUploadStateTests {
    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    /// Two "servers" of one folder over one database.
    static func withServers(
        lifetime: Duration = .seconds(3600), lease: Duration = .seconds(3600),
        _ body: ([PostgresUploadState], PostgresServer) async throws -> Void
    ) async throws {
        try await withPostgres { server in
            try await Database.withRunning(try DatabaseURL(server.url), count: 2, logger: logger) { databases in
                for database in databases { try await database.migrate() }
                let states = databases.enumerated().map { index, database in
                    PostgresUploadState(
                        database: database, folder: "folder-key", server: "server-\(index)", lifetime: lifetime,
                        claimLease: lease, logger: logger)
                }
                try await body(states, server)
            }
        }
    }

    static func upload(_ token: String) throws -> SharedUpload {
        SharedUpload(
            token: token, path: try SharePath(plain: "dir/file.bin"), length: 10, conditions: ["if-match \"e\""],
            owner: "alice")
    }

    @Test("one server's claim makes the other's busy until it is released; an unknown upload says so")
    func claims() async throws {
        try await Self.withServers { states, _ in
            let (a, b) = (states[0], states[1])
            let recorded = try await a.register(try Self.upload("t1"), limits: .standard)
            #expect(recorded == nil)
            #expect(try await a.claim("t1") == .claimed)
            #expect(try await b.claim("t1") == .busy)
            #expect(try await a.claim("t1") == .busy, "one request at a time on one server too")
            await a.release("t1", offset: 5)
            #expect(try await b.claim("t1") == .claimed)
            #expect(try await b.claim("nothing") == .unknown)
            await b.remove("t1")
            #expect(try await a.claim("t1") == .unknown)
        }
    }

    @Test("claims racing from two servers: exactly one wins")
    func race() async throws {
        try await Self.withServers { states, _ in
            let recorded = try await states[0].register(try Self.upload("t"), limits: .standard)
            #expect(recorded == nil)
            let won = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<16 {
                    let state = states[index % 2]
                    group.addTask { try await state.claim("t") == .claimed }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(won == 1)
        }
    }

    @Test("the limits hold across servers: of uploads started at once on both, exactly as many as allowed are recorded")
    func limitsAcrossServers() async throws {
        // (Each start holds the folder's lock for a few round trips: eight
        // at once is a race, and a loaded machine still answers them within
        // the database's time limit.)
        try await MachineSettings.shared {
            try await limitsAcrossServers(starting: 8)
        }
    }

    func limitsAcrossServers(starting count: Int) async throws {
        try await Self.withServers { states, _ in
            let limits = PendingUploadLimits(lifetime: .seconds(3600), perOwner: 3, total: 5)
            let answers = try await withThrowingTaskGroup(of: PendingUploadLimitError?.self) { group in
                for index in 0..<count {
                    let state = states[index % 2]
                    group.addTask {
                        var upload = try Self.upload("alice-\(index)")
                        upload.owner = "alice"
                        return try await state.register(upload, limits: limits)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0 == nil }.count == 3)
            #expect(answers.filter { $0?.code == .owner }.count == count - 3)
            // Another owner has room until the folder is full.
            for index in 0..<2 {
                var upload = try Self.upload("bob-\(index)")
                upload.owner = "[127.0.0.1]"
                #expect(try await states[index].register(upload, limits: limits) == nil)
            }
            var upload = try Self.upload("carol")
            upload.owner = "carol"
            #expect(try await states[0].register(upload, limits: limits)?.code == .folder)
            // An upload that ends makes room.
            for index in 0..<count { await states[1].remove("alice-\(index)") }
            #expect(try await states[0].register(upload, limits: limits) == nil)
        }
    }

    @Test("a claim ends with its lease (a server that died writing holds nothing for long)")
    func lease() async throws {
        try await Self.withServers(lease: .milliseconds(100)) { states, _ in
            let recorded = try await states[0].register(try Self.upload("t"), limits: .standard)
            #expect(recorded == nil)
            #expect(try await states[0].claim("t") == .claimed)
            var claimed = false
            for _ in 0..<100 where !claimed {
                claimed = try await states[1].claim("t") == .claimed
                if !claimed { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(claimed)
        }
    }

    @Test("uploads whose time is over go with their staged bytes; one being written stays")
    func expiry() async throws {
        try await MachineSettings.shared {
            // (A lifetime a loaded machine can begin and claim an upload within.)
            try await Self.withServers(lifetime: .seconds(3)) { states, _ in
                let share = try ShareFixture()
                let core = share.server.core
                let uploads = ResumableUploads(folder: core.folder, shared: states[0])
                let writing = ResumableUploads(folder: core.folder, shared: states[1])
                let token = try await uploads.begin(
                    path: try SharePath(plain: "a.bin"), length: 10, owner: "alice", core: core)
                let busy = try await writing.begin(
                    path: try SharePath(plain: "b.bin"), length: 10, owner: "alice", core: core)
                #expect(try await writing.claim(busy))
                #expect(uploads.exists(token) && uploads.exists(busy))
                var expired = 0
                let deadline = ContinuousClock.now + .seconds(60)
                while expired == 0 && ContinuousClock.now < deadline {
                    expired = try await uploads.expire()
                    if expired == 0 { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(expired == 1)
                #expect(!uploads.exists(token), "its staged bytes are gone")
                #expect(uploads.exists(busy), "the one being written stays")
                #expect(try await uploads.claim(busy) == false)
            }
        }
    }

    @Test("the database stopped: no claim is granted, with a reason")
    func databaseDown() async throws {
        try await Self.withServers { states, server in
            let recorded = try await states[0].register(try Self.upload("t"), limits: .standard)
            #expect(recorded == nil)
            await server.stop()
            do {
                _ = try await states[1].claim("t")
                Issue.record("a claim was granted without the database")
            } catch let error as UploadStateError {
                #expect(error.message.contains("database"), "\(error)")
            }
        }
    }
}
