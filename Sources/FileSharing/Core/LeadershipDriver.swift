import FileWatching
import Logging
import Synchronization

/// Runs a server's part in leading its folder: holds (or waits for) the
/// folder's lock, feeds what happens to the ``LeadershipMachine`` of the
/// core, and does what it asks — one event at a time, in order, so a
/// takeover and a step-down never overlap.
struct LeadershipDriver: Sendable {
    let core: ShareCore
    let lock: any FolderLock
    let whileLeading: (@Sendable (FileObserver) async -> Void)?
    let logger: Logger

    /// Runs until cancelled; then lets go of the lock and stops leading.
    func run() async {
        let (events, continuation) = AsyncStream.makeStream(of: LeadershipMachine.Event.self)
        let lock = self.lock
        let holding = HoldingTask()
        @Sendable func startHolding(after delay: Duration) {
            let task = Task {
                if delay > .zero { try? await Task.sleep(for: delay) }
                guard !Task.isCancelled else { return }
                await lock.hold { event in
                    switch event {
                    case .gained: continuation.yield(.lockGained)
                    case .lost: continuation.yield(.lockLost)
                    case .heldElsewhere: continuation.yield(.lockHeldElsewhere)
                    case .unreachable: continuation.yield(.databaseDown)
                    }
                }
            }
            holding.task.withLock { $0 = task }
        }
        startHolding(after: .zero)
        var leadingTask: Task<Void, Never>?
        await withTaskCancellationHandler {
            for await event in events {
                var actions = core.leadership.withLock { $0.handle(event, at: .now) }
                while !actions.isEmpty {
                    let action = actions.removeFirst()
                    switch action {
                    case .takeOver:
                        let result: LeadershipMachine.Event
                        do {
                            try await core.lead()
                            result = .takeoverFinished
                        } catch {
                            logger.error("cannot take over the folder", metadata: ["error": "\(error)"])
                            result = .takeoverFailed
                        }
                        actions += core.leadership.withLock { $0.handle(result, at: .now) }
                        if result == .takeoverFinished, core.isLeader, let whileLeading {
                            let observer = core.observer
                            leadingTask = Task { await whileLeading(observer) }
                        }
                    case .stepDown:
                        leadingTask?.cancel()
                        leadingTask = nil
                        await core.follow()
                    case .releaseLock:
                        let task = holding.task.withLock { $0 }
                        task?.cancel()
                        await task?.value
                        // Tried again later: another server may take it meanwhile.
                        startHolding(after: lock.retryInterval * 2)
                    }
                }
            }
        } onCancel: {
            continuation.finish()
        }
        leadingTask?.cancel()
        let task = holding.task.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}

/// The task that holds (or tries for) the lock, replaced when it is let go of.
private final class HoldingTask: Sendable {
    let task = Mutex<Task<Void, Never>?>(nil)
}
