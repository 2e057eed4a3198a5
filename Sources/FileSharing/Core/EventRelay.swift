public import FileWatching
import Synchronization

/// Fans the observer's changes out to server-sent-event clients (and to the
/// command's stderr), as `events.md` JSON objects with the origin of the
/// changes the server made.
final class EventRelay: Sendable {
    private let origins: OriginRegistry
    private let clients = Mutex<[UInt64: AsyncStream<String>.Continuation]>([:])
    private let nextKey = Atomic<UInt64>(0)
    private let printer: (@Sendable (String) -> Void)?
    /// Events a slow client may fall behind by before its stream is ended
    /// (it reconnects and reloads, rather than miss events silently).
    static let clientBacklog = 50_000

    init(origins: OriginRegistry, printer: (@Sendable (String) -> Void)?) {
        self.origins = origins
        self.printer = printer
    }

    /// The JSON line of a change, with `"origin"` when the server caused it.
    func line(for change: Change) -> String {
        let line = change.jsonLine
        guard let origin = origins.origin(of: change) else { return line }
        return String(line.dropLast()) + ",\"origin\":" + origin.json + "}"
    }

    /// Called on the observer's thread with every batch.
    func deliver(_ batch: [Change]) {
        let lines = batch.map(line(for:))
        if let printer { for line in lines { printer(line) } }
        let clients = self.clients.withLock { Array($0) }
        for (key, client) in clients {
            for line in lines {
                if case .dropped = client.yield(line) {
                    client.finish()
                    _ = self.clients.withLock { $0.removeValue(forKey: key) }
                    break
                }
            }
        }
    }

    /// A new client's stream of JSON lines, and how to end it.
    func subscribe() -> (lines: AsyncStream<String>, end: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(EventRelay.clientBacklog))
        let key = nextKey.add(1, ordering: .relaxed).newValue
        clients.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.clients.withLock { $0.removeValue(forKey: key) } }
        return (stream, { continuation.finish() })
    }

    /// Ends every client's stream (the server stops).
    func finishAll() {
        let clients = self.clients.withLock { state in
            defer { state.removeAll() }
            return Array(state.values)
        }
        for client in clients { client.finish() }
    }

    var clientCount: Int { clients.withLock { $0.count } }

    /// Sends every client a comment now and then, until cancelled.
    func keepAlive(every interval: Duration = .seconds(15)) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let clients = self.clients.withLock { Array($0.values) }
            for client in clients { client.yield(": keep-alive") }
        }
    }
}
