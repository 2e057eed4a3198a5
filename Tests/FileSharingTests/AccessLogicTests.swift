import Accounts
import ChangeLog
import FileWatching
import Testing

@testable import FileSharing

/// reader: read on Team, none on Team/Secret, read on Reports/2026;
/// dropper: upload on Drop; nobody: no rule.
enum AccessFixture {
    static func directory() throws -> UserDirectory {
        var directory = UserDirectory()
        for name in ["reader", "writer", "dropper", "nobody"] {
            try directory.addUser(name, passwordHash: BcryptHasher(cost: 4).hash(name + "-pw"))
        }
        try directory.addUser("admin", passwordHash: BcryptHasher(cost: 4).hash("admin-pw"), isAdmin: true)
        try directory.grant(.read, on: "Team", to: "reader")
        try directory.grant(.none, on: "Team/Secret", to: "reader")
        try directory.grant(.read, on: "Reports/2026", to: "reader")
        try directory.grant(.write, on: "Team", to: "writer")
        try directory.grant(.upload, on: "Drop", to: "dropper")
        return directory
    }

    static func policy(_ user: String) throws -> AccessPolicy {
        try #require(try directory().policy(for: user))
    }
}

@Suite("the rights' answers")
struct AccessRulesTests {
    typealias Case = (user: String, operation: AccessOperation, path: String, denied: AccessDenied.Code?)

    static let cases: [Case] = [
        ("reader", .read, "Team/plan.txt", nil),
        ("reader", .read, "Team/Secret/code.txt", .hidden),
        ("reader", .read, "Private/diary.txt", .hidden),
        ("reader", .read, "Reports", .hidden),  // a way in is listed, not read
        ("reader", .add, "Team/new.txt", .forbidden),
        ("reader", .add, "Private/new.txt", .hidden),
        ("reader", .add, "Reports/new.txt", .hidden),  // in a way in, only what leads to a grant exists
        ("reader", .change, "Team/plan.txt", .forbidden),
        ("reader", .change, "Team/Secret/code.txt", .hidden),
        ("writer", .replace, "Team/plan.txt", nil),
        ("writer", .change, "Team/Secret", nil),
        ("writer", .change, "Private", .hidden),
        ("dropper", .add, "Drop/new.pdf", nil),
        ("dropper", .add, "Drop/deep/new.pdf", nil),
        ("dropper", .replace, "Drop/old.pdf", .dropBox),
        ("dropper", .read, "Drop/old.pdf", .hidden),
        ("dropper", .change, "Drop/old.pdf", .forbidden),  // the same whether it exists or not
        ("dropper", .change, "Drop/nothing.pdf", .forbidden),
        ("dropper", .add, "Team/x", .hidden),
        ("nobody", .read, "Team/plan.txt", .hidden),
        ("nobody", .add, "x.txt", .hidden),
        ("admin", .change, "Private/diary.txt", nil),
    ]

    @Test("each operation at each path: allowed, 404, 403 or a drop box's 409", arguments: cases)
    func check(_ entry: Case) throws {
        let policy = try AccessFixture.policy(entry.user)
        let denied = AccessRules.check(
            entry.operation, at: entry.path.split(separator: "/").map(String.init), policy: policy)
        #expect(denied?.code == entry.denied, "\(entry.user) \(entry.operation) \(entry.path)")
    }

    static let listings: [(user: String, path: String, scope: ListingScope?)] = [
        ("reader", "", .filtered), ("reader", "Reports", .filtered), ("reader", "Private", nil),
        ("reader", "Team/Secret", nil), ("dropper", "Drop", .empty), ("dropper", "Drop/sub", nil),
        ("nobody", "", .filtered), ("nobody", "Team", nil),
    ]

    @Test("listings: filtered, a drop box's empty one, or none (404)", arguments: listings)
    func listing(_ entry: (user: String, path: String, scope: ListingScope?)) throws {
        let policy = try AccessFixture.policy(entry.user)
        #expect(
            AccessRules.listing(at: entry.path.split(separator: "/").map(String.init), policy: policy) == entry.scope)
    }
}

@Suite("which changes a person is told of")
struct ChangeVisibilityTests {
    static let id = ItemID(rawValue: 7)

    static func item(_ path: String, size: Int64 = 3) -> ChangedItem {
        ChangedItem(path: ItemPath(path), id: id, kind: .file, size: size, isWriting: false)
    }

    typealias Case = (change: Change, seen: Change?)

    /// For reader (see ``AccessFixture``).
    static let cases: [Case] = [
        (.added(item("Team/a.txt")), .added(item("Team/a.txt"))),
        (.added(item("Team/Secret/a.txt")), nil),
        (.added(item("Private/a.txt")), nil),
        (.added(item("Reports/2025")), nil),
        (.removed(path: "Team/a.txt", id: id, kind: .file), .removed(path: "Team/a.txt", id: id, kind: .file)),
        (.modified(item("Private/a.txt")), nil),
        (.finished(path: "Private/a.txt", id: id, size: 1), nil),
        // Both ends seen: as it is.
        (
            .renamed(from: "Team/a.txt", to: "Team/b.txt", id: id, kind: .file),
            .renamed(from: "Team/a.txt", to: "Team/b.txt", id: id, kind: .file)
        ),
        // From a hidden folder into a seen one: it appears.
        (.moved(from: "Private/a.txt", to: "Team/a.txt", id: id, kind: .file), .added(item("Team/a.txt", size: 42))),
        (
            .moved(from: "Team/Secret/a.txt", to: "Team/a.txt", id: id, kind: .file),
            .added(item("Team/a.txt", size: 42))
        ),
        // The other way round: it goes.
        (
            .moved(from: "Team/a.txt", to: "Private/a.txt", id: id, kind: .file),
            .removed(path: "Team/a.txt", id: id, kind: .file)
        ),
        (.moved(from: "Private/a.txt", to: "Private/b.txt", id: id, kind: .file), nil),
        // A copy of something hidden: an added, without its source.
        (.duplicated(item("Team/c.txt"), source: "Private/a.txt"), .added(item("Team/c.txt"))),
        (
            .duplicated(item("Team/c.txt"), source: "Team/a.txt"),
            .duplicated(item("Team/c.txt"), source: "Team/a.txt")
        ),
        (.error(message: "cannot read Private/x", path: nil), nil),
        (.error(message: "cannot read", path: "Team/x"), .error(message: "cannot read", path: "Team/x")),
        (.rescanned(path: "Private", reason: "overflow"), nil),
        (
            .scanCompleted(root: "/srv", items: 3, elapsedMilliseconds: 1),
            .scanCompleted(root: "/srv", items: 3, elapsedMilliseconds: 1)
        ),
        // The way in to Reports/2026 is seen; Reports/2025 is not.
        (
            .added(ChangedItem(path: "Reports", id: id, kind: .directory, size: 0, isWriting: false)),
            .added(ChangedItem(path: "Reports", id: id, kind: .directory, size: 0, isWriting: false))
        ),
    ]

    @Test("a change as reader may see it", arguments: cases)
    func filter(_ entry: Case) throws {
        let policy = try AccessFixture.policy("reader")
        #expect(ChangeVisibility.filter(entry.change, for: policy, size: { _ in 42 }) == entry.seen)
    }

    @Test("an admin sees every change as it is; a record keeps its number, time and origin")
    func records() throws {
        let change = Change.moved(from: "Private/a.txt", to: "Team/a.txt", id: Self.id, kind: .file)
        let origin = ChangeOrigin(face: "api", client: "127.0.0.1:1", user: "writer", method: "POST")
        let record = ChangeRecord(seq: 12, entry: ChangeLogEntry(change, time: 1_000, origin: origin))
        #expect(ChangeVisibility.filter(record, for: try AccessFixture.policy("admin")) == record)
        let seen = try #require(ChangeVisibility.filter(record, for: try AccessFixture.policy("reader")))
        #expect(seen.seq == 12 && seen.time == 1_000 && seen.origin == origin)
        #expect(seen.change == .added(Self.item("Team/a.txt", size: 0)))
        #expect(ChangeVisibility.filter(record, for: try AccessFixture.policy("nobody")) == nil)
    }
}
