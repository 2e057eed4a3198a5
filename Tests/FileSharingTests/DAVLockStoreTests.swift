import FileshareTestSupport
import Foundation
import Logging
import SharedState
import Synchronization
import Testing

@testable import FileSharing

/// The two lock stores behind one protocol, through `WebDAVState` as the
/// WebDAV face uses them: the same scenarios on the table in the process and
/// on the database's table, so both keep the rules `DAVLockTable` decides
/// (tested on its own in `WebDAVLogicTests`).
@Suite("WebDAV lock stores", .timeLimit(.minutes(10)))
struct DAVLockStoreTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case file, postgres
        var testDescription: String { rawValue }
    }

    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    /// Runs `body` with `count` states over one store of `kind`: for the
    /// database, each with its own pool, as servers of one folder are.
    /// - Parameter timeLimit: The PostgreSQL store's patience: long, so a
    ///   loaded machine (the whole suite at once) does not turn a slow answer
    ///   into a refusal; short where the test waits for the refusal.
    static func withStates(
        _ kind: Kind, count: Int = 1, timeLimit: Duration = .seconds(60),
        capacityPerUser: Int = DAVLockTable.defaultCapacityPerUser,
        _ body: ([WebDAVState], PostgresServer?) async throws -> Void
    ) async throws {
        switch kind {
        case .file:
            let folder = try TemporaryFolder()
            let store = FileLockStore(persistencePath: folder("locks.json"), capacityPerUser: capacityPerUser)
            try await body((0..<count).map { _ in WebDAVState(store: store) }, nil)
        case .postgres:
            try await withPostgres { server in
                try await Database.withRunning(try DatabaseURL(server.url), count: count, logger: logger) {
                    databases in
                    for database in databases { try await database.migrate() }
                    let states = databases.map {
                        WebDAVState(
                            store: PostgresLockStore(
                                database: $0, folder: "folder-key", capacityPerUser: capacityPerUser,
                                timeLimit: timeLimit, logger: logger))
                    }
                    try await body(states, server)
                }
            }
        }
    }

    static func lock(
        _ token: String, _ path: String, deep: Bool = true, exclusive: Bool = true, seconds: Int64 = 60, now: Int64
    ) -> DAVLock {
        DAVLock(
            token: token, root: try! SharePath(plain: path), isDeep: deep, isExclusive: exclusive,
            owner: "<D:owner xmlns:D=\"DAV:\">o</D:owner>", user: "alice", timeout: seconds,
            expires: now + seconds * 1_000_000_000)
    }

    static func add(_ state: WebDAVState, _ token: String, _ path: String, deep: Bool = true, exclusive: Bool = true)
        async throws(DAVLockStoreError) -> DAVLockTable.LockResult
    {
        try await state.changingLocks { table, now in
            table.add(lock(token, path, deep: deep, exclusive: exclusive, now: now), now: now)
        }
    }

    static func isLocked(_ result: DAVLockTable.LockResult) -> Bool {
        if case .locked = result { true } else { false }
    }

    @Test("conflicts, tokens, refresh and unlock keep the table's rules", arguments: Kind.allCases)
    func rules(kind: Kind) async throws {
        try await Self.withStates(kind) { states, _ in
            let state = states[0]
            #expect(Self.isLocked(try await Self.add(state, "a", "docs")))
            let conflict = try await Self.add(state, "b", "docs/x")
            let first = try #require(try await state.lock(token: "a"))
            #expect(conflict == .conflict(first))
            #expect(Self.isLocked(try await Self.add(state, "c", "other", exclusive: false)))
            #expect(Self.isLocked(try await Self.add(state, "d", "other", exclusive: false)))
            #expect(!Self.isLocked(try await Self.add(state, "e", "other")))
            // Kept as given: owner, user, depth, scope.
            let kept = try #require(try await state.lock(token: "a"))
            #expect(kept.owner == "<D:owner xmlns:D=\"DAV:\">o</D:owner>" && kept.user == "alice")
            #expect(kept.isDeep && kept.isExclusive && kept.timeout == 60)
            #expect(try await state.locks(covering: try SharePath(plain: "docs/x/y")).map(\.token) == ["a"])
            #expect(try await state.locks(coveringOrUnder: try SharePath(plain: "other")).map(\.token) == ["c", "d"])
            let x = try SharePath(plain: "docs/x")
            let missing = try await state.readingLocks { table, now in
                table.missingTokens(changing: [x], deep: [], members: [], tokens: [], now: now)?.token
            }
            #expect(missing == "a")
            let none = try await state.readingLocks { table, now in
                table.missingTokens(changing: [x], deep: [], members: [], tokens: ["a"], now: now)?.token
            }
            #expect(none == nil)
            // A refresh moves the end on and sets the new timeout.
            let docs = try SharePath(plain: "docs")
            let refreshed = try await state.changingLocks { table, now in
                table.refresh(token: "a", path: docs, timeout: 600, now: now)
            }
            #expect(refreshed?.timeout == 600 && (refreshed?.expires ?? 0) > kept.expires)
            #expect(try await state.lock(token: "a")?.timeout == 600)
            // Unlock only where the lock applies.
            let elsewhere = try await state.changingLocks { table, now in
                table.unlock(token: "a", path: try! SharePath(plain: "other"), now: now)
            }
            #expect(elsewhere == nil)
            let unlocked = try await state.changingLocks { table, now in table.unlock(token: "a", path: docs, now: now)
            }
            #expect(unlocked?.token == "a")
            #expect(try await state.lock(token: "a") == nil)
            #expect(Self.isLocked(try await Self.add(state, "b", "docs/x")))
            try await state.removeLocks(under: docs)
            #expect(try await state.locks(coveringOrUnder: docs).isEmpty)
        }
    }

    @Test("a user holds at most `capacityPerUser` locks, on every server of the folder", arguments: Kind.allCases)
    func capacityPerUser(kind: Kind) async throws {
        try await Self.withStates(kind, count: 2, capacityPerUser: 3) { states, _ in
            // Alternating between the servers: each sees the locks the other took.
            for index in 0..<3 {
                #expect(Self.isLocked(try await Self.add(states[index % 2], "a\(index)", "f\(index)")))
            }
            for state in states { #expect(try await Self.add(state, "over", "g") == .fullForUser) }
            // Another user is not held back.
            let other = try await states[1].changingLocks { table, now in
                var lock = Self.lock("b0", "g", now: now)
                lock.user = "bob"
                return table.add(lock, now: now)
            }
            #expect(Self.isLocked(other))
            let path = try SharePath(plain: "f0")
            _ = try await states[1].changingLocks { table, now in table.unlock(token: "a0", path: path, now: now) }
            #expect(Self.isLocked(try await Self.add(states[0], "again", "h")))
        }
    }

    @Test("a lock ends at its time on the store's clock", arguments: Kind.allCases)
    func expiry(kind: Kind) async throws {
        try await Self.withStates(kind) { states, _ in
            let state = states[0]
            let added = try await state.changingLocks { table, now in
                // Ends 50 ms from now.
                var short = Self.lock("short", "f", now: now)
                short.expires = now + 50_000_000
                return table.add(short, now: now)
            }
            #expect(Self.isLocked(added))
            var gone = false
            for _ in 0..<200 where !gone {
                gone = try await state.lock(token: "short") == nil
                if !gone { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(gone, "the lock ended")
            #expect(Self.isLocked(try await Self.add(state, "next", "f")))
        }
    }

    @Test("LOCKs racing for one path from several servers: exactly one is granted", arguments: Kind.allCases)
    func race(kind: Kind) async throws {
        try await Self.withStates(kind, count: 3) { states, _ in
            let granted = try await withThrowingTaskGroup(of: Bool.self) { group in
                // Three a server: enough to race, few enough that the queue
                // behind the folder's advisory lock stays inside the store's
                // 5 s limit on a loaded machine (past it, a LOCK is 503).
                for index in 0..<9 {
                    let state = states[index % states.count]
                    // Half deep on the folder, half on a file in it: all overlap.
                    let path = index % 2 == 0 ? "shared" : "shared/file.txt"
                    group.addTask { Self.isLocked(try await Self.add(state, "t\(index)", path)) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(granted == 1)
            for state in states {
                #expect(try await state.locks(coveringOrUnder: try SharePath(plain: "shared")).count == 1)
            }
        }
    }

    @Test("each server tells its activity feed of locks taken and released on the others", arguments: Kind.allCases)
    func activityAcrossServers(kind: Kind) async throws {
        try await Self.withStates(kind, count: 2) { states, _ in
            let seen = Mutex<[FolderActivity]>([])
            states[1].activity.add { activity in seen.withLock { $0.append(activity) } }
            #expect(Self.isLocked(try await Self.add(states[0], "a", "doc.txt", deep: false)))
            // The other server's round of maintenance (every second) notices it.
            try await states[1].expireLocks()
            #expect(seen.withLock { $0 } == [FolderActivity(path: "doc.txt", kind: .locked(coversBelow: false))])
            let path = try SharePath(plain: "doc.txt")
            _ = try await states[0].changingLocks { table, now in table.unlock(token: "a", path: path, now: now) }
            try await states[1].expireLocks()
            #expect(seen.withLock { $0 }.last == FolderActivity(path: "doc.txt", kind: .unlocked(coversBelow: false)))
            #expect(states[1].lockCount == 0)
        }
    }

    @Test("the database stopped: reads and changes fail with a reason, never as if no lock were held")
    func databaseDown() async throws {
        // 20 s: the lock taken before the stop must be answered in time on a
        // loaded machine (at 5 s it once was not); a stopped server refuses
        // connections at once, so the calls after the stop do not wait for it.
        try await Self.withStates(.postgres, timeLimit: .seconds(20)) { states, server in
            let state = states[0]
            #expect(Self.isLocked(try await Self.add(state, "a", "docs")))
            await server?.stop()
            let path = try SharePath(plain: "docs")
            await #expect(throws: DAVLockStoreError.self) { try await state.locks(covering: path) }
            do {
                _ = try await Self.add(state, "b", "elsewhere")
                Issue.record("a lock was granted without the database")
            } catch let error as DAVLockStoreError {
                #expect(error.message.contains("WebDAV locks") && error.message.contains("database"), "\(error)")
            }
        }
    }
}
