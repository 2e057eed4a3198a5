import Dispatch

/// Runs blocking work (system calls that may wait on the disk, a child
/// process) on a thread outside Swift's cooperative pool, whose few threads
/// must never wait. The one way the package leaves the pool.
/// - Parameter work: The blocking work; its error is rethrown.
public func runBlocking<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Swift.Result { try work() }) }
    }
}

/// Runs blocking work that cannot fail outside Swift's cooperative pool (see the other `runBlocking`).
public func runBlocking<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}
