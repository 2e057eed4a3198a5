import Accounts
import FileshareTestSupport
import Foundation
import Testing

@Suite("rights per path")
struct AccessPolicyTests {
    /// alice and bob in "team"; carol alone; dave an admin.
    static func directory() throws -> UserDirectory {
        var directory = UserDirectory()
        for name in ["alice", "bob", "carol"] { try directory.addUser(name, passwordHash: "$2b$04$x") }
        try directory.addUser("dave", passwordHash: "$2b$04$x", isAdmin: true)
        try directory.addToGroup("team", members: ["alice", "bob"])
        try directory.grant(.read, on: "/", to: "team")
        try directory.grant(.write, on: "Projects", to: "alice")
        try directory.grant(.none, on: "Projects/Secret", to: "team")
        try directory.grant(.write, on: "Projects/Secret", to: "alice")
        try directory.grant(.upload, on: "Drop", to: "carol")
        try directory.grant(.read, on: "Reports/2026", to: "carol")
        return directory
    }

    static let cases: [(user: String, path: String, right: Right, listed: Bool)] = [
        ("alice", "", .read, true),
        ("alice", "Projects/plan.txt", .write, true),
        ("alice", "Projects/Secret/x", .write, true),  // her own rule beats the group's at the same path
        ("bob", "Projects/plan.txt", .read, true),
        ("bob", "Projects/Secret", .none, false),  // the more specific rule wins
        ("bob", "Projects/Secret/deep/x", .none, false),
        ("carol", "", .none, true),  // not readable, but the way to her folders
        ("carol", "Projects", .none, false),
        ("carol", "Drop", .upload, true),  // the drop box itself is listed…
        ("carol", "Drop/someone's.pdf", .upload, false),  // …what is in it never
        ("carol", "Reports", .none, true),  // the way to Reports/2026
        ("carol", "Reports/2025", .none, false),
        ("carol", "Reports/2026/q1.pdf", .read, true),
        ("dave", "Projects/Secret/x", .write, true),  // an admin
    ]

    @Test(
        "the most specific rule wins; own rules beat the group's; no rule is none; admins may do all", arguments: cases)
    func matrix(_ entry: (user: String, path: String, right: Right, listed: Bool)) throws {
        let policy = try #require(try Self.directory().policy(for: entry.user))
        let path = entry.path.split(separator: "/").map(String.init)
        #expect(policy.right(at: path) == entry.right, "\(entry.user) at /\(entry.path)")
        #expect(policy.isListed(path) == entry.listed, "\(entry.user) sees /\(entry.path)")
    }

    @Test("among groups at one path the greatest right holds; a user in no group and without rules has none")
    func groups() throws {
        var directory = try Self.directory()
        try directory.addToGroup("editors", members: ["bob"])
        try directory.grant(.write, on: "Projects", to: "editors")
        try directory.grant(.upload, on: "Projects", to: "team")
        #expect(directory.policy(for: "bob")?.right(at: ["Projects", "a"]) == .write)
        try directory.addUser("erin", passwordHash: "h")
        #expect(directory.policy(for: "erin")?.right(at: []) == Right.none)
        #expect(directory.policy(for: "erin")?.isListed([]) == false)
        #expect(directory.policy(for: "nobody") == nil)
    }

    @Test("what each right allows")
    func capabilities() {
        #expect(Right.allCases.filter(\.canRead) == [.read, .write])
        #expect(Right.allCases.filter(\.canAdd) == [.upload, .write])
        #expect(Right.allCases.filter(\.canChange) == [.write])
        #expect(Right.allCases.filter(\.canSee) == [.upload, .read, .write])
    }
}

@Suite("the user directory")
struct UserDirectoryTests {
    @Test("changes are checked, and a refused one leaves the directory as it was")
    func changes() throws {
        var directory = UserDirectory()
        try directory.addUser("alice@example.com", passwordHash: "h1")
        let before = directory
        for (change, code) in [
            (
                { (d: inout UserDirectory) throws(AccountsError) in
                    try d.addUser("alice@example.com", passwordHash: "x")
                }, AccountsError.Code.exists
            ),
            (
                { (d: inout UserDirectory) throws(AccountsError) in try d.addUser(".hidden", passwordHash: "x") },
                .invalid
            ),
            ({ (d: inout UserDirectory) throws(AccountsError) in try d.addUser("", passwordHash: "x") }, .invalid),
            ({ (d: inout UserDirectory) throws(AccountsError) in try d.addUser("a b", passwordHash: "x") }, .invalid),
            (
                { (d: inout UserDirectory) throws(AccountsError) in
                    try d.addUser(String(repeating: "a", count: 65), passwordHash: "x")
                }, .invalid
            ),
            (
                { (d: inout UserDirectory) throws(AccountsError) in try d.setPassword("bob", passwordHash: "x") },
                .notFound
            ),
            ({ (d: inout UserDirectory) throws(AccountsError) in try d.removeUser("bob") }, .notFound),
            (
                { (d: inout UserDirectory) throws(AccountsError) in try d.addToGroup("team", members: ["bob"]) },
                .notFound
            ),
            (
                { (d: inout UserDirectory) throws(AccountsError) in try d.addToGroup("alice@example.com", members: [])
                }, .exists
            ),
            ({ (d: inout UserDirectory) throws(AccountsError) in try d.grant(.read, on: "/", to: "bob") }, .notFound),
            (
                { (d: inout UserDirectory) throws(AccountsError) in
                    try d.grant(.read, on: "a/../b", to: "alice@example.com")
                }, .invalid
            ),
            (
                { (d: inout UserDirectory) throws(AccountsError) in
                    try d.grant(.read, on: ".fileshare", to: "alice@example.com")
                }, .invalid
            ),
            (
                { (d: inout UserDirectory) throws(AccountsError) in try d.revoke(on: "/", from: "alice@example.com") },
                .notFound
            ),
            ({ (d: inout UserDirectory) throws(AccountsError) in try d.removeGroup("team") }, .notFound),
        ] {
            var copy = directory
            #expect(throws: AccountsError.self) { try change(&copy) }
            do { try change(&copy) } catch { #expect(error.code == code, "\(error.message)") }
            #expect(copy == before)
        }
    }

    @Test("removing a user takes them out of groups and removes their rules; a group's removal its rules")
    func removal() throws {
        var directory = UserDirectory()
        try directory.addUser("alice", passwordHash: "h")
        try directory.addUser("bob", passwordHash: "h")
        try directory.addToGroup("team", members: ["alice", "bob"])
        try directory.grant(.write, on: "A", to: "alice")
        try directory.grant(.read, on: "A", to: "team")
        try directory.grant(.write, on: "/A/", to: "alice")  // the same rule, replaced
        #expect(directory.grants.count == 2)
        try directory.removeUser("alice")
        #expect(directory.groups["team"] == ["bob"])
        #expect(directory.grants.map(\.subject) == ["team"])
        try directory.removeFromGroup("team", members: ["bob"])
        #expect(directory.groups["team"] == [])
        try directory.removeGroup("team")
        #expect(directory.grants.isEmpty && directory.groups.isEmpty)
    }
}

@Suite("the users file")
struct UsersFileTests {
    @Test("written atomically, readable by its owner only, and read back the same")
    func roundTrip() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/users.json"
        #expect(try UsersFile.read(path) == nil)
        let directory = try AccessPolicyTests.directory()
        try UsersFile.write(directory, to: path)
        #expect(try UsersFile.read(path) == directory)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains(#""format" : "fileshare-users 1""#) && text.contains(#""path" : "/Projects/Secret""#))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["users.json"])
    }

    @Test(
        "a damaged or foreign file is refused with a message that names it and the problem",
        arguments: [
            ("{", "is not a users file"),
            (#"{"format":"fileshare-users 9","users":{},"grants":[]}"#, "a newer fileshare"),
            (
                #"{"format":"fileshare-users 1","users":{"a":{"password":"h"}},"grants":[{"to":"a","path":"/","right":"all"}]}"#,
                "is not a right"
            ),
            (
                #"{"format":"fileshare-users 1","users":{},"grants":[{"to":"a","path":"/","right":"read"}]}"#,
                "neither user nor group"
            ),
            (#"{"format":"fileshare-users 1","users":{},"groups":{"g":["x"]},"grants":[]}"#, "who is not a user"),
            (
                #"{"format":"fileshare-users 1","users":{"a":{"password":"h"}},"grants":[{"to":"a","path":"/../x","right":"read"}]}"#,
                "not a path"
            ),
        ])
    func damaged(_ entry: (String, String)) throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/users.json"
        try writeFile(entry.0.utf8, to: path)
        do {
            _ = try UsersFile.read(path)
            Issue.record("read a damaged file: \(entry.0)")
        } catch {
            #expect(error.code == .damaged)
            #expect(error.message.contains(entry.1) && error.message.contains(path), "\(error.message)")
        }
    }
}

@Suite("password hashes")
struct PasswordHasherTests {
    @Test("bcrypt: salted (two hashes of one password differ), verified, wrong passwords and foreign hashes refused")
    func bcrypt() {
        let hasher = BcryptHasher(cost: 4)
        let first = hasher.hash("correct horse")
        let second = hasher.hash("correct horse")
        #expect(first != second && first.hasPrefix("$2"))
        #expect(!first.contains("correct horse"))
        #expect(hasher.verify("correct horse", against: first) && hasher.verify("correct horse", against: second))
        #expect(!hasher.verify("correct horsf", against: first))
        #expect(!hasher.verify("", against: first))
        #expect(!hasher.verify("correct horse", against: "correct horse"))
        #expect(!hasher.verify("x", against: "$2b$"))
    }
}
