import Accounts
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import FileSharing

/// The Basic credentials a connection last signed in with, remembered by
/// it (``SignIn/signInCached(authorization:address:now:remembered:)``):
/// trusted only while the credential cache would vouch for them.
@Suite("Sign-ins remembered by a connection, logic")
struct RememberedSignInTests {
    /// Its "hash" is the password reversed (never outside tests).
    struct ReversingHasher: PasswordHasher {
        func hash(_ password: String) -> String { "$2test$" + String(password.reversed()) }
        func verify(_ password: String, against hash: String) -> Bool { hash == self.hash(password) }
    }

    static func basic(_ name: String, _ password: String) -> String {
        "Basic " + Data("\(name):\(password)".utf8).base64EncodedString()
    }

    /// A sign-in over a users file with alice (read on /) and bob.
    static func signIn(in folder: TemporaryFolder) throws -> (SignIn, path: String) {
        var directory = UserDirectory()
        try directory.addUser("alice", passwordHash: ReversingHasher().hash("secret"))
        try directory.addUser("bob", passwordHash: ReversingHasher().hash("pw"))
        try directory.grant(.read, on: "/", to: "alice")
        let path = folder("users.json")
        try UsersFile.write(directory, to: path)
        let users = try LiveUsers(path: path, checkInterval: .zero, logger: Logger(label: "test"))
        return (
            SignIn(check: PasswordCheck(users: users, hasher: ReversingHasher()), logger: Logger(label: "test")), path
        )
    }

    /// ``ReversingHasher`` that holds every check until the test opens it, and counts them.
    final class GatedHasher: PasswordHasher, Sendable {
        let open = DispatchSemaphore(value: 0)
        let calls = Mutex(0)
        func hash(_ password: String) -> String { ReversingHasher().hash(password) }
        func verify(_ password: String, against hash: String) -> Bool {
            calls.withLock { $0 += 1 }
            open.wait()
            open.signal()
            return ReversingHasher().verify(password, against: hash)
        }
    }

    @Test(
        "twelve requests at once with the right password are one check, none slowed; wrong ones are each counted"
    )
    func sameCredentialsAtOnce() async throws {
        let folder = try TemporaryFolder()
        var directory = UserDirectory()
        try directory.addUser("alice", passwordHash: ReversingHasher().hash("secret"))
        let path = folder("users.json")
        try UsersFile.write(directory, to: path)
        let users = try LiveUsers(path: path, checkInterval: .zero, logger: Logger(label: "test"))
        let hasher = GatedHasher()
        // However the test ends, no check stays held.
        defer { hasher.open.signal() }
        let signIn = SignIn(check: PasswordCheck(users: users, hasher: hasher), logger: Logger(label: "test"))
        // A WebDAV client opening twelve connections: each request reaches
        // the sign-in while the first check is held.
        let outcomes = Task {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        if case .signedIn = await signIn.signIn(name: "alice", password: "secret", address: "a") {
                            return true
                        }
                        return false
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
        }
        // The first check begins when a thread of the blocking pool is free:
        // under the whole suite that has taken more than 30 s, so this waits
        // up to five minutes (it is the start, not a timed goal).
        let started = ContinuousClock.now + .seconds(300)
        while hasher.calls.withLock({ $0 }) < 1, ContinuousClock.now < started {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(hasher.calls.withLock { $0 } >= 1, "the first check began")
        // Counted as attempts, the other eleven would each begin a check
        // (six admitted, the rest slowed): a second of the clock for them to.
        let end = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < end, hasher.calls.withLock({ $0 }) < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        hasher.open.signal()
        let signedIn = await outcomes.value
        #expect(signedIn == Array(repeating: true, count: 12), "\(signedIn)")
        #expect(hasher.calls.withLock { $0 } == 1, "one check for the twelve")
        // Wrong passwords are not joined to each other's answer for free:
        // each different one is counted. At one instant of the clock, so a
        // slow check cannot let the throttle's wait pass meanwhile.
        let now = ContinuousClock.now
        for guess in 0..<6 {
            _ = await signIn.signIn(name: "alice", password: "guess\(guess)", address: "b", now: now)
        }
        guard case .throttled = await signIn.signIn(name: "alice", password: "guess6", address: "b", now: now)
        else {
            Issue.record("the seventh wrong password was not slowed")
            return
        }
    }

    @Test("remembered while the cache vouches: not before a verification, not past its entry, not once emptied")
    func lifetime() async throws {
        let folder = try TemporaryFolder()
        let (signIn, _) = try Self.signIn(in: folder)
        let alice = Self.basic("alice", "secret")
        let now = ContinuousClock.now
        var remembered: SignIn.Remembered? = nil
        // Never verified: nothing to remember, only the waiting sign-in can tell.
        #expect(signIn.signInCached(authorization: alice, address: "a", now: now, remembered: &remembered) == nil)
        #expect(remembered == nil)
        guard case .signedIn = await signIn.signIn(name: "alice", password: "secret", address: "a", now: now) else {
            Issue.record("alice did not sign in")
            return
        }
        let first = signIn.signInCached(authorization: alice, address: "a", now: now, remembered: &remembered)
        #expect(first?.name == "alice" && remembered?.requester.name == "alice")
        #expect(
            signIn.signInCached(authorization: alice, address: "a", now: now + .seconds(299), remembered: &remembered)?
                .name == "alice")
        // Past the cache entry's lifetime (300 s), the memory goes with it.
        #expect(
            signIn.signInCached(authorization: alice, address: "a", now: now + .seconds(300), remembered: &remembered)
                == nil)
        #expect(remembered == nil)

        // Emptied (as a changed users file empties it): not trusted any more.
        _ = await signIn.signIn(name: "alice", password: "secret", address: "a", now: now)
        #expect(signIn.signInCached(authorization: alice, address: "a", now: now, remembered: &remembered) != nil)
        signIn.check.users.credentials.removeAll()
        #expect(signIn.signInCached(authorization: alice, address: "a", now: now, remembered: &remembered) == nil)
    }

    @Test("other credentials on the same connection are looked up afresh, never taken for the remembered ones")
    func otherCredentials() async throws {
        let folder = try TemporaryFolder()
        let (signIn, _) = try Self.signIn(in: folder)
        let now = ContinuousClock.now
        _ = await signIn.signIn(name: "alice", password: "secret", address: "a", now: now)
        var remembered: SignIn.Remembered? = nil
        #expect(
            signIn.signInCached(
                authorization: Self.basic("alice", "secret"), address: "a", now: now, remembered: &remembered) != nil)
        // Never verified: not alice, and alice is no longer what the connection remembers.
        for other in [Self.basic("alice", "wrong"), Self.basic("bob", "pw"), "Bearer x"] {
            #expect(signIn.signInCached(authorization: other, address: "a", now: now, remembered: &remembered) == nil)
            #expect(remembered == nil, "\(other)")
            #expect(
                signIn.signInCached(
                    authorization: Self.basic("alice", "secret"), address: "a", now: now, remembered: &remembered)?
                    .name == "alice")
        }
        // A wrong password is never answered from memory.
        #expect(
            signIn.signInCached(
                authorization: Self.basic("alice", "wrong"), address: "a", now: now, remembered: &remembered) == nil)
        #expect(signIn.signInCached(authorization: nil, address: "a", now: now, remembered: &remembered) == nil)
    }

    @Test("a password changed in the users file applies at the next request of the connection")
    func passwordChanged() async throws {
        let folder = try TemporaryFolder()
        let (signIn, path) = try Self.signIn(in: folder)
        let alice = Self.basic("alice", "secret")
        _ = await signIn.signIn(name: "alice", password: "secret", address: "a")
        var remembered: SignIn.Remembered? = nil
        #expect(signIn.signInCached(authorization: alice, address: "a", remembered: &remembered) != nil)
        var directory = try #require(try UsersFile.read(path))
        try directory.setPassword("alice", passwordHash: ReversingHasher().hash("new"))
        try UsersFile.write(directory, to: path)
        #expect(signIn.signInCached(authorization: alice, address: "a", remembered: &remembered) == nil)
        #expect(remembered == nil)
    }
}
