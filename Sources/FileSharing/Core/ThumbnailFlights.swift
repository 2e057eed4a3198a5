import Previews
import Synchronization

/// The thumbnails being made now, by cache name: a request for one the
/// background worker (or another request) is making waits for that one
/// instead of decoding the same file a second time beside it (twice the
/// time and twice the memory of a large image). And those that could not be
/// made (``ThumbnailFailures``): asked for again, the same version of a file
/// gets the same answer at once, without decoding it again.
final class ThumbnailFlights: Sendable {
    private struct State {
        var flights: [String: Task<Result<[UInt8], ThumbnailError>, Never>] = [:]
        var failures: ThumbnailFailures
        var started = 0
    }

    private let state: Mutex<State>

    /// - Parameter failures: How many failures are remembered, at most.
    init(failures: Int = 16_384) {
        state = Mutex(State(failures: ThumbnailFailures(capacity: failures)))
    }

    /// The thumbnail named `name`: made by `make` here, or by the flight
    /// already under way; or the failure remembered for it. The flight runs
    /// to its end even when this caller stops waiting, so what `make` uses
    /// must outlive it: the callers wait.
    func thumbnail(
        named name: String, make: @escaping @Sendable () async throws(ThumbnailError) -> [UInt8]
    ) async throws(ThumbnailError) -> [UInt8] {
        let (task, mine) = try state.withLock { state throws(ThumbnailError) in
            if let failure = state.failures.failure(named: name) { throw failure }
            if let running = state.flights[name] { return (running, false) }
            let task = Task { () -> Result<[UInt8], ThumbnailError> in
                do throws(ThumbnailError) { return .success(try await make()) } catch { return .failure(error) }
            }
            state.flights[name] = task
            state.started += 1
            return (task, true)
        }
        let result = await task.value
        if mine {
            state.withLock { state in
                state.flights[name] = nil
                if case .failure(let error) = result { state.failures.remember(error, named: name) }
            }
        }
        return try result.get()
    }

    /// How many thumbnails are being made now.
    var count: Int { state.withLock { $0.flights.count } }

    /// How many failures are remembered.
    var failureCount: Int { state.withLock { $0.failures.count } }

    /// How many thumbnails were started since this server started: each a
    /// decode of a file (one in the cache, or a failure remembered, starts none).
    var startedCount: Int { state.withLock { $0.started } }
}
