import FileWatching

/// One share link: what it opens, for whom it was made, and when it ends.
/// The token itself is never kept, only its SHA-256 (``LinkToken/hash(_:)``):
/// a copy of the store does not give working links.
struct ShareLink: Sendable, Codable, Equatable {
    /// What a link lets its holder do.
    enum Access: String, Sendable, Codable, CaseIterable {
        /// See the item: a file's page and download, a folder's listing, downloads and ZIP.
        case read
        /// Add new files to the folder, seeing nothing of what is there.
        case upload
    }

    /// Why a link no longer opens (410).
    enum Ending: String, Sendable, Codable, Equatable {
        case expired
        case revoked
        case usedUp = "used-up"
        case deleted
    }

    /// The link's public name ("link 3f9a0c1d…"): in the audit and in listings. Not derivable into the token.
    var id: String
    /// SHA-256 of the token, lowercase hexadecimal.
    var tokenHash: String
    /// The observer's id of the item: the link follows it through renames and moves.
    var item: String
    /// Where the item was when last seen (for listings; the id decides).
    var path: String
    var access: Access
    /// Who made it; `nil` on a share without a users file.
    var creator: String?
    /// Seconds since the epoch.
    var created: Int64
    /// Seconds since the epoch; `nil`: never.
    var expires: Int64?
    /// The bcrypt hash of the link's password, if it has one.
    var passwordHash: String?
    /// How many completed downloads it allows; `nil`: any number.
    var maxDownloads: Int?
    /// Completed downloads so far.
    var downloads: Int = 0
    /// Set once the link has ended for good (revoked, item deleted).
    var ended: Ending?
    /// When it ended, seconds since the epoch (ended links are forgotten a while after).
    var endedAt: Int64?

    /// Why the link does not open at `now`; `nil` when it does.
    func ending(at now: Int64) -> Ending? {
        if let ended { return ended }
        if let expires, now >= expires { return .expired }
        if let maxDownloads, downloads >= maxDownloads { return .usedUp }
        return nil
    }
}

/// The share links of a folder, pure: made, looked up by token hash,
/// revoked, counted, followed to where their item is now, and ended.
/// Time is given to every call; the store (``LinkStore``) keeps it on disk.
struct ShareLinks: Sendable, Equatable {
    /// Ended links (revoked, expired, used up, item deleted) are kept this
    /// long so opening them says why (410), then forgotten (404).
    static let keepEnded: Int64 = 30 * 24 * 3600

    private(set) var links: [ShareLink] = []

    init(links: [ShareLink] = []) { self.links = links }

    /// What a token hash opens at `now`.
    enum Lookup: Equatable, Sendable {
        case open(ShareLink)
        case ended(ShareLink, ShareLink.Ending)
        case unknown
    }

    func lookup(tokenHash: String, now: Int64) -> Lookup {
        guard let link = links.first(where: { $0.tokenHash == tokenHash }) else { return .unknown }
        if let ending = link.ending(at: now) { return .ended(link, ending) }
        return .open(link)
    }

    /// The link with this id.
    func link(id: String) -> ShareLink? { links.first { $0.id == id } }

    /// Adds a new link.
    mutating func add(_ link: ShareLink) { links.append(link) }

    /// The links `user` may see: their own; an admin (or a share without
    /// a users file, `user` `nil`) all.
    func visible(to user: String?, isAdmin: Bool) -> [ShareLink] {
        isAdmin ? links : links.filter { $0.creator == user }
    }

    /// Whether `user` may revoke `link`: its creator or an admin.
    static func mayManage(_ link: ShareLink, user: String?, isAdmin: Bool) -> Bool {
        isAdmin || (user != nil && link.creator == user)
    }

    /// Ends link `id` at once; `false` when there is none.
    @discardableResult
    mutating func revoke(id: String, now: Int64) -> Bool {
        guard let index = links.firstIndex(where: { $0.id == id }) else { return false }
        if links[index].ended == nil {
            links[index].ended = .revoked
            links[index].endedAt = now
        }
        return true
    }

    /// Counts a completed download of link `id`.
    mutating func countDownload(id: String) {
        guard let index = links.firstIndex(where: { $0.id == id }) else { return }
        links[index].downloads += 1
    }

    /// Notes where link `id`'s item is now; `true` when that changed.
    mutating func follow(id: String, to path: String) -> Bool {
        guard let index = links.firstIndex(where: { $0.id == id }), links[index].path != path else { return false }
        links[index].path = path
        return true
    }

    /// Ends link `id` because its item is gone.
    mutating func itemDeleted(id: String, now: Int64) {
        guard let index = links.firstIndex(where: { $0.id == id }), links[index].ended == nil else { return }
        links[index].ended = .deleted
        links[index].endedAt = now
    }

    /// Forgets links that ended (or expired) more than ``keepEnded`` ago; `true` when any went.
    mutating func forgetOld(now: Int64) -> Bool {
        let before = links.count
        links.removeAll { link in
            let end = link.endedAt ?? link.expires.flatMap { now >= $0 ? $0 : nil }
            return end.map { now - $0 > ShareLinks.keepEnded } ?? false
        }
        return links.count != before
    }
}
