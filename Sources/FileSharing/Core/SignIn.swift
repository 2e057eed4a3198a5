import Accounts
import Logging
import Synchronization

/// Signs people in against the users file: the password checked (bcrypt,
/// or the cache of passwords verified a moment ago), failures counted
/// and slowed per address and per name (``SignInThrottle``), and logged.
/// The same for HTTP Basic on each request and for the page's sign-in form.
///
/// The page's sessions are in a ``SessionStore``: this server's memory, or
/// the database several servers share. Each is tied to its user's
/// password (``SessionStamp``): a changed password or a removed user ends
/// the user's sessions at their next use, on every server that reads the
/// same users file. The throttle stays per server.
final class SignIn: Sendable {
    /// How a sign-in ended.
    enum Outcome: Sendable {
        /// The name and password match: what that person may do.
        case signedIn(Requester)
        /// They do not (or the user does not exist: the same answer).
        case failed
        /// Too many failures from this address or for this name: try again after this long.
        case throttled(Duration)
    }

    /// How a check of a name and password begins: started here, joined to
    /// the same check under way, or refused by the throttle.
    private enum CheckStart {
        case started(Task<AccessPolicy?, Never>)
        case joined(Task<AccessPolicy?, Never>)
        case throttled(Duration)
    }

    let check: PasswordCheck
    private let throttle: Mutex<SignInThrottle>
    /// The checks under way, by name and password: a request that brings
    /// the same ones waits for that check's answer instead of counting an
    /// attempt of its own. A WebDAV client or a page opening many
    /// connections at once with the right password was otherwise counted as
    /// that many failures until the first hash ended, and its seventh
    /// request was slowed down (429); a guesser's passwords differ, and
    /// each is counted.
    private let checking = Mutex<[String: Task<AccessPolicy?, Never>]>([:])
    /// Where the page's sessions are.
    let sessions: any SessionStore
    private let logger: Logger

    init(
        check: PasswordCheck, limits: SignInThrottle.Limits = SignInThrottle.Limits(),
        sessions: any SessionStore = MemorySessionStore(), logger: Logger
    ) {
        self.check = check
        throttle = Mutex(SignInThrottle(limits: limits))
        self.sessions = sessions
        self.logger = logger
    }

    /// How long the page's sessions last.
    var sessionLimits: SessionTable.Limits { sessions.limits }

    /// Starts a session for `user` (signed in just now) under a new id: 256
    /// random bits, never one the client had (no fixation).
    /// - Throws: ``AccountsError`` `.unavailable` when the sessions' store cannot be reached.
    func startSession(for user: String) async throws(AccountsError) -> String {
        let id = SessionTable.newID()
        try await sessions.start(id: id, user: user, stamp: stamp(of: user) ?? "")
        return id
    }

    /// Who session `id` is, with their rights as the users file says now;
    /// `nil` when it ended, the user is gone or their password changed
    /// since (their sessions of the old password end then, everywhere).
    /// - Throws: ``AccountsError`` `.unavailable` when the sessions' store
    ///   cannot be reached: no answer, rather than a wrong one.
    func session(_ id: String) async throws(AccountsError) -> Requester? {
        guard let record = try await sessions.session(id) else { return nil }
        var current: (requester: Requester?, stamp: String?) = (requester(for: record.user), stamp(of: record.user))
        if current.requester == nil || current.stamp != record.stamp {
            // Before ending anything, the users file as it is now: it is
            // read again only once a second, and a server of several that
            // has not read a new password yet would end the sessions of the
            // new one everywhere (or all of a user just added).
            check.users.reloadIfChanged()
            current = (requester(for: record.user), stamp(of: record.user))
        }
        guard let requester = current.requester, let stamp = current.stamp else {
            try await sessions.end(user: record.user, keeping: nil)
            return nil
        }
        guard stamp == record.stamp else {
            try await sessions.end(user: record.user, keeping: stamp)
            return nil
        }
        return requester
    }

    /// Who session `id` is, when that is known without waiting: the
    /// sessions are in this server's memory, and the session is live and
    /// of its user's current password. `nil` otherwise (then
    /// ``session(_:)`` tells, and ends what must end).
    func sessionWithoutWaiting(_ id: String) -> Requester? {
        guard let memory = sessions as? MemorySessionStore, let record = memory.session(id),
            let requester = requester(for: record.user), stamp(of: record.user) == record.stamp
        else { return nil }
        return requester
    }

    /// Ends session `id` (sign-out).
    /// - Throws: ``AccountsError`` `.unavailable` when the sessions' store cannot be reached.
    func endSession(_ id: String) async throws(AccountsError) {
        try await sessions.end(id)
    }

    /// The ``SessionStamp`` of `user`'s password as the users file says now.
    private func stamp(of user: String) -> String? {
        check.users.current().users[user].map { SessionStamp.of(passwordHash: $0.passwordHash) }
    }

    /// Checks `name` and `password`, sent from `address`.
    func signIn(name: String, password: String, address: String, now: ContinuousClock.Instant = .now) async
        -> Outcome
    {
        // A name that cannot be one is refused at once (and not tracked: it would be anything).
        guard AccountName.isValid(name) else {
            logger.notice("a sign-in with an invalid user name failed", metadata: ["address": "\(address)"])
            return .failed
        }
        // Verified a moment ago: no hash to guard, nothing to count.
        if let found = verifiedCached(name: name, password: password, address: address, now: now) {
            return .signedIn(found.requester)
        }
        // The same name and password being checked for another request: its answer, counted once.
        let key = name + "\u{0}" + password
        let check = self.check
        let start: CheckStart = checking.withLock { checking in
            if let running = checking[key] { return .joined(running) }
            // Counted before the slow hash, so guesses sent at once cannot all pass the check.
            if let wait = throttle.withLock({ $0.attempt(address: address, name: name, now: now) }) {
                return .throttled(wait)
            }
            let task = Task { await check.verify(name: name, password: password, now: now) }
            checking[key] = task
            return .started(task)
        }
        let policy: AccessPolicy?
        switch start {
        case .throttled(let wait):
            logger.notice(
                "a sign-in was refused: too many failures",
                metadata: ["address": "\(address)", "user": "\(name)", "retry-after": "\(wait)"])
            return .throttled(wait)
        case .joined(let running):
            policy = await running.value
        case .started(let task):
            policy = await task.value
            checking.withLock { $0[key] = nil }
            guard policy != nil else {
                logger.notice("a sign-in failed", metadata: ["address": "\(address)", "user": "\(name)"])
                return .failed
            }
            throttle.withLock { $0.attemptSucceeded(address: address, name: name, now: now) }
        }
        guard let policy else { return .failed }
        return .signedIn(Requester(user: name, policy: policy))
    }

    /// What a connection remembers of the Basic credentials it last
    /// signed in with (``signInCached(authorization:address:now:remembered:)``).
    /// A class: looked at on every request of the connection, a struct of
    /// strings and rights was copied each time, a third of the look.
    final class Remembered: Sendable {
        /// The `Authorization` field, exactly as it came.
        let authorization: String
        let requester: Requester
        /// When the credential cache stops vouching for them.
        let expires: ContinuousClock.Instant
        /// The cache's generation when they were found in it.
        let generation: Int

        init(authorization: String, requester: Requester, expires: ContinuousClock.Instant, generation: Int) {
            self.authorization = authorization
            self.requester = requester
            self.expires = expires
            self.generation = generation
        }
    }

    /// Who the Basic credentials of `authorization` are when their password
    /// was verified a moment ago (see ``PasswordCheck/verifiedRecently(name:password:now:)``)
    /// and sign-ins are not being slowed, remembered by the connection they
    /// came on; `nil` when only ``signIn(name:password:address:now:)`` can tell.
    ///
    /// Scripts and WebDAV clients send the same field on every request of
    /// a connection, and looking it up in the ``CredentialCache`` means
    /// its keyed digest (a tenth of a small read with a users file, `perf`).
    /// The same field again is taken as the same person while the cache
    /// vouches for them: before their entry's end, and while the cache was
    /// not emptied (a users file that changes empties it, so a changed
    /// password, right or removal applies at the next request); the users
    /// file is polled and the sign-in throttle asked as on any sign-in.
    /// Any other field is looked up afresh. The memory is the
    /// connection's, which holds the field on every request anyway; the
    /// shared cache still holds no password.
    func signInCached(
        authorization: String?, address: String, now: ContinuousClock.Instant = .now,
        remembered: inout Remembered?
    ) -> Requester? {
        guard let authorization else { return nil }
        if let known = remembered, known.authorization == authorization, now < known.expires {
            check.users.refresh(now: now)
            if known.generation == check.users.credentials.generation,
                throttle.withLock({ $0.wait(address: address, name: known.requester.name, now: now) }) == nil
            {
                return known.requester
            }
        }
        remembered = nil
        guard let basic = BasicCredentials.parse(authorization),
            let found = verifiedCached(name: basic.name, password: basic.password, address: address, now: now)
        else { return nil }
        remembered = Remembered(
            authorization: authorization, requester: found.requester, expires: found.expires,
            generation: found.generation)
        return found.requester
    }

    private func verifiedCached(name: String, password: String, address: String, now: ContinuousClock.Instant)
        -> (requester: Requester, expires: ContinuousClock.Instant, generation: Int)?
    {
        guard AccountName.isValid(name),
            throttle.withLock({ $0.wait(address: address, name: name, now: now) }) == nil,
            let found = check.verifiedRecently(name: name, password: password, now: now)
        else { return nil }
        throttle.withLock { $0.succeeded(name: name) }
        return (Requester(user: name, policy: found.policy), found.expires, found.generation)
    }

    /// The rights `name` has now, for a session signed in earlier; `nil` when the user is gone.
    func requester(for name: String) -> Requester? {
        check.users.current().policy(for: name).map { Requester(user: name, policy: $0) }
    }
}
