import Accounts
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// A hasher that counts its verifications: the tests see when bcrypt would
/// have run. Its "hash" is the password reversed (never use outside tests).
final class CountingHasher: PasswordHasher, @unchecked Sendable {
    private let lock = NSLock()
    private var verifications = 0

    var count: Int { lock.withLock { verifications } }

    func hash(_ password: String) -> String { "$2test$" + String(password.reversed()) }

    func verify(_ password: String, against hash: String) -> Bool {
        lock.withLock { verifications += 1 }
        return hash == self.hash(password)
    }
}

@Suite("signing in against the users file")
struct PasswordCheckTests {
    static let logger = Logger(label: "test")

    static func usersFile(in folder: TemporaryFolder, _ hasher: CountingHasher, passwords: [String: String]) throws
        -> String
    {
        var directory = UserDirectory()
        for (name, password) in passwords.sorted(by: { $0.key < $1.key }) {
            try directory.addUser(name, passwordHash: hasher.hash(password))
        }
        try directory.grant(.read, on: "/", to: "alice")
        let path = folder("users.json")
        try UsersFile.write(directory, to: path)
        return path
    }

    @Test("a verified password is remembered: bcrypt runs once, not per request")
    func cached() async throws {
        let folder = try TemporaryFolder()
        let hasher = CountingHasher()
        let path = try Self.usersFile(in: folder, hasher, passwords: ["alice": "secret"])
        let check = PasswordCheck(users: try LiveUsers(path: path, logger: Self.logger), hasher: hasher)
        let now = ContinuousClock.now
        for _ in 0..<5 {
            let policy = await check.verify(name: "alice", password: "secret", now: now)
            #expect(policy?.right(at: ["a"]) == .read)
        }
        #expect(hasher.count == 1)
        // A wrong password is never remembered, and always costs a verification.
        #expect(await check.verify(name: "alice", password: "wrong", now: now) == nil)
        #expect(await check.verify(name: "alice", password: "wrong", now: now) == nil)
        #expect(hasher.count == 3)
        // An unknown name costs one too (against a decoy), so time does not tell names apart.
        #expect(await check.verify(name: "mallory", password: "secret", now: now) == nil)
        #expect(hasher.count == 4)
        // Past the lifetime, bcrypt runs again.
        _ = await check.verify(name: "alice", password: "secret", now: now + .seconds(301))
        #expect(hasher.count == 5)
    }

    @Test("a password changed or a user removed in the file takes effect without a restart")
    func reload() async throws {
        let folder = try TemporaryFolder()
        let hasher = CountingHasher()
        let path = try Self.usersFile(in: folder, hasher, passwords: ["alice": "secret", "bob": "pw"])
        let users = try LiveUsers(path: path, checkInterval: .zero, logger: Self.logger)
        let check = PasswordCheck(users: users, hasher: hasher)
        #expect(await check.verify(name: "alice", password: "secret") != nil)
        #expect(await check.verify(name: "bob", password: "pw") != nil)
        #expect(users.credentials.count == 2)

        var directory = try #require(try UsersFile.read(path))
        try directory.setPassword("alice", passwordHash: hasher.hash("new"))
        try directory.removeUser("bob")
        try UsersFile.write(directory, to: path)
        #expect(await check.verify(name: "alice", password: "secret") == nil)
        #expect(await check.verify(name: "alice", password: "new") != nil)
        #expect(await check.verify(name: "bob", password: "pw") == nil)
    }

    @Test("a broken users file keeps the last good one in force")
    func broken() async throws {
        let folder = try TemporaryFolder()
        let hasher = CountingHasher()
        let path = try Self.usersFile(in: folder, hasher, passwords: ["alice": "secret"])
        let users = try LiveUsers(path: path, checkInterval: .zero, logger: Self.logger)
        let check = PasswordCheck(users: users, hasher: hasher)
        try writeFile(Data("{ \"format\": \"fileshare-users 1\", \"users\": {".utf8), to: path)
        #expect(await check.verify(name: "alice", password: "secret") != nil)
        try FileManager.default.removeItem(atPath: path)
        #expect(await check.verify(name: "alice", password: "secret") != nil)
    }

    @Test("a server does not start on a missing users file")
    func missing() throws {
        let folder = try TemporaryFolder()
        #expect(throws: AccountsError.self) { try LiveUsers(path: folder("none.json"), logger: Self.logger) }
    }
}

@Suite("the cache of verified passwords")
struct CredentialCacheTests {
    @Test("bounded: the oldest entry goes first")
    func bounded() {
        let cache = CredentialCache(capacity: 3)
        let now = ContinuousClock.now
        for index in 0..<5 { cache.insert(name: "u\(index)", password: "p", now: now) }
        #expect(cache.count == 3)
        #expect(!cache.contains(name: "u0", password: "p", now: now))
        #expect(!cache.contains(name: "u1", password: "p", now: now))
        #expect(cache.contains(name: "u4", password: "p", now: now))
        #expect(!cache.contains(name: "u4", password: "q", now: now))
        cache.removeAll()
        #expect(!cache.contains(name: "u4", password: "p", now: now))
    }

    @Test("name and password are kept apart: 'ab'+'c' is not 'a'+'bc'")
    func separated() {
        let cache = CredentialCache()
        let now = ContinuousClock.now
        cache.insert(name: "ab", password: "c", now: now)
        #expect(!cache.contains(name: "a", password: "bc", now: now))
    }

    @Test("empty, long and non-ASCII passwords are each their own; an entry ends with its lifetime")
    func passwordsAndLifetime() {
        let cache = CredentialCache(lifetime: .seconds(60))
        let now = ContinuousClock.now
        let long = String(repeating: "p", count: 10_000)
        for password in ["", long, "pässwörd ☃"] { cache.insert(name: "u", password: password, now: now) }
        for password in ["", long, "pässwörd ☃"] { #expect(cache.contains(name: "u", password: password, now: now)) }
        for password in [" ", long + "p", "passwörd ☃", "pässwörd"] {
            #expect(!cache.contains(name: "u", password: password, now: now))
        }
        #expect(!cache.contains(name: "v", password: "", now: now))
        #expect(cache.contains(name: "u", password: "", now: now + .seconds(59)))
        #expect(!cache.contains(name: "u", password: "", now: now + .seconds(60)))
    }
}

@Suite("slowing failed sign-ins")
struct SignInThrottleTests {
    /// (failures so far, the wait they impose) with the default limits.
    static let delays: [(Int, Duration)] = [
        (1, .zero), (5, .zero), (6, .seconds(1)), (7, .seconds(2)), (8, .seconds(4)), (13, .seconds(128)),
        (14, .seconds(256)), (15, .seconds(300)), (100, .seconds(300)),
    ]

    @Test("5 failures free, then 1 s doubling up to 5 minutes", arguments: delays)
    func delay(_ entry: (Int, Duration)) {
        #expect(SignInThrottle().delay(afterFailures: entry.0) == entry.1)
    }

    @Test("per name and per address; a success forgets the name only; 15 minutes forget all")
    func machine() {
        var throttle = SignInThrottle()
        let start = ContinuousClock.now
        for index in 0..<6 {
            #expect(throttle.wait(address: "10.0.0.1", name: "alice", now: start) == nil, "attempt \(index)")
            throttle.failed(address: "10.0.0.1", name: "alice", now: start)
        }
        #expect(throttle.wait(address: "10.0.0.1", name: "alice", now: start) == .seconds(1))
        // Another address for the same name, and another name from the same address, wait too.
        #expect(throttle.wait(address: "10.0.0.2", name: "alice", now: start) == .seconds(1))
        #expect(throttle.wait(address: "10.0.0.1", name: "bob", now: start) == .seconds(1))
        #expect(throttle.wait(address: "10.0.0.2", name: "bob", now: start) == nil)
        #expect(throttle.wait(address: "10.0.0.1", name: "alice", now: start + .seconds(1)) == nil)
        throttle.succeeded(name: "alice")
        #expect(throttle.wait(address: "10.0.0.2", name: "alice", now: start) == nil)
        #expect(throttle.wait(address: "10.0.0.1", name: "carol", now: start) == .seconds(1))
        #expect(throttle.wait(address: "10.0.0.1", name: "carol", now: start + .seconds(900)) == nil)
        #expect(throttle.trackedCount == 0)
    }

    @Test("an address and a name both slowed: the longer wait holds, whichever it is")
    func longerWait() {
        var throttle = SignInThrottle()
        let now = ContinuousClock.now
        // 7 failures from one address, each for another name: the address waits 2 s, no name does.
        for index in 0..<7 { throttle.failed(address: "10.0.0.9", name: "n\(index)", now: now) }
        // 6 failures for one name, each from another address: the name waits 1 s.
        for index in 0..<6 { throttle.failed(address: "10.1.0.\(index)", name: "zed", now: now) }
        #expect(throttle.wait(address: "10.0.0.9", name: "n0", now: now) == .seconds(2))
        #expect(throttle.wait(address: "10.0.0.9", name: "zed", now: now) == .seconds(2))
        #expect(throttle.wait(address: "10.2.0.1", name: "zed", now: now) == .seconds(1))
        #expect(throttle.wait(address: "10.2.0.1", name: "n0", now: now) == nil)
        #expect(throttle.wait(address: "10.0.0.9", name: "zed", now: now + .milliseconds(1500)) == .milliseconds(500))
    }

    @Test("attempts made at once are counted before they are checked: 6 go ahead, a success takes its count back")
    func attemptsAtOnce() {
        var throttle = SignInThrottle()
        let now = ContinuousClock.now
        // 32 at the same instant, none finished yet: 5 free and the 6th, whose count makes the 7th wait.
        let admitted = (0..<32).filter { _ in throttle.attempt(address: "10.0.0.1", name: "alice", now: now) == nil }
        #expect(admitted.count == 6)
        #expect(throttle.wait(address: "10.0.0.1", name: "alice", now: now) == .seconds(1))
        // One of them succeeds: its count goes, the address keeps the other five (free), the name is forgotten.
        throttle.attemptSucceeded(address: "10.0.0.1", name: "alice", now: now)
        #expect(throttle.wait(address: "10.0.0.1", name: "alice", now: now) == nil)
        #expect(throttle.wait(address: "10.0.0.1", name: "bob", now: now) == nil)
        #expect(throttle.attempt(address: "10.0.0.1", name: "bob", now: now) == nil)
        #expect(throttle.wait(address: "10.0.0.1", name: "carol", now: now) == .seconds(1))
        // Successes alone never slow anyone: each takes back what it counted.
        var quiet = SignInThrottle()
        for _ in 0..<100 {
            #expect(quiet.attempt(address: "10.0.0.2", name: "dave", now: now) == nil)
            quiet.attemptSucceeded(address: "10.0.0.2", name: "dave", now: now)
        }
        #expect(quiet.trackedCount == 0)
    }

    @Test("a flood of names cannot fill memory")
    func bounded() {
        var throttle = SignInThrottle(limits: .init(maxTracked: 100))
        let now = ContinuousClock.now
        for index in 0..<1000 { throttle.failed(address: "a\(index % 7)", name: "n\(index)", now: now) }
        #expect(throttle.trackedCount <= 100)
    }
}

@Suite("the page's sessions")
struct SessionTableTests {
    @Test("idle and absolute expiry, sign-out, a removed user's sessions end")
    func expiry() {
        var table = SessionTable(limits: .init(idle: .seconds(60), absolute: .seconds(300)))
        let start = ContinuousClock.now
        table.start(id: "a", user: "alice", now: start)
        table.start(id: "b", user: "bob", now: start)
        #expect(table.user(of: "a", now: start + .seconds(59)) == "alice")
        // Used at 59 s: idle counts from then.
        #expect(table.user(of: "a", now: start + .seconds(118)) == "alice")
        #expect(table.user(of: "b", now: start + .seconds(118)) == nil)  // idle past 60 s
        var now = start + .seconds(118)
        while now < start + .seconds(290) {
            now += .seconds(50)
            _ = table.user(of: "a", now: now)
        }
        // Used all along, yet over after 300 s.
        #expect(table.user(of: "a", now: start + .seconds(300)) == nil)
        table.start(id: "c", user: "carol", now: start)
        table.end("c")
        #expect(table.user(of: "c", now: start) == nil)
        table.start(id: "d", user: "dave", now: start)
        table.start(id: "e", user: "dave", now: start)
        table.end(user: "dave")
        #expect(table.user(of: "d", now: start) == nil && table.user(of: "e", now: start) == nil)
        #expect(table.user(of: "unknown", now: start) == nil)
    }

    @Test("bounded: the least recently used goes first")
    func bounded() {
        var table = SessionTable(limits: .init(maxSessions: 2))
        let start = ContinuousClock.now
        table.start(id: "a", user: "u", now: start)
        table.start(id: "b", user: "u", now: start + .seconds(1))
        _ = table.user(of: "a", now: start + .seconds(2))
        table.start(id: "c", user: "u", now: start + .seconds(3))
        #expect(table.count == 2)
        #expect(table.user(of: "b", now: start + .seconds(3)) == nil)
        #expect(table.user(of: "a", now: start + .seconds(3)) == "u")
    }

    @Test("a session keeps its password's stamp; a user's sessions of other stamps end, those of the kept one stay")
    func stamps() {
        var table = SessionTable()
        let start = ContinuousClock.now
        table.start(id: "old", user: "alice", stamp: SessionStamp.of(passwordHash: "h1"), now: start)
        table.start(id: "new", user: "alice", stamp: SessionStamp.of(passwordHash: "h2"), now: start)
        table.start(id: "bob", user: "bob", stamp: SessionStamp.of(passwordHash: "h1"), now: start)
        #expect(table.session(of: "old", now: start)?.stamp == SessionStamp.of(passwordHash: "h1"))
        #expect(SessionStamp.of(passwordHash: "h1") != SessionStamp.of(passwordHash: "h2"))
        table.end(user: "alice", keeping: SessionStamp.of(passwordHash: "h2"))
        #expect(table.session(of: "old", now: start) == nil)
        #expect(table.session(of: "new", now: start)?.user == "alice")
        #expect(table.session(of: "bob", now: start)?.user == "bob")
    }

    @Test("the memory store: the table with the time of its clock")
    func memoryStore() {
        let now = Mutex(ContinuousClock.now)
        let store = MemorySessionStore(limits: .init(idle: .seconds(60))) { now.withLock { $0 } }
        store.start(id: "a", user: "alice", stamp: "s")
        #expect(store.session("a") == SessionRecord(user: "alice", stamp: "s"))
        now.withLock { $0 += .seconds(61) }
        #expect(store.session("a") == nil && store.count == 0)
        store.start(id: "b", user: "bob", stamp: "s")
        store.end(user: "bob", keeping: nil)
        #expect(store.session("b") == nil)
    }
}
