import Accounts
import FileshareTestSupport
import Logging
import PostgresNIO
import SharedState
import Testing

/// Sessions and share links in the database, as several servers (each its
/// own pool) see them: what one does, the others see at once.
@Suite("sessions and share links in PostgreSQL", .timeLimit(.minutes(5)))
struct SharedAccountsTests {
    /// Runs `body` with two databases (pools) on one server, migrated: two servers of one folder.
    static func withDatabases(
        _ server: PostgresServer, _ body: (Database, Database) async throws -> Void
    ) async throws {
        try await MigrationTests.withDatabases(server, count: 2) { databases in
            try await databases[0].migrate()
            try await body(databases[0], databases[1])
        }
    }

    static func link(_ id: String, max: Int? = nil, expires: Int64? = nil, creator: String? = "alice") -> ShareLink {
        ShareLink(
            id: id, tokenHash: "hash-" + id, item: "00000000000000aa", path: "Team/plan.txt", access: .read,
            creator: creator, created: 1000, expires: expires, passwordHash: nil, maxDownloads: max)
    }

    @Test("a session started through one pool is read, ended and ended by user through the other; ids are kept hashed")
    func sessions() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server) { one, two throws in
                let a = PostgresSessionStore(folder: "f", database: one)
                let b = PostgresSessionStore(folder: "f", database: two)
                let otherFolder = PostgresSessionStore(folder: "g", database: two)
                let visitors = PostgresSessionStore(folder: "f", database: two, kind: .link)
                let id = SessionTable.newID()
                try await a.start(id: id, user: "alice", stamp: "s1")
                #expect(try await b.session(id) == SessionRecord(user: "alice", stamp: "s1"))
                #expect(try await otherFolder.session(id) == nil, "another folder's")
                #expect(try await visitors.session(id) == nil, "a user's session is no link visitor's")
                let kept = try await one.withConnection(doing: "read") { connection in
                    try await connection.query("SELECT id_hash FROM sessions", logger: MigrationTests.logger)
                        .collect().map { try $0.decode(String.self) }
                }
                #expect(kept == [SessionStamp.hash(ofID: id)], "only the id's hash")
                try await b.end(id)
                #expect(try await a.session(id) == nil)

                // Ended by user: all, or all but those of the new password.
                let (old, new, other) = (SessionTable.newID(), SessionTable.newID(), SessionTable.newID())
                try await a.start(id: old, user: "alice", stamp: "s1")
                try await a.start(id: new, user: "alice", stamp: "s2")
                try await a.start(id: other, user: "bob", stamp: "s1")
                try await b.end(user: "alice", keeping: "s2")
                #expect(try await a.session(old) == nil)
                #expect(try await a.session(new)?.stamp == "s2")
                try await b.end(user: "alice", keeping: nil)
                #expect(try await a.session(new) == nil)
                #expect(try await a.session(other)?.user == "bob")
            }
        }
    }

    @Test("a session ends by the database's clock; its last use is written once per touch interval, not per request")
    func lifetimes() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server) { one, two throws in
                let lifetime = Duration.seconds(2)
                let short = PostgresSessionStore(
                    folder: "f", database: one, limits: .init(idle: .seconds(60), absolute: lifetime))
                let id = SessionTable.newID()
                // Timed from before the start: the session's lifetime runs from
                // its creation, however late a loaded machine gets to the next line.
                let clock = ContinuousClock()
                let started = clock.now
                try await short.start(id: id, user: "alice", stamp: "")
                let found = try await short.session(id) != nil
                // (Alive when asked within its lifetime; a machine too loaded to ask in time proves nothing here.)
                #expect(found || clock.now - started >= lifetime, "alive within its lifetime")
                var ended = false
                // (Patience counted from here: a loaded machine's first round trips can take long.)
                let deadline = clock.now + lifetime + .seconds(30)
                while clock.now < deadline {
                    if try await short.session(id) == nil {
                        ended = true
                        break
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                // Ended by the database's clock: not before its lifetime (less a little for the two clocks' start).
                #expect(ended && clock.now - started >= lifetime - .milliseconds(100), "absolute lifetime")

                let touched = PostgresSessionStore(folder: "f", database: two, touchInterval: .seconds(3600))
                let second = SessionTable.newID()
                try await touched.start(id: second, user: "alice", stamp: "")
                func lastSeen() async throws -> String? {
                    try await one.withConnection(doing: "read") { connection in
                        try await connection.query(
                            "SELECT last_seen::text FROM sessions WHERE id_hash = \(SessionStamp.hash(ofID: second))",
                            logger: MigrationTests.logger
                        ).collect().first?.decode(String.self)
                    }
                }
                let first = try await lastSeen()
                for _ in 0..<5 { #expect(try await touched.session(second) != nil) }
                #expect(try await lastSeen() == first, "not written within the touch interval")
                let eager = PostgresSessionStore(folder: "f", database: two, touchInterval: .zero)
                #expect(try await eager.session(second) != nil)
                #expect(try await lastSeen() != first, "written once the interval passed")
            }
        }
    }

    @Test("links: made through one pool, opened, revoked and listed through the other")
    func links() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server) { one, two throws in
                let a = PostgresLinkStore(folder: "f", database: one)
                let b = PostgresLinkStore(folder: "f", database: two)
                try await a.add(Self.link("l1"))
                try await a.add(Self.link("l2", expires: 2000, creator: "bob"))
                #expect(try await b.lookup(tokenHash: "hash-l1") == .open(Self.link("l1")))
                #expect(
                    try await PostgresLinkStore(folder: "g", database: two).lookup(tokenHash: "hash-l1") == .unknown)
                guard case .ended(_, .expired) = try await b.lookup(tokenHash: "hash-l2") else {
                    Issue.record("an expired link opens (the database's clock is long past 2000)")
                    return
                }
                #expect(try await b.links(visibleTo: "alice", isAdmin: false).map(\.id) == ["l1"])
                #expect(try await b.links(visibleTo: nil, isAdmin: false).isEmpty)
                #expect(try await b.links(visibleTo: "carol", isAdmin: true).map(\.id) == ["l1", "l2"])
                try await b.follow(id: "l1", to: "Moved/plan.txt")
                #expect(try await a.link(id: "l1")?.path == "Moved/plan.txt")
                #expect(try await b.revoke(id: "l1"))
                #expect(!(try await b.revoke(id: "nope")))
                guard case .ended(let revoked, .revoked) = try await a.lookup(tokenHash: "hash-l1") else {
                    Issue.record("a revoked link opens")
                    return
                }
                #expect(revoked.endedAt != nil)
                try await a.add(Self.link("l3"))
                try await b.itemDeleted(id: "l3")
                guard case .ended(_, .deleted) = try await a.lookup(tokenHash: "hash-l3") else {
                    Issue.record("a link to a deleted item opens")
                    return
                }
            }
        }
    }

    @Test("downloads counted at once through several pools never pass the link's limit")
    func downloadsCountedOnce() async throws {
        try await withPostgres { server in
            try await Self.withDatabases(server) { one, two throws in
                let stores = [
                    PostgresLinkStore(folder: "f", database: one), PostgresLinkStore(folder: "f", database: two),
                ]
                try await stores[0].add(Self.link("l", max: 5))
                let counted = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<40 { group.addTask { try await stores[index % 2].countDownload(id: "l") } }
                    return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
                }
                #expect(counted == 5)
                #expect(try await stores[1].link(id: "l")?.downloads == 5)
                guard case .ended(_, .usedUp) = try await stores[0].lookup(tokenHash: "hash-l") else {
                    Issue.record("a used-up link opens")
                    return
                }
                try await stores[0].add(Self.link("free"))
                for _ in 0..<3 { #expect(try await stores[1].countDownload(id: "free")) }
                #expect(try await stores[0].link(id: "free")?.downloads == 3)
            }
        }
    }

    @Test("the database gone: every call throws unavailable (never a session or link that is not there)")
    func unavailable() async throws {
        try await withPostgres { server in
            try await MigrationTests.withDatabases(server) { databases throws in
                let database = databases[0]
                try await database.migrate()
                let sessions = PostgresSessionStore(folder: "f", database: database)
                let links = PostgresLinkStore(folder: "f", database: database)
                try await sessions.start(id: SessionTable.newID(), user: "alice", stamp: "")
                // The server stops; the pool runs on.
                await server.stop()
                let id = SessionTable.newID()
                await #expect(throws: AccountsError.self) { try await sessions.session(id) }
                do {
                    _ = try await links.lookup(tokenHash: "x")
                    Issue.record("a lookup without a database answered")
                } catch let error as AccountsError {
                    #expect(error.code == .unavailable, "\(error)")
                }
            }
        }
    }
}
