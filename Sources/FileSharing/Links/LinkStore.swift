import Accounts
import FileWatching
import Foundation
import Logging
import Synchronization

/// The share links of a folder, kept in its private folder
/// (`.fileshare/shares.json`, written whole and atomically, readable by
/// the server's user only) around the pure ``ShareLinks``; with what
/// opening a link with a password needs: the check (bcrypt, cached like
/// sign-ins), the visitors who gave it (a cookie per link), and the
/// throttle that slows guesses of tokens and of passwords.
final class LinkStore: Sendable {
    let path: String
    let hasher: any PasswordHasher
    private let state: Mutex<ShareLinks>
    /// Link passwords verified a moment ago (keyed by link id and password, never holding either).
    private let verified = CredentialCache()
    /// Visitors who gave a link's password: session id to link id.
    private let sessions = Mutex(SessionTable())
    /// Failed token guesses and link passwords, per address and per link.
    let throttle: Mutex<SignInThrottle>
    private let logger: Logger

    init(
        path: String, hasher: any PasswordHasher, limits: SignInThrottle.Limits = SignInThrottle.Limits(),
        logger: Logger
    ) {
        self.path = path
        self.hasher = hasher
        self.logger = logger
        throttle = Mutex(SignInThrottle(limits: limits))
        var links = ShareLinks()
        do {
            if let bytes = try AtomicFile.read(path) {
                links = ShareLinks(links: try JSONDecoder().decode(Stored.self, from: Data(bytes)).links)
            }
        } catch {
            // A damaged store opens no link (none can be made up from it); it is rewritten at the next change.
            logger.error("cannot read the share links; none open", metadata: ["path": "\(path)", "error": "\(error)"])
        }
        state = Mutex(links)
    }

    private struct Stored: Codable {
        var version = 1
        var links: [ShareLink]
    }

    /// Seconds since the epoch.
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// Reads the links.
    func read<T: Sendable>(_ body: (ShareLinks) -> T) -> T { state.withLock { body($0) } }

    /// Changes the links and writes them when `body` says it changed them.
    @discardableResult
    func change<T: Sendable>(_ body: (inout ShareLinks) -> (T, changed: Bool)) -> T {
        let (result, snapshot): (T, ShareLinks?) = state.withLock { links in
            let (result, changed) = body(&links)
            return (result, changed ? links : nil)
        }
        if let snapshot { save(snapshot) }
        return result
    }

    private func save(_ links: ShareLinks) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            let data = try encoder.encode(Stored(links: links.links))
            try AtomicFile.write(Array(data), to: path, permissions: 0o600)
        } catch {
            logger.error("cannot write the share links", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// Makes a link; answers its token (told once, never kept) and the link.
    func make(
        item: String, path: String, access: ShareLink.Access, creator: String?, expires: Int64?, password: String?,
        maxDownloads: Int?, now: Int64 = LinkStore.now()
    ) async -> (token: String, link: ShareLink) {
        let hasher = self.hasher
        var passwordHash: String? = nil
        if let password { passwordHash = await runBlocking { hasher.hash(password) } }
        let token = LinkToken.make()
        let hash = LinkToken.hash(token)
        let link = ShareLink(
            id: LinkToken.id(ofHash: hash), tokenHash: hash, item: item, path: path, access: access, creator: creator,
            created: now, expires: expires, passwordHash: passwordHash, maxDownloads: maxDownloads)
        change { links in
            _ = links.forgetOld(now: now)
            links.add(link)
            return ((), true)
        }
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

    /// Starts a visitor's session for link `id` (its password given); answers the session id.
    func startSession(for id: String, now: ContinuousClock.Instant = .now) -> String {
        let session = SessionTable.newID()
        sessions.withLock { $0.start(id: session, user: id, now: now) }
        return session
    }

    /// Whether session `session` gave link `id`'s password.
    func hasSession(_ session: String, for id: String, now: ContinuousClock.Instant = .now) -> Bool {
        sessions.withLock { $0.user(of: session, now: now) } == id
    }
}
