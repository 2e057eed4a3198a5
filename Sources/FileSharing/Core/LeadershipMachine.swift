/// Which role a server of a folder shared by several plays, and what it
/// must do when its hold on the folder's lock changes: a pure state machine
/// (no database, no observer, time given), driven by ``LeadershipDriver``.
///
/// A follower serves requests and reads the shared log; once it gains the
/// lock it takes over (the observer restored from the saved state, the log
/// written from the number the last leader reached), and leads once that is
/// done. Losing the lock, or the database, ends leading at once: never two
/// writers.
struct LeadershipMachine: Sendable {
    /// The server's role.
    enum Role: Sendable, Hashable {
        /// Serves requests and follows the log another server writes.
        case follower
        /// Holds the lock and takes over (the observer is starting).
        case takingOver
        /// Holds the lock, runs the observer and writes the log.
        case leader
    }

    /// What happened.
    enum Event: Sendable, Hashable {
        /// The folder's lock was taken.
        case lockGained
        /// The lock was let go of (its connection ended).
        case lockLost
        /// Another server holds the lock.
        case lockHeldElsewhere
        /// The database cannot be reached.
        case databaseDown
        /// The takeover the machine asked for is done.
        case takeoverFinished
        /// The takeover the machine asked for failed.
        case takeoverFailed
    }

    /// What the driver must do, in order.
    enum Action: Sendable, Hashable {
        /// Become the writer and start the observer from the saved state.
        case takeOver
        /// Stop the observer and stop writing, at once.
        case stepDown
        /// Let go of the lock, so that it is tried for again (or another takes it).
        case releaseLock
    }

    private(set) var role: Role = .follower
    /// Whether the database answered last (the lock's connection, or a try for it).
    private(set) var databaseReachable = true
    /// When the lock was last gained.
    private(set) var lockGainedAt: ContinuousClock.Instant?
    /// When the current role began.
    private(set) var roleSince: ContinuousClock.Instant
    /// How long the last takeover took, from the lock gained to leading.
    private(set) var lastTakeover: Duration?
    /// How many takeovers finished.
    private(set) var takeovers = 0
    /// Whether the server knows its role: it led, or found another leading,
    /// or found the database gone (a server announces itself only then).
    private(set) var settled = false

    init(now: ContinuousClock.Instant) {
        roleSince = now
    }

    /// Whether this server leads.
    var isLeader: Bool { role == .leader }

    /// Applies `event` seen at `now`; returns what the driver must do.
    mutating func handle(_ event: Event, at now: ContinuousClock.Instant) -> [Action] {
        switch event {
        case .lockHeldElsewhere, .databaseDown, .takeoverFinished, .takeoverFailed: settled = true
        default: break
        }
        switch (event, role) {
        case (.lockHeldElsewhere, _):
            databaseReachable = true
            return []
        case (.lockGained, .follower):
            databaseReachable = true
            lockGainedAt = now
            become(.takingOver, at: now)
            return [.takeOver]
        case (.lockGained, _):
            return []
        case (.takeoverFinished, .takingOver):
            become(.leader, at: now)
            takeovers += 1
            lastTakeover = lockGainedAt.map { now - $0 }
            return []
        case (.takeoverFinished, _):
            // The lock went while the takeover ran: undo it.
            return [.stepDown]
        case (.takeoverFailed, .takingOver):
            become(.follower, at: now)
            return [.stepDown, .releaseLock]
        case (.takeoverFailed, _):
            return [.stepDown]
        case (.lockLost, .follower):
            return []
        case (.lockLost, _):
            become(.follower, at: now)
            return [.stepDown]
        case (.databaseDown, let role):
            databaseReachable = false
            guard role != .follower else { return [] }
            // The lock's session may still look alive to this process: stop
            // writing now, and give the lock up so the next leader need not wait.
            become(.follower, at: now)
            return [.stepDown, .releaseLock]
        }
    }

    private mutating func become(_ role: Role, at now: ContinuousClock.Instant) {
        self.role = role
        roleSince = now
    }
}
