import Synchronization

/// Requests for the same answer share its making: fifty clients listing one
/// large folder at once make its listing once or twice, not fifty times.
///
/// Unlike ``ThumbnailFlights`` (a thumbnail is named by its file's content,
/// so any making of it will do), an answer here shows the state of things
/// when its making began, so a request never joins a making that began
/// before it arrived: it waits for the next one (``CoalescedWorkState``).
/// A client that changes a file and then asks again always sees its change.
///
/// Each making runs in a task of its own and runs to its end even if the
/// requests waiting for it go: it inherits the task-local values of the
/// request that started it (its requester among them), so `Key` must hold
/// everything the answer depends on.
final class CoalescedWork<Key: Equatable & Sendable, Value: Sendable>: Sendable {
    private typealias Making = Task<Result<Value, any Error>, Never>

    private struct State {
        var machine = CoalescedWorkState<Key>()
        var makings: [Int: Making] = [:]
    }

    private let state = Mutex(State())

    init() {}

    /// The answer for `key`, from a making of `make` that began after this call.
    func value(for key: Key, make: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let making = state.withLock { state -> Making in
            switch state.machine.arrive(key) {
            case .wait(let id):
                guard let making = state.makings[id] else { preconditionFailure("making \(id) has no task") }
                return making
            case .start(let id):
                let making = Making { await self.run(id, of: key, make) }
                state.makings[id] = making
                return making
            case .queue(let id, let previous):
                guard let before = state.makings[previous] else {
                    preconditionFailure("making \(previous) has no task")
                }
                let making = Making {
                    _ = await before.value
                    self.state.withLock { $0.machine.begin(id, of: key) }
                    return await self.run(id, of: key, make)
                }
                state.makings[id] = making
                return making
            }
        }
        return try await making.value.get()
    }

    /// Keys with a making running or queued (for tests).
    var busyKeys: Int { state.withLock { $0.machine.busyKeys } }

    /// Requests waiting for a making that has not begun (for tests).
    var waiting: Int { state.withLock { $0.machine.waiting } }

    private func run(
        _ id: Int, of key: Key, _ make: @Sendable () async throws -> Value
    ) async -> Result<Value, any Error> {
        let result: Result<Value, any Error>
        do { result = .success(try await make()) } catch { result = .failure(error) }
        state.withLock { state in
            state.machine.ended(id, of: key)
            state.makings[id] = nil
        }
        return result
    }
}
