import FileWatching
import Foundation
import Logging
import Synchronization

/// A real observer on a real folder, with every change it delivers collected,
/// and waits that poll for a condition with a generous timeout (never a
/// fixed sleep that races).
final class ObserverProbe: Sendable {
    let observer: FileObserver
    private final class Collected: Sendable { let changes = Mutex<[Change]>([]) }
    private let collected = Collected()
    private let token: ObservationToken

    init(
        _ root: String,
        options: ObserverOptions = ObserverOptions(settleTime: .milliseconds(300), latency: .milliseconds(20))
    )
        throws
    {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        observer = try FileObserver(root: root, options: options, logger: logger)
        let collected = self.collected
        token = observer.observe { batch in collected.changes.withLock { $0 += batch } }
        try observer.start()
    }

    deinit {
        token.cancel()
        observer.stop()
    }

    var changes: [Change] { collected.changes.withLock { $0 } }

    /// The changes after `scan-completed`.
    var liveChanges: [Change] {
        let all = changes
        guard let index = all.firstIndex(where: { if case .scanCompleted = $0 { true } else { false } }) else {
            return []
        }
        return Array(all[(index + 1)...])
    }

    /// Waits until `condition` holds for the collected changes.
    func wait(
        timeout: Duration = .seconds(20),
        until condition: ([Change]) -> Bool
    ) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while clock.now < end {
            if condition(changes) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(changes)
    }

    /// Waits for the initial scan (of up to 100,000 items: on a machine busy
    /// with the rest of the suite that can take more than the usual 20 s).
    func scanned() async -> Bool {
        await wait(timeout: .seconds(120)) { $0.contains { if case .scanCompleted = $0 { true } else { false } } }
    }

    /// The replay of everything delivered after `scan-completed`, from `initial`.
    func replay(initial: [String: String] = [:]) -> Replay {
        var replay = Replay(
            initial: Dictionary(uniqueKeysWithValues: initial.map { (ItemPath($0.key), ItemKind(contract: $0.value)) }))
        replay.apply(liveChanges)
        return replay
    }
}

extension ItemKind {
    init(contract name: String) {
        switch name {
        case "file": self = .file
        case "directory": self = .directory
        case "symlink": self = .symlink
        default: self = .other
        }
    }
}

extension Replay {
    /// The replayed paths as contract strings.
    var contractItems: [String: String] {
        Dictionary(uniqueKeysWithValues: items.map { ($0.key.description, $0.value.description) })
    }
}
