/// Runs blocking work (system calls that may wait on the disk) on a thread
/// of ``BlockingPool/shared``, outside Swift's cooperative pool, whose few
/// threads must never wait. The one way the package leaves the pool. Work
/// that computes for long (an image's decoding) has a pool of its own, so
/// it never holds up the disk work everyone's requests wait for.
/// - Parameter work: The blocking work; its error is rethrown.
public func runBlocking<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await BlockingPool.shared.run(work)
}

/// Runs blocking work that cannot fail outside Swift's cooperative pool (see the other `runBlocking`).
public func runBlocking<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await BlockingPool.shared.run(work)
}
