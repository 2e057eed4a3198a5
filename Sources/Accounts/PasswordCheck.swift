import FileWatching
import Synchronization

/// Checks a name and password against the users file in force, and
/// answers what that person may do: the one question every sign-in asks
/// (HTTP Basic on each request, the page's sign-in form).
///
/// bcrypt runs off Swift's cooperative pool (`runBlocking`), and only
/// when the ``CredentialCache`` does not already vouch for the pair. An
/// unknown name costs a bcrypt too, against a hash made for that purpose,
/// so the time taken does not tell which names exist.
public struct PasswordCheck: Sendable {
    /// The users file in force.
    public let users: LiveUsers
    /// What checks the password against the stored hash.
    public let hasher: any PasswordHasher
    private let decoy: Decoy

    /// Creates a check over `users`.
    public init(users: LiveUsers, hasher: any PasswordHasher = BcryptHasher()) {
        self.users = users
        self.hasher = hasher
        decoy = Decoy(hasher: hasher)
    }

    /// The person's rights when `password` is `name`'s; `nil` otherwise.
    public func verify(name: String, password: String, now: ContinuousClock.Instant = .now) async -> AccessPolicy? {
        let directory = users.current(now: now)
        guard let user = directory.users[name] else {
            let decoy = self.decoy
            let hasher = self.hasher
            _ = await runBlocking { hasher.verify(password, against: decoy.hash) }
            return nil
        }
        if !users.credentials.contains(name: name, password: password, now: now) {
            let hasher = self.hasher
            let hash = user.passwordHash
            guard await runBlocking({ hasher.verify(password, against: hash) }) else { return nil }
            // Remembered only if the file did not change meanwhile (else
            // the hash just checked may be one that is no longer in force).
            guard users.current(now: now).users[name]?.passwordHash == hash else { return nil }
            users.credentials.insert(name: name, password: password, now: now)
        }
        // The rights as the file says now (a grant changed meanwhile applies).
        return users.current(now: now).policy(for: name)
    }

    /// The person's rights when `password` is `name`'s and was verified a
    /// moment ago (the credential cache holds it), and how long that
    /// holds: until `expires`, while the cache's generation is `generation`
    /// (a users file that changes empties the cache, which moves it on).
    /// `nil` when it is not known without hashing (wrong, unknown, or not
    /// verified lately). Never hashes, so it may run where waiting is not allowed.
    public func verifiedRecently(
        name: String, password: String, now: ContinuousClock.Instant = .now
    ) -> (policy: AccessPolicy, expires: ContinuousClock.Instant, generation: Int)? {
        let directory = users.current(now: now)
        // Read before the lookup: a cache emptied after it moves the
        // generation past this one, never the other way round.
        let generation = users.credentials.generation
        guard directory.users[name] != nil,
            let expires = users.credentials.expiry(name: name, password: password, now: now),
            let policy = directory.policy(for: name)
        else { return nil }
        return (policy, expires, generation)
    }

    /// A hash of a password nobody has, made the first time it is needed.
    final class Decoy: Sendable {
        private let hasher: any PasswordHasher
        private let made = Mutex<String?>(nil)

        init(hasher: any PasswordHasher) { self.hasher = hasher }

        var hash: String {
            if let hash = made.withLock({ $0 }) { return hash }
            let hash = hasher.hash("decoy \(UInt64.random(in: .min ... .max))")
            made.withLock { $0 = $0 ?? hash }
            return hash
        }
    }
}
