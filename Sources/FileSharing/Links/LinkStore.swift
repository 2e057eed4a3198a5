import Accounts
import FileWatching
import Foundation
import Logging
import Synchronization

/// The share links of a folder (a ``ShareLinkStore``: the private folder's
/// file, or the database several servers share), with what opening a link
/// with a password needs: the check (bcrypt, cached like sign-ins), the
/// visitors who gave it (a cookie per link, in a ``SessionStore``: shared
/// too when the links are), and the throttle that slows guesses of tokens
/// and of passwords (per server).
final class LinkStore: Sendable {
    /// Where the links are.
    let records: any ShareLinkStore
    let hasher: any PasswordHasher
    /// Link passwords verified a moment ago (keyed by link id and password,
    /// never holding either). Per server: a link's password never changes.
    private let verified = CredentialCache()
    /// Visitors who gave a link's password: session id to link id.
    private let visitors: any SessionStore
    /// Failed token guesses and link passwords, per address and per link.
    let throttle: Mutex<SignInThrottle>

    init(
        records: any ShareLinkStore, visitors: any SessionStore = MemorySessionStore(), hasher: any PasswordHasher,
        limits: SignInThrottle.Limits = SignInThrottle.Limits()
    ) {
        self.records = records
        self.visitors = visitors
        self.hasher = hasher
        throttle = Mutex(SignInThrottle(limits: limits))
    }

    /// Seconds since the epoch.
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// Makes a link; answers its token (told once, never kept) and the link.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func make(
        item: String, path: String, access: ShareLink.Access, creator: String?, expires: Int64?, password: String?,
        maxDownloads: Int?, now: Int64 = LinkStore.now()
    ) async throws(AccountsError) -> (token: String, link: ShareLink) {
        let hasher = self.hasher
        var passwordHash: String? = nil
        if let password { passwordHash = await runBlocking { hasher.hash(password) } }
        let token = LinkToken.make()
        let hash = LinkToken.hash(token)
        let link = ShareLink(
            id: LinkToken.id(ofHash: hash), tokenHash: hash, item: item, path: path, access: access, creator: creator,
            created: now, expires: expires, passwordHash: passwordHash, maxDownloads: maxDownloads)
        try await records.add(link)
        return (token, link)
    }

    /// Whether `password` is link `link`'s (bcrypt, or the cache of passwords verified a moment ago).
    func verify(_ password: String, for link: ShareLink, now: ContinuousClock.Instant = .now) async -> Bool {
        guard let hash = link.passwordHash else { return true }
        if verified.contains(name: link.id, password: password, now: now) { return true }
        let hasher = self.hasher
        guard await runBlocking({ hasher.verify(password, against: hash) }) else { return false }
        verified.insert(name: link.id, password: password, now: now)
        return true
    }

    /// What a password given for a link from one address comes to.
    enum PasswordOutcome: Equatable {
        case admitted
        case wrong
        /// Too many wrong ones from that address or for that link: not checked.
        case throttled(Duration)
    }

    /// Checks `password` for `link`, sent from `address`, under the throttle:
    /// one verified a moment ago is admitted at once; any other is counted
    /// before its slow hash, so guesses sent at once cannot all be checked.
    func check(
        _ password: String, for link: ShareLink, address: String, now: ContinuousClock.Instant = .now
    ) async -> PasswordOutcome {
        let key = "link " + link.id
        if let wait = throttle.withLock({ $0.wait(address: address, name: key, now: now) }) { return .throttled(wait) }
        if link.passwordHash == nil || verified.contains(name: link.id, password: password, now: now) {
            return .admitted
        }
        if let wait = throttle.withLock({ $0.attempt(address: address, name: key, now: now) }) {
            return .throttled(wait)
        }
        guard await verify(password, for: link, now: now) else { return .wrong }
        throttle.withLock { $0.attemptSucceeded(address: address, name: key, now: now) }
        return .admitted
    }

    /// Starts a visitor's session for link `id` (its password given); answers the session id.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func startSession(for id: String) async throws(AccountsError) -> String {
        let session = SessionTable.newID()
        try await visitors.start(id: session, user: id, stamp: "")
        return session
    }

    /// Whether session `session` gave link `id`'s password.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func hasSession(_ session: String, for id: String) async throws(AccountsError) -> Bool {
        try await visitors.session(session)?.user == id
    }
}
