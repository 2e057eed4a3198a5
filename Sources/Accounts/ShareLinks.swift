/// One share link: what it opens, for whom it was made, and when it ends.
/// The token itself is never kept, only its SHA-256 (``LinkToken/hash(_:)``):
/// a copy of the store does not give working links.
public struct ShareLink: Sendable, Codable, Equatable {
    /// What a link lets its holder do.
    public enum Access: String, Sendable, Codable, CaseIterable {
        /// See the item: a file's page and download, a folder's listing, downloads and ZIP.
        case read
        /// Add new files to the folder, seeing nothing of what is there.
        case upload
    }

    /// Why a link no longer opens (410).
    public enum Ending: String, Sendable, Codable, Equatable {
        /// Its time ran out.
        case expired
        /// Its maker (or an admin) ended it.
        case revoked
        /// It allowed so many downloads, and they were made.
        case usedUp = "used-up"
        /// Its item is gone.
        case deleted
    }

    /// The link's public name ("link 3f9a0c1d…"): in the audit and in listings. Not derivable into the token.
    public var id: String
    /// SHA-256 of the token, lowercase hexadecimal.
    public var tokenHash: String
    /// The observer's id of the item: the link follows it through renames and moves.
    public var item: String
    /// Where the item was when last seen (for listings; the id decides).
    public var path: String
    public var access: Access
    /// Who made it; `nil` on a share without a users file.
    public var creator: String?
    /// Seconds since the epoch.
    public var created: Int64
    /// Seconds since the epoch; `nil`: never.
    public var expires: Int64?
    /// The bcrypt hash of the link's password, if it has one.
    public var passwordHash: String?
    /// How many completed downloads it allows; `nil`: any number.
    public var maxDownloads: Int?
    /// Completed downloads so far.
    public var downloads: Int = 0
    /// Set once the link has ended for good (revoked, item deleted).
    public var ended: Ending?
    /// When it ended, seconds since the epoch (ended links are forgotten a while after).
    public var endedAt: Int64?

    /// Creates a link (``ShareLinks/add(_:)`` keeps it).
    public init(
        id: String, tokenHash: String, item: String, path: String, access: Access, creator: String?, created: Int64,
        expires: Int64?, passwordHash: String?, maxDownloads: Int?, downloads: Int = 0, ended: Ending? = nil,
        endedAt: Int64? = nil
    ) {
        self.id = id
        self.tokenHash = tokenHash
        self.item = item
        self.path = path
        self.access = access
        self.creator = creator
        self.created = created
        self.expires = expires
        self.passwordHash = passwordHash
        self.maxDownloads = maxDownloads
        self.downloads = downloads
        self.ended = ended
        self.endedAt = endedAt
    }

    /// Why the link does not open at `now`; `nil` when it does.
    public func ending(at now: Int64) -> Ending? {
        if let ended { return ended }
        if let expires, now >= expires { return .expired }
        if let maxDownloads, downloads >= maxDownloads { return .usedUp }
        return nil
    }
}

/// The share links of a folder, pure: made, looked up by token hash,
/// revoked, counted, followed to where their item is now, and ended.
/// Time is given to every call; a ``ShareLinkStore`` keeps them.
public struct ShareLinks: Sendable, Equatable {
    /// Ended links (revoked, expired, used up, item deleted) are kept this
    /// long so opening them says why (410), then forgotten (404).
    public static let keepEnded: Int64 = 30 * 24 * 3600

    /// Every link, oldest first.
    public private(set) var links: [ShareLink] = []

    /// Creates the state of `links`.
    public init(links: [ShareLink] = []) { self.links = links }

    /// What a token hash opens at `now`.
    public enum Lookup: Equatable, Sendable {
        /// It opens.
        case open(ShareLink)
        /// It no longer opens, for this reason (410).
        case ended(ShareLink, ShareLink.Ending)
        /// No link has this token (404).
        case unknown
    }

    /// What a token hash opens at `now`.
    public func lookup(tokenHash: String, now: Int64) -> Lookup {
        guard let link = links.first(where: { $0.tokenHash == tokenHash }) else { return .unknown }
        if let ending = link.ending(at: now) { return .ended(link, ending) }
        return .open(link)
    }

    /// The link with this id.
    public func link(id: String) -> ShareLink? { links.first { $0.id == id } }

    /// Adds a new link.
    public mutating func add(_ link: ShareLink) { links.append(link) }

    /// The links `user` may see: their own; an admin (or a share without
    /// a users file, `user` `nil`) all.
    public func visible(to user: String?, isAdmin: Bool) -> [ShareLink] {
        isAdmin ? links : links.filter { $0.creator == user }
    }

    /// Whether `user` may revoke `link`: its creator or an admin.
    public static func mayManage(_ link: ShareLink, user: String?, isAdmin: Bool) -> Bool {
        isAdmin || (user != nil && link.creator == user)
    }

    /// Ends link `id` at once; `false` when there is none.
    @discardableResult
    public mutating func revoke(id: String, now: Int64) -> Bool {
        guard let index = links.firstIndex(where: { $0.id == id }) else { return false }
        if links[index].ended == nil {
            links[index].ended = .revoked
            links[index].endedAt = now
        }
        return true
    }

    /// Counts a completed download of link `id`, unless it allows no more
    /// (a download that began before the last one allowed completed is not
    /// counted past the limit); `true` when it was counted.
    @discardableResult
    public mutating func countDownload(id: String) -> Bool {
        guard let index = links.firstIndex(where: { $0.id == id }) else { return false }
        if let max = links[index].maxDownloads, links[index].downloads >= max { return false }
        links[index].downloads += 1
        return true
    }

    /// Notes where link `id`'s item is now; `true` when that changed.
    public mutating func follow(id: String, to path: String) -> Bool {
        guard let index = links.firstIndex(where: { $0.id == id }), links[index].path != path else { return false }
        links[index].path = path
        return true
    }

    /// Ends link `id` because its item is gone.
    public mutating func itemDeleted(id: String, now: Int64) {
        guard let index = links.firstIndex(where: { $0.id == id }), links[index].ended == nil else { return }
        links[index].ended = .deleted
        links[index].endedAt = now
    }

    /// Forgets links that ended (or expired) more than ``keepEnded`` ago; `true` when any went.
    public mutating func forgetOld(now: Int64) -> Bool {
        let before = links.count
        links.removeAll { link in
            let end = link.endedAt ?? link.expires.flatMap { now >= $0 ? $0 : nil }
            return end.map { now - $0 > ShareLinks.keepEnded } ?? false
        }
        return links.count != before
    }
}
