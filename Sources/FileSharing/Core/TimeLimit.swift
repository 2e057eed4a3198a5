/// Runs `operation`, giving up after `limit`: `nil` then, and the operation
/// is cancelled. For a call on a shared database that may not answer (its
/// pool queues a request while it cannot connect), so that a request is
/// answered with a reason rather than kept waiting.
/// - Throws: What `operation` throws.
package func withTimeLimit<T: Sendable>(
    _ limit: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}
