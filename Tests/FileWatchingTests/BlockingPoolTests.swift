import FileshareTestSupport
import Synchronization
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// The pool blocking work runs on: its own threads, never more than its
/// bound, every job run once, and its threads gone when idle.
@Suite("blocking pool")
struct BlockingPoolTests {
    /// Counts the jobs running at once, and the most there were.
    final class Gauge: Sendable {
        private let state = Mutex<(now: Int, most: Int, done: Int)>((0, 0, 0))
        func enter() {
            state.withLock {
                $0.now += 1; $0.most = max($0.most, $0.now)
            }
        }
        func leave() {
            state.withLock {
                $0.now -= 1; $0.done += 1
            }
        }
        var most: Int { state.withLock { $0.most } }
        var done: Int { state.withLock { $0.done } }
    }

    @Test("at most its threads at once, each job once; errors rethrown")
    func bounded() async throws {
        let pool = BlockingPool(threads: 3)
        let gauge = Gauge()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<24 {
                group.addTask {
                    try await pool.run { () throws -> Int in
                        gauge.enter()
                        usleep(20_000)  // a blocking call: the thread waits
                        gauge.leave()
                        return index
                    }
                }
            }
            var results: [Int] = []
            for try await result in group { results.append(result) }
            #expect(results.sorted() == Array(0..<24))
        }
        #expect(gauge.done == 24)
        #expect(gauge.most == 3, "ran \(gauge.most) at once")
        #expect(pool.threadCount <= 3)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await pool.run { () throws -> Int in throw Failure() } }
    }

    @Test("threads end after their idle time, and start again for new work")
    func idleThreadsEnd() async throws {
        let pool = BlockingPool(threads: 4, idleTime: .milliseconds(50))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { await pool.run { _ = usleep(10_000) } } }
        }
        // Polled: the threads end on their own clock (the bound is loose: a loaded machine is slow).
        let clock = ContinuousClock()
        let end = clock.now + .seconds(30)
        while pool.threadCount > 0 && clock.now < end { try await Task.sleep(for: .milliseconds(10)) }
        #expect(pool.threadCount == 0, "idle threads end")
        #expect(await pool.run { 7 } == 7)
    }
}
