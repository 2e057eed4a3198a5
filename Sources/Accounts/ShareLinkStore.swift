import FileWatching
import Foundation
public import Logging
import Synchronization

/// Where a folder's share links are kept: in its private folder
/// (``ShareLinksFile``), or in a database several servers share, so that a
/// link made on one opens on all, and a revoked or used-up one ends on all
/// at once.
///
/// A store decides whether a link is still open by its own clock (the
/// database's for a shared one), and counts downloads atomically: never
/// past a link's ``ShareLink/maxDownloads``, however many servers count.
public protocol ShareLinkStore: Sendable {
    /// Keeps a new link (and forgets links that ended long ago).
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func add(_ link: ShareLink) async throws(AccountsError)

    /// What a token's hash opens now.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func lookup(tokenHash: String) async throws(AccountsError) -> ShareLinks.Lookup

    /// The link with this id.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func link(id: String) async throws(AccountsError) -> ShareLink?

    /// The links `user` may see: their own; an admin (or `user` `nil` on a
    /// share without a users file) all.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func links(visibleTo user: String?, isAdmin: Bool) async throws(AccountsError) -> [ShareLink]

    /// Ends link `id` at once; `false` when there is none.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func revoke(id: String) async throws(AccountsError) -> Bool

    /// Counts a completed download of link `id` unless it allows no more;
    /// `true` when counted.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func countDownload(id: String) async throws(AccountsError) -> Bool

    /// Notes where link `id`'s item is now.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func follow(id: String, to path: String) async throws(AccountsError)

    /// Ends link `id` because its item is gone.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func itemDeleted(id: String) async throws(AccountsError)
}

/// The share links of one server's folder, in its private folder
/// (`.fileshare/shares.json`, written whole and atomically, readable by the
/// server's user only), read once when the server starts and kept in
/// memory around the pure ``ShareLinks``. The time is the system's.
public final class ShareLinksFile: ShareLinkStore {
    /// The file.
    public let path: String
    private let state: Mutex<ShareLinks>
    private let clock: @Sendable () -> Int64
    private let logger: Logger

    /// Reads the links in `path` (none when it is missing; a damaged file
    /// opens no link and is written anew at the next change).
    public init(
        path: String, logger: Logger,
        clock: @escaping @Sendable () -> Int64 = ShareLinksFile.systemClock
    ) {
        self.path = path
        self.logger = logger
        self.clock = clock
        var links = ShareLinks()
        do {
            if let bytes = try AtomicFile.read(path) {
                links = ShareLinks(links: try JSONDecoder().decode(Stored.self, from: Data(bytes)).links)
            }
        } catch {
            logger.error("cannot read the share links; none open", metadata: ["path": "\(path)", "error": "\(error)"])
        }
        state = Mutex(links)
    }

    /// Seconds since the epoch, by the system's clock.
    public static let systemClock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    private struct Stored: Codable {
        var version = 1
        var links: [ShareLink]
    }

    public func add(_ link: ShareLink) {
        let now = clock()
        change { links in
            _ = links.forgetOld(now: now)
            links.add(link)
            return ((), true)
        }
    }

    public func lookup(tokenHash: String) -> ShareLinks.Lookup {
        let now = clock()
        return state.withLock { $0.lookup(tokenHash: tokenHash, now: now) }
    }

    public func link(id: String) -> ShareLink? { state.withLock { $0.link(id: id) } }

    public func links(visibleTo user: String?, isAdmin: Bool) -> [ShareLink] {
        state.withLock { $0.visible(to: user, isAdmin: isAdmin) }
    }

    public func revoke(id: String) -> Bool {
        let now = clock()
        return change { links in
            let found = links.revoke(id: id, now: now)
            return (found, found)
        }
    }

    public func countDownload(id: String) -> Bool {
        change { links in
            let counted = links.countDownload(id: id)
            return (counted, counted)
        }
    }

    public func follow(id: String, to path: String) {
        change { links in ((), links.follow(id: id, to: path)) }
    }

    public func itemDeleted(id: String) {
        let now = clock()
        change { links in
            links.itemDeleted(id: id, now: now)
            return ((), true)
        }
    }

    /// Changes the links and writes them when `body` says it changed them.
    private func change<T: Sendable>(_ body: (inout ShareLinks) -> (T, changed: Bool)) -> T {
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
}
