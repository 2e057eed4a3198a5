public import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Which of the servers of one folder leads it (runs its observer and
/// writes its change log): the one that holds a session-level advisory
/// lock on the folder's key, on a connection of its own.
///
/// The lock belongs to the connection's session: when the leader dies, or
/// its connection breaks, the database lets go of it and another server's
/// next try takes it — within ``retryInterval`` of the database noticing.
/// A leader checks its connection every ``retryInterval``; a broken one
/// means leadership is lost at once (another may lead already). Two leaders
/// at once cannot interleave the log: its commits check the number they go
/// on from.
public final class FolderLeadership: Sendable {
    /// The folder's key.
    public let folder: String
    /// How often a follower tries to take the lead, and a leader checks its connection.
    public let retryInterval: Duration
    /// How long a connection, a check or a close may take before the
    /// connection counts as broken (and a leader's lead as lost): never
    /// shorter than 5 s, so a loaded machine's slow answer is not a failover.
    public var patience: Duration { max(retryInterval * 5, .seconds(5)) }
    private let url: DatabaseURL
    private let logger: Logger
    private let state = Mutex<(leading: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private let onChange: (@Sendable (Event) -> Void)?

    /// What ``run()`` reports.
    public enum Event: Sendable, Hashable {
        /// This server leads now.
        case gained
        /// This server stopped leading.
        case lost
        /// Another server leads (said once per connection, at its first try).
        case heldElsewhere
        /// The database cannot be reached.
        case unreachable
    }

    /// Creates the leadership of `folder`; nothing runs until ``run()``.
    /// - Parameter onChange: Told when this server gains or loses the lead,
    ///   finds it held by another, or cannot reach the database, in order,
    ///   on the task of ``run()``.
    public init(
        folder: String, url: DatabaseURL, retryInterval: Duration = .seconds(1), logger: Logger,
        onChange: (@Sendable (Event) -> Void)? = nil
    ) {
        self.folder = folder
        self.url = url
        self.retryInterval = retryInterval
        self.logger = logger
        self.onChange = onChange
    }

    /// Whether this server leads the folder now.
    public var isLeader: Bool { state.withLock { $0.leading } }

    /// Returns once this server leads (at once if it does), or the task is cancelled.
    public func waitForLeadership() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.leading || Task.isCancelled { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiters = state.withLock { state in
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Tries to lead until cancelled; leads while its connection lives.
    /// Cancelling closes the connection, which lets go of the lock.
    public func run() async {
        while !Task.isCancelled {
            do {
                let (configuration, logger) = (try url.connectionConfiguration(), self.logger)
                let connection = try await Self.bounded(patience, discard: { try? await $0.close() }) {
                    try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                }
                // Cancelled, the connection is closed at once: a query
                // waiting on a dead peer fails instead of holding the task.
                await withTaskCancellationHandler {
                    await hold(on: connection)
                } onCancel: {
                    let closing: EventLoopFuture<Void> = connection.close()
                    _ = closing
                }
                // Waited for within the bound only: a close on a broken
                // connection need not answer. The connection lives on in the
                // closing task until its close is done, as PostgresNIO asks.
                _ = try? await Self.bounded(patience) { try await connection.close() }
            } catch {
                logger.debug("cannot reach the database to lead", metadata: ["error": "\(error)"])
                if !Task.isCancelled { onChange?(.unreachable) }
            }
            setLeading(false)
            try? await Task.sleep(for: retryInterval)
        }
    }

    private func hold(on connection: PostgresConnection) async {
        let key = "fileshare folder " + folder
        var tried = false
        while !Task.isCancelled {
            do {
                let logger = self.logger
                let taken = try await Self.bounded(patience) {
                    try await connection.query(
                        "SELECT pg_try_advisory_lock(hashtextextended(\(key), 0))", logger: logger
                    ).collect().first?.decode(Bool.self)
                }
                if taken == true {
                    setLeading(true)
                    logger.notice("this server leads the folder", metadata: ["folder": "\(folder)"])
                    while !Task.isCancelled {
                        try await Task.sleep(for: retryInterval)
                        try await check(connection)
                    }
                    return
                }
                if !tried { onChange?(.heldElsewhere) }
                tried = true
                try await Task.sleep(for: retryInterval)
            } catch {
                if isLeader && !Task.isCancelled {
                    logger.error(
                        "lost the lead of the folder: its connection failed",
                        metadata: ["folder": "\(folder)", "error": "\(error)"])
                }
                return
            }
        }
    }

    /// Whether the connection still answers: a closed one (the server ended
    /// the session) fails at once; one that does not answer within
    /// ``patience`` (a peer gone silent) fails, and is closed by `run()`.
    private func check(_ connection: PostgresConnection) async throws {
        struct Closed: Error {}
        if connection.isClosed { throw Closed() }
        let logger = self.logger
        _ = try await Self.bounded(patience) { try await connection.query("SELECT 1", logger: logger) }
    }

    /// The result of `operation`, or ``DatabaseTimeout`` once `bound` has
    /// passed or the task is cancelled — without waiting for the operation
    /// to end: a query or a connection attempt on a peer that stopped
    /// answering may never end, and leadership must not hang on one.
    /// - Parameter discard: Given what the operation made when it ends after
    ///   the bound (nobody takes it then): a connection is closed there, not
    ///   dropped open.
    /// - Parameter clock: What measures the bound (a test gives its own).
    static func bounded<T: Sendable>(
        _ bound: Duration, clock: some Clock<Duration> = ContinuousClock(),
        discard: (@Sendable (T) async -> Void)? = nil,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let slot = Mutex(BoundedSlot<T>.empty)
        let finish: @Sendable (Result<T, any Error>) -> Bool = { result in
            let (taken, continuation) = slot.withLock { $0.taken(result) }
            continuation?.resume(with: result)
            return taken
        }
        let work = Task {
            do {
                let value = try await operation()
                // In a task of its own: this one is cancelled once the bound passed.
                if !finish(.success(value)), let discard { await Task { await discard(value) }.value }
            } catch {
                _ = finish(.failure(error))
            }
        }
        let timer = Task {
            try? await clock.sleep(for: bound)
            _ = finish(.failure(DatabaseTimeout(bound: bound)))
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if let result = slot.withLock({ $0.wait(continuation) }) { continuation.resume(with: result) }
            }
        } onCancel: {
            _ = finish(.failure(CancellationError()))
        }
    }

    private func setLeading(_ leading: Bool) {
        let (changed, waiters) = state.withLock { state in
            let changed = state.leading != leading
            state.leading = leading
            guard leading else { return (changed, [CheckedContinuation<Void, Never>]()) }
            defer { state.waiters.removeAll() }
            return (changed, state.waiters)
        }
        if changed { onChange?(leading ? .gained : .lost) }
        for waiter in waiters { waiter.resume() }
    }
}

/// A database operation that did not answer within its bound.
struct DatabaseTimeout: Error, CustomStringConvertible {
    let bound: Duration
    var description: String { "the database did not answer within \(bound)" }
}

/// Where ``FolderLeadership/bounded(_:clock:discard:_:)`` meets its first outcome: the
/// first result wins, whether it comes before or after the wait begins.
private enum BoundedSlot<T: Sendable>: Sendable {
    case empty
    case waiting(CheckedContinuation<T, any Error>)
    case finished(Result<T, any Error>)
    case resumed

    /// Records `result`; returns the continuation to resume, if one waits.
    mutating func finish(_ result: Result<T, any Error>) -> CheckedContinuation<T, any Error>? {
        taken(result).continuation
    }

    /// Records `result`: whether it is the one the caller gets, and the continuation to resume, if one waits.
    mutating func taken(_ result: Result<T, any Error>) -> (
        taken: Bool, continuation: CheckedContinuation<T, any Error>?
    ) {
        switch self {
        case .empty:
            self = .finished(result)
            return (true, nil)
        case .waiting(let continuation):
            self = .resumed
            return (true, continuation)
        case .finished, .resumed:
            return (false, nil)
        }
    }

    /// Starts the wait; returns the result at once when it came first.
    mutating func wait(_ continuation: CheckedContinuation<T, any Error>) -> Result<T, any Error>? {
        guard case .finished(let result) = self else {
            self = .waiting(continuation)
            return nil
        }
        self = .resumed
        return result
    }
}
