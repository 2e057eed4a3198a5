import Foundation

/// Runs blocking work — a socket read, a wait for a child process — on a
/// thread of its own and awaits its result.
///
/// Never block a thread of Swift's cooperative pool in a test: it has as many
/// threads as the machine has cores (two on CI), and an in-process server's
/// request handlers run on the same pool. A test blocked in `recv` waiting for
/// an answer its own process must compute holds one of them; two such tests at
/// once starve the server, and a blocking `send` to a server that cannot read
/// never returns — the whole suite hangs.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// ``onOwnThread(_:)`` for work that throws.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await onOwnThread { Result { try body() } }.get()
}
