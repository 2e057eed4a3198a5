import FileshareTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import SharedState

/// Leadership of a folder among its servers: one at a time, and another takes over.
@Suite("leading a folder", .timeLimit(.minutes(3)))
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
            try await Database.withRunning(url, logger: Self.logger) { database in
                _ = try await database.withConnection(doing: "end the leader's session") { connection in
                    try await connection.query(
                        """
                        SELECT pg_terminate_backend(pid) FROM pg_locks
                        WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
                        """, logger: Self.logger)
                }
            }
            #expect(await PostgresChangeLogTests.finishes(within: .seconds(20)) { await second.waitForLeadership() })
            // The first noticed, and now follows.
            #expect(await waitUntil { !first.isLeader })
            firstRun.cancel()
            secondRun.cancel()
            await firstRun.value
            await secondRun.value
        }
    }

    @Test("a database operation that never answers ends at its bound or on cancellation, without being waited for")
    func bounded() async throws {
        struct Stuck: Sendable {
            /// Never returns, cancelled or not: as a query on a peer that stopped answering.
            func forever() async -> Int {
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
                return 0
            }
        }
        // Ended by its bound, as its clock measures it: the clock is asked
        // for the bound's time once, and its end ends the wait.
        let clock = VirtualClock()
        await #expect(throws: DatabaseTimeout.self) {
            try await FolderLeadership.bounded(.milliseconds(200), clock: clock) { await Stuck().forever() }
        }
        #expect(clock.sleeps == [.milliseconds(200)])
        // Cancelled: it returns at once, with CancellationError.
        let waiting = Task { try await FolderLeadership.bounded(.seconds(3600)) { await Stuck().forever() } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        // A result that comes first is the answer, also when it comes before the wait.
        #expect(try await FolderLeadership.bounded(.seconds(3600)) { 7 } == 7)
        await #expect(throws: DatabaseTimeout.self) {
            try await FolderLeadership.bounded(.zero) { try await Task.sleep(for: .seconds(3600)) }
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

/// A clock whose sleeps end at once, moving its time to their deadline, and
/// that notes each one: time injected into a logic test.
final class VirtualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Mutex((now: Instant(offset: .zero), sleeps: [Duration]()))

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    /// How long each sleep asked for, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock {
            $0.sleeps.append($0.now.duration(to: deadline))
            if $0.now < deadline { $0.now = deadline }
        }
    }
}
