import Synchronization

/// Holds the paths a change of the server works on, so that checking a
/// client's conditions and making the change are one step for every other
/// change through this server (`ShareCore.perform`): a request cannot slip
/// in between the check of an entity tag and the rename that replaces the
/// file. The turns are decided by ``PathExclusionState``; this type only
/// keeps it under a lock and wakes the changes it lets run.
///
/// Writers outside the server (a program on the machine, another server on
/// the same folder) are not held: what they do between the check and the
/// change is not seen. A turn is held for the disk work only, never while a
/// request's body arrives, so a slow client holds back nobody.
final class PathExclusion: Sendable {
    private struct Storage {
        var state = PathExclusionState()
        var sleepers: [PathExclusionState.Turn: CheckedContinuation<Void, Never>] = [:]
        /// Turns granted before their continuation was stored.
        var grantedEarly: Set<PathExclusionState.Turn> = []
    }
    private let storage = Mutex(Storage())

    init() {}

    /// Runs `work` once no other change of an overlapping path runs; the
    /// paths are held until it returns.
    func withPaths<T: Sendable>(_ paths: [SharePath], _ work: () async throws -> T) async throws -> T {
        let turn = await begin(paths)
        defer { finish(turn) }
        return try await work()
    }

    /// Waits for the turn to change `paths`. Not cancellable: a turn waits
    /// only for other changes' disk work, which ends.
    func begin(_ paths: [SharePath]) async -> PathExclusionState.Turn {
        let (turn, runsNow) = storage.withLock { $0.state.begin(paths) }
        if runsNow { return turn }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = storage.withLock { storage in
                if storage.grantedEarly.remove(turn) != nil { return true }
                storage.sleepers[turn] = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return turn
    }

    /// Ends a change; the waiting ones it held back run.
    func finish(_ turn: PathExclusionState.Turn) {
        let woken = storage.withLock { storage in
            var woken: [CheckedContinuation<Void, Never>] = []
            for granted in storage.state.finish(turn) {
                if let sleeper = storage.sleepers.removeValue(forKey: granted) {
                    woken.append(sleeper)
                } else {
                    storage.grantedEarly.insert(granted)
                }
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }
}
