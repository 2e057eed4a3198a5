/// The page's sessions: which session id belongs to whom, until when.
///
/// A session ends when it has not been used for ``Limits/idle``, or
/// ``Limits/absolute`` after sign-in whatever its use, or at sign-out. An id
/// is made anew at every sign-in (the caller draws it: 256 random bits), so
/// an id planted in a browser before sign-in is never the one signed in
/// (no fixation). At most ``Limits/maxSessions`` are kept, the least
/// recently used dropped first.
///
/// A pure state machine: time is given to every call.
public struct SessionTable: Sendable {
    /// How long sessions last.
    public struct Limits: Sendable, Equatable {
        /// Unused this long, a session ends.
        public var idle: Duration
        /// This long after sign-in, a session ends however it is used.
        public var absolute: Duration
        /// The most sessions kept at once.
        public var maxSessions: Int

        public init(
            idle: Duration = .seconds(2 * 3600), absolute: Duration = .seconds(12 * 3600), maxSessions: Int = 10_000
        ) {
            self.idle = idle
            self.absolute = absolute
            self.maxSessions = maxSessions
        }
    }

    struct Session: Sendable {
        var user: String
        var stamp: String
        var started: ContinuousClock.Instant
        var used: ContinuousClock.Instant
    }

    /// The limits in force.
    public let limits: Limits
    private var sessions: [String: Session] = [:]

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// A new session id: 256 bits from the system's random source, as 64 hex digits.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Starts a session `id` for `user` at `now`; `stamp` is the user's
    /// ``SessionStamp`` at sign-in, given back by ``session(of:now:)``.
    public mutating func start(id: String, user: String, stamp: String = "", now: ContinuousClock.Instant) {
        sessions[id] = Session(user: user, stamp: stamp, started: now, used: now)
        guard sessions.count > limits.maxSessions else { return }
        sessions = sessions.filter { isLive($0.value, now: now) }
        while sessions.count > limits.maxSessions {
            guard let oldest = sessions.min(by: { $0.value.used < $1.value.used })?.key else { break }
            sessions.removeValue(forKey: oldest)
        }
    }

    /// The user of session `id` at `now` (and the session is used: its idle time starts again); `nil` when there is none or it ended.
    public mutating func user(of id: String, now: ContinuousClock.Instant) -> String? {
        session(of: id, now: now)?.user
    }

    /// The user of session `id` and its stamp at `now` (and the session is
    /// used); `nil` when there is none or it ended.
    public mutating func session(of id: String, now: ContinuousClock.Instant) -> SessionRecord? {
        guard var session = sessions[id] else { return nil }
        guard isLive(session, now: now) else {
            sessions.removeValue(forKey: id)
            return nil
        }
        session.used = now
        sessions[id] = session
        return SessionRecord(user: session.user, stamp: session.stamp)
    }

    /// Ends session `id` (sign-out).
    public mutating func end(_ id: String) {
        sessions.removeValue(forKey: id)
    }

    /// Ends every session of `user` (removed from the users file), or every
    /// one but those with stamp `keeping` (the password changed).
    public mutating func end(user: String, keeping: String? = nil) {
        sessions = sessions.filter { $0.value.user != user || (keeping != nil && $0.value.stamp == keeping) }
    }

    /// The sessions kept.
    public var count: Int { sessions.count }

    /// One session as it is kept, for a store that writes them down.
    public struct Entry: Sendable, Equatable {
        /// The id it is found by (a store that writes it keeps a hash there).
        public var id: String
        public var user: String
        public var stamp: String
        /// When it was signed in.
        public var started: ContinuousClock.Instant
        /// When it was last used.
        public var used: ContinuousClock.Instant

        public init(
            id: String, user: String, stamp: String, started: ContinuousClock.Instant, used: ContinuousClock.Instant
        ) {
            self.id = id
            self.user = user
            self.stamp = stamp
            self.started = started
            self.used = used
        }
    }

    /// The sessions live at `now`.
    public func entries(now: ContinuousClock.Instant) -> [Entry] {
        sessions.compactMap { id, session in
            guard isLive(session, now: now) else { return nil }
            return Entry(id: id, user: session.user, stamp: session.stamp, started: session.started, used: session.used)
        }
    }

    /// Takes back `entry` (read from where a store wrote it) if it is
    /// still live at `now`, under the same rules as a session started here.
    public mutating func restore(_ entry: Entry, now: ContinuousClock.Instant) {
        let session = Session(user: entry.user, stamp: entry.stamp, started: entry.started, used: entry.used)
        guard isLive(session, now: now), sessions.count < limits.maxSessions else { return }
        sessions[entry.id] = session
    }

    private func isLive(_ session: Session, now: ContinuousClock.Instant) -> Bool {
        now - session.used < limits.idle && now - session.started < limits.absolute
    }
}
