/// Heavy things the tests start, a few at a time.
///
/// Every suite starts at once, and in a full run about a minute in, the
/// browser tests and the database tests all reached their start together:
/// five Chromiums (36 processes) and more than twenty PostgreSQL servers
/// starting (218 processes), a load of 32 on two cores, in which a
/// database request took more than the product's 5 s bound. A test waits
/// here for its turn before the heavy part starts, never while holding
/// anything else another test waits for.
public actor StartLimit {
    /// Browsers (each headless Chromium is about seven processes): the
    /// scripts of Tests/Browser, for their whole run.
    public static let browsers = StartLimit(width: 2)
    /// PostgreSQL servers, while they start (copying the template's data
    /// folder, starting, waiting until they accept connections).
    public static let databaseStarts = StartLimit(width: 2)

    private let width: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(width: Int) {
        self.width = width
    }

    private func acquire() async {
        if running < width {
            running += 1
            return
        }
        // The place is handed over by `release`, so `running` stays counted.
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    /// Runs `body` once fewer than `width` others run, and lets the next in
    /// on every way out.
    public nonisolated func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { Task { await self.release() } }
        return try await body()
    }
}
