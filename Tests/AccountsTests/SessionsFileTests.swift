import Accounts
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The memory store kept in a ``SessionsFile``: what a restart finds, with
/// the time of injected clocks (the monotonic one starts anew, the wall
/// clock goes on).
@Suite("sessions kept in a file")
struct SessionsFileTests {
    /// The injected time: the wall clock in milliseconds since 1970, and the monotonic one.
    final class Clocks: Sendable {
        let wall = Mutex<Int64>(1_800_000_000_000)
        let now = Mutex(ContinuousClock.now)

        /// Both clocks `seconds` later.
        func advance(_ seconds: Int64) {
            wall.withLock { $0 += seconds * 1000 }
            now.withLock { $0 = $0.advanced(by: .seconds(seconds)) }
        }
    }

    /// A store as a server makes it at start, on `path`, with the time of `clocks`.
    static func store(
        _ path: String, _ clocks: Clocks, limits: SessionTable.Limits = SessionTable.Limits()
    ) -> MemorySessionStore {
        let file = SessionsFile(path: path, logger: Logger(label: "test")) { clocks.wall.withLock { $0 } }
        return MemorySessionStore(limits: limits, file: file, touchInterval: .seconds(30)) {
            clocks.now.withLock { $0 }
        }
    }

    @Test("a restart keeps live sessions, their user and stamp; the file holds only hashes, 0600")
    func restartKeepsSessions() throws {
        let dir = try TemporaryFolder()
        let path = dir.path + "/sessions.json"
        let clocks = Clocks()
        let id = SessionTable.newID()
        var store = Self.store(path, clocks)
        store.start(id: id, user: "alice", stamp: "s1")
        store.start(id: "other-session-id-of-bob", user: "bob", stamp: "s2")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!text.contains(id) && text.contains(SessionStamp.hash(ofID: id)))
        #expect(!text.contains("other-session-id-of-bob"))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        // The process ends; a new one starts a minute later, its monotonic clock elsewhere.
        clocks.wall.withLock { $0 += 60_000 }
        clocks.now.withLock { $0 = $0.advanced(by: .seconds(-5000)) }
        store = Self.store(path, clocks)
        #expect(store.count == 2)
        #expect(store.session(id) == SessionRecord(user: "alice", stamp: "s1"))
        #expect(store.session(SessionStamp.hash(ofID: id)) == nil)
        store.end(id)
        store = Self.store(path, clocks)
        #expect(store.session(id) == nil && store.count == 1)
        store.end(user: "bob", keeping: String?.none)
        store = Self.store(path, clocks)
        #expect(store.count == 0)
    }

    @Test("the idle and absolute lifetimes hold across restarts, by the wall clock")
    func lifetimesAcrossRestarts() throws {
        let dir = try TemporaryFolder()
        let path = dir.path + "/sessions.json"
        let clocks = Clocks()
        let limits = SessionTable.Limits(idle: .seconds(7200), absolute: .seconds(43_200))
        func later(_ seconds: Int64) { clocks.advance(seconds) }
        var store = Self.store(path, clocks, limits: limits)
        store.start(id: "idle", user: "alice", stamp: "s")
        store.start(id: "busy", user: "alice", stamp: "s")
        // Every hour the busy one is used (and written, past the touch interval); the idle one is not.
        for _ in 0..<3 {
            later(3600)
            #expect(store.session("busy") != nil)
            store = Self.store(path, clocks, limits: limits)
        }
        #expect(store.session("idle") == nil)
        #expect(store.session("busy") != nil)
        for _ in 0..<8 {
            later(3600)
            store = Self.store(path, clocks, limits: limits)
            _ = store.session("busy")
        }
        // 11 hours after sign-in it lives; past 12 it ends, however used.
        later(3600)
        store = Self.store(path, clocks, limits: limits)
        #expect(store.session("busy") == nil)
    }

    @Test("a use is written at most once per touch interval; a damaged file opens no session")
    func touchesAndDamage() throws {
        let dir = try TemporaryFolder()
        let path = dir.path + "/sessions.json"
        let clocks = Clocks()
        let store = Self.store(path, clocks)
        store.start(id: "a", user: "alice", stamp: "s")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        clocks.advance(10)
        #expect(store.session("a") != nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == written)
        clocks.advance(30)
        #expect(store.session("a") != nil)
        #expect(try String(contentsOfFile: path, encoding: .utf8) != written)
        try "{not json".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Self.store(path, clocks).count == 0)
        try #"{"version":1,"sessions":[{"idHash":"a","user":"x","stamp":"s","started":0,"used":0}]}"#.write(
            toFile: path, atomically: true, encoding: .utf8)
        #expect(Self.store(path, clocks).count == 0)
    }
}
