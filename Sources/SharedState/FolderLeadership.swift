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
                let connection = try await PostgresConnection.connect(
                    configuration: try url.connectionConfiguration(), id: 1, logger: logger)
                // Cancelled, the connection is closed at once: a query
                // waiting on a dead peer fails instead of holding the task.
                await withTaskCancellationHandler {
                    await hold(on: connection)
                } onCancel: {
                    let closing: EventLoopFuture<Void> = connection.close()
                    _ = closing
                }
                try? await connection.close()
            } catch {
                logger.debug("cannot reach the database to lead", metadata: ["error": "\(error)"])
                if !Task.isCancelled { onChange?(.unreachable) }
            }
            setLeading(false)
            try? await Task.sleep(for: retryInterval)
        }
    }

    /// Takes the lock when it is free and keeps it while the connection
    /// answers; returns when the connection fails or the task is cancelled.
    private func hold(on connection: PostgresConnection) async {
        let key = "fileshare folder " + folder
        var tried = false
        while !Task.isCancelled {
            do {
                let rows = try await connection.query(
                    "SELECT pg_try_advisory_lock(hashtextextended(\(key), 0))", logger: logger
                ).collect()
                if try rows.first?.decode(Bool.self) == true {
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
    /// the session) fails at once; one that does not answer within five
    /// retry intervals (a peer gone silent) is closed, and fails.
    private func check(_ connection: PostgresConnection) async throws {
        struct Silent: Error {}
        if connection.isClosed { throw Silent() }
        let logger = self.logger
        let bound = retryInterval * 5
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await connection.query("SELECT 1", logger: logger) }
            group.addTask {
                try await Task.sleep(for: bound)
                try? await connection.close()
                throw Silent()
            }
            try await group.next()
            group.cancelAll()
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
