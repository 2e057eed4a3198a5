import Accounts
import FileshareTestSupport
import Foundation
import Testing

@testable import FileSharing

/// The share links' state, their tokens and expiry, alone; and what a
/// link's requester may do, by the same rules as everyone's.
@Suite("Share links, the logic", .timeLimit(.minutes(5)))
struct ShareLinkLogicTests {
    static func link(_ id: String, creator: String? = "writer", expires: Int64? = nil, max: Int? = nil) -> ShareLink {
        ShareLink(
            id: id, tokenHash: "hash-" + id, item: "00000000000000aa", path: "Team/plan.txt", access: .read,
            creator: creator, created: 1000, expires: expires, passwordHash: nil, maxDownloads: max)
    }

    @Test("a link opens until it expires, is used up, revoked, or its item deleted; each says why")
    func endings() {
        var links = ShareLinks()
        links.add(Self.link("a", expires: 2000))
        links.add(Self.link("b", max: 2))
        links.add(Self.link("c"))
        links.add(Self.link("d"))
        #expect(links.lookup(tokenHash: "hash-a", now: 1999) == .open(Self.link("a", expires: 2000)))
        guard case .ended(_, .expired) = links.lookup(tokenHash: "hash-a", now: 2000) else {
            Issue.record("an expired link still opens")
            return
        }
        links.countDownload(id: "b")
        if case .open = links.lookup(tokenHash: "hash-b", now: 1000) {} else { Issue.record("b ended early") }
        links.countDownload(id: "b")
        #expect(links.lookup(tokenHash: "hash-b", now: 1000).ending == .usedUp)
        let result1 = links.revoke(id: "c", now: 1500)
        #expect(result1)
        #expect(links.lookup(tokenHash: "hash-c", now: 1500).ending == .revoked)
        links.itemDeleted(id: "d", now: 1500)
        #expect(links.lookup(tokenHash: "hash-d", now: 1500).ending == .deleted)
        #expect(links.lookup(tokenHash: "nothing", now: 1500) == .unknown)
        let result2 = links.revoke(id: "zz", now: 1500)
        #expect(!result2)
        // Ended links are told as ended for a while, then forgotten.
        let result3 = links.forgetOld(now: 1500 + ShareLinks.keepEnded)
        #expect(!result3)
        let result4 = links.forgetOld(now: 1501 + ShareLinks.keepEnded + 500)
        #expect(result4)
        #expect(links.links.map(\.id) == ["b"])
    }

    @Test("users see their own links, admins all; only the creator or an admin may revoke")
    func ownership() {
        var links = ShareLinks()
        links.add(Self.link("a", creator: "writer"))
        links.add(Self.link("b", creator: "reader"))
        #expect(links.visible(to: "writer", isAdmin: false).map(\.id) == ["a"])
        #expect(links.visible(to: "admin", isAdmin: true).map(\.id) == ["a", "b"])
        #expect(ShareLinks.mayManage(Self.link("a", creator: "writer"), user: "writer", isAdmin: false))
        #expect(!ShareLinks.mayManage(Self.link("a", creator: "writer"), user: "reader", isAdmin: false))
        #expect(ShareLinks.mayManage(Self.link("a", creator: "writer"), user: "boss", isAdmin: true))
        #expect(!ShareLinks.mayManage(Self.link("a", creator: nil), user: nil, isAdmin: false))
        let result5 = links.follow(id: "a", to: "Team/renamed.txt")
        #expect(result5)
        let result6 = links.follow(id: "a", to: "Team/renamed.txt")
        #expect(!result6)
        #expect(links.link(id: "a")?.path == "Team/renamed.txt")
    }

    @Test("tokens: 256 random bits in base64url, stored only as a hash; the id tells nothing of the token")
    func tokens() {
        let tokens = (0..<200).map { _ in LinkToken.make() }
        #expect(Set(tokens).count == 200)
        for token in tokens {
            #expect(LinkToken.isWellFormed(token), "\(token)")
            #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        }
        let hash = LinkToken.hash(tokens[0])
        #expect(hash.count == 64 && !hash.contains(tokens[0]))
        #expect(LinkToken.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let id = LinkToken.id(ofHash: hash)
        #expect(id.count == 12 && !hash.hasPrefix(id))
        #expect(!LinkToken.isWellFormed(String(tokens[0].dropLast())))
        #expect(!LinkToken.isWellFormed(String(tokens[0].dropLast()) + "%"))
    }

    @Test(
        "expires: an ISO 8601 duration or an RFC 3339 time in the future",
        arguments: [
            ("P7D", Int64(7 * 86400)), ("PT1H", 3600), ("P1DT12H", 129_600), ("P2W", 1_209_600), ("PT90S", 90),
            ("PT1H30M", 5400),
        ])
    func expiry(_ entry: (String, Int64)) {
        #expect(LinkExpiry.parse(entry.0, now: 1_000_000) == 1_000_000 + entry.1)
    }

    @Test("expires refuses what is not a duration or a future time")
    func badExpiry() {
        for text in ["P", "PT", "P1M", "P1Y", "1D", "PT-1H", "P1H", "tomorrow", "", "P99999999999D"] {
            #expect(LinkExpiry.parse(text, now: 1_000_000) == nil, "\(text)")
        }
        #expect(LinkExpiry.parse("2030-01-02T03:04:05Z", now: 1_000_000) == 1_893_553_445)
        #expect(LinkExpiry.parse("2030-01-02T03:04:05.250+01:00", now: 1_000_000) == 1_893_549_845)
        #expect(LinkExpiry.parse("2001-01-01T00:00:00Z", now: 1_000_000_000_000) == nil)
    }

    @Test("a range request is one download per client, file and content within the window")
    func downloadDedup() {
        let dedup = DownloadCounter(DownloadDedup(window: .seconds(60), capacity: 3))
        let start = ContinuousClock.now
        let key = DownloadDedup.Key(client: "1.2.3.4", file: "a", validator: "\"v1\"")
        #expect(dedup.isNew(key, now: start))
        #expect(!dedup.isNew(key, now: start + .seconds(30)))
        #expect(dedup.isNew(DownloadDedup.Key(client: "1.2.3.4", file: "a", validator: "\"v2\""), now: start))
        #expect(dedup.isNew(DownloadDedup.Key(client: "5.6.7.8", file: "a", validator: "\"v1\""), now: start))
        #expect(dedup.isNew(key, now: start + .seconds(91)))
        for index in 0..<10 {
            _ = dedup.isNew(DownloadDedup.Key(client: "x", file: "\(index)", validator: ""), now: start + .seconds(100))
        }
        #expect(dedup.count <= 3)
    }

    @Test("past its capacity, the dedup forgets the oldest keys and keeps the newest half")
    func downloadDedupCapacity() {
        var dedup = DownloadDedup(window: .seconds(60), capacity: 1_000)
        let start = ContinuousClock.now
        func isNew(_ index: Int, after seconds: Int) -> Bool {
            dedup.isNew(.init(client: "c", file: "\(index)", validator: ""), now: start + .seconds(seconds))
        }
        var counts: [Int] = []
        var firstTimes = 0
        for index in 0..<10_000 {
            if isNew(index, after: 0) { firstTimes += 1 }
            counts.append(dedup.count)
        }
        #expect(firstTimes == 10_000)
        #expect(counts.max() ?? 0 <= 1_000)
        // The newest half are the same downloads still; the first ones are new again.
        let repeated = (9_500..<10_000).filter { !isNew($0, after: 1) }.count
        #expect(repeated == 500)
        let first = isNew(0, after: 1)
        #expect(first)
        // Remembered, but the window has passed.
        let late = isNew(9_999, after: 62)
        #expect(late)
    }

    /// The access matrix, for link requesters: a read link to Team and an upload link to Drop.
    static let linkCases: [(right: Right, operation: AccessOperation, path: String, denied: AccessDenied.Code?)] = [
        (.read, .read, "Team", nil),
        (.read, .read, "Team/plan.txt", nil),
        (.read, .read, "Team/Secret/code.txt", nil),
        (.read, .read, "Private/diary.txt", .hidden),
        (.read, .read, "", .hidden),
        (.read, .add, "Team/new.txt", .forbidden),
        (.read, .replace, "Team/plan.txt", .forbidden),
        (.read, .change, "Team/plan.txt", .forbidden),
        (.read, .change, "Private/diary.txt", .hidden),
        (.upload, .add, "Drop/new.txt", nil),
        (.upload, .replace, "Drop/old.pdf", .dropBox),
        (.upload, .read, "Drop/old.pdf", .hidden),
        (.upload, .change, "Drop/old.pdf", .forbidden),
        (.upload, .add, "Team/x.txt", .hidden),
        (.upload, .read, "Team/plan.txt", .hidden),
    ]

    @Test("a link's requester: its item is all it has, read or upload", arguments: linkCases)
    func linkRequester(_ entry: (right: Right, operation: AccessOperation, path: String, denied: AccessDenied.Code?)) {
        let root = entry.right == .read ? ["Team"] : ["Drop"]
        let policy = AccessPolicy(isAdmin: false, rules: [.init(path: root, right: entry.right, isPersonal: true)])
        let requester = Requester(user: nil, policy: policy, link: "abc123")
        #expect(requester.name == "link abc123")
        #expect(!requester.seesEverything)
        let path = entry.path.isEmpty ? [] : entry.path.split(separator: "/").map(String.init)
        #expect(AccessRules.check(entry.operation, at: path, policy: requester.policy)?.code == entry.denied)
        if entry.right == .upload {
            #expect(AccessRules.listing(at: ["Drop"], policy: policy) == .empty)
        }
    }
}

extension ShareLinks.Lookup {
    var ending: ShareLink.Ending? {
        if case .ended(_, let why) = self { return why }
        return nil
    }
}
