import Accounts
import Logging
import Synchronization

/// Signs people in against the users file: the password checked (bcrypt,
/// or the cache of passwords verified a moment ago), failures counted
/// and slowed per address and per name (``SignInThrottle``), and logged.
/// The same for HTTP Basic on each request and for the page's sign-in form.
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

    let check: PasswordCheck
    private let throttle: Mutex<SignInThrottle>
    private let sessions: Mutex<SessionTable>
    private let logger: Logger

    init(
        check: PasswordCheck, limits: SignInThrottle.Limits = SignInThrottle.Limits(),
        sessionLimits: SessionTable.Limits = SessionTable.Limits(), logger: Logger
    ) {
        self.check = check
        throttle = Mutex(SignInThrottle(limits: limits))
        sessions = Mutex(SessionTable(limits: sessionLimits))
        self.logger = logger
    }

    /// How long the page's sessions last.
    var sessionLimits: SessionTable.Limits { sessions.withLock { $0.limits } }

    /// Starts a session for `user` (signed in just now) under a new id: 256
    /// random bits, never one the client had (no fixation).
    func startSession(for user: String, now: ContinuousClock.Instant = .now) -> String {
        let id = SessionTable.newID()
        sessions.withLock { $0.start(id: id, user: user, now: now) }
        return id
    }

    /// Who session `id` is, with their rights as the users file says now;
    /// `nil` when it ended, or the user is gone.
    func session(_ id: String, now: ContinuousClock.Instant = .now) -> Requester? {
        guard let user = sessions.withLock({ $0.user(of: id, now: now) }) else { return nil }
        guard let requester = requester(for: user) else {
            sessions.withLock { $0.end(user: user) }
            return nil
        }
        return requester
    }

    /// Ends session `id` (sign-out).
    func endSession(_ id: String) {
        sessions.withLock { $0.end(id) }
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
        if let wait = throttle.withLock({ $0.wait(address: address, name: name, now: now) }) {
            logger.notice(
                "a sign-in was refused: too many failures",
                metadata: ["address": "\(address)", "user": "\(name)", "retry-after": "\(wait)"])
            return .throttled(wait)
        }
        guard let policy = await check.verify(name: name, password: password, now: now) else {
            throttle.withLock { $0.failed(address: address, name: name, now: now) }
            logger.notice("a sign-in failed", metadata: ["address": "\(address)", "user": "\(name)"])
            return .failed
        }
        throttle.withLock { $0.succeeded(name: name) }
        return .signedIn(Requester(user: name, policy: policy))
    }

    /// The rights `name` has now, for a session signed in earlier; `nil` when the user is gone.
    func requester(for name: String) -> Requester? {
        check.users.current().policy(for: name).map { Requester(user: name, policy: $0) }
    }
}
