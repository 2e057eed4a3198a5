import Accounts
import FileshareTestSupport
import Foundation
import Testing

/// `fileshare users …` end to end: the real binary on a real users file.
@Suite("fileshare users")
struct UsersCommandTests {
    static func run(_ arguments: [String], users: String, input: String = "") async throws -> (
        status: Int32, lines: [String], error: String
    ) {
        let process = try CommandProcess(["users"] + arguments + ["--users", users], input: .text(input))
        let status = await process.exitStatus(timeout: .seconds(60))
        return (status, process.lines, process.errorOutput)
    }

    @Test("add (password from stdin, or made and printed once), group, grant, revoke, passwd, remove, list")
    func lifecycle() async throws {
        let folder = try TemporaryFolder()
        let users = folder.path + "/users.json"
        var result = try await Self.run(
            ["add", "alice@example.com", "--admin"], users: users, input: "correct horse\n")
        #expect(result.status == 0 && result.lines == ["added alice@example.com (admin)"], "\(result)")
        result = try await Self.run(["add", "bob"], users: users)
        #expect(result.status == 0, "\(result)")
        let made = try #require(result.lines.first?.split(separator: " ").last.map(String.init))
        #expect(result.lines.first?.hasPrefix("added bob; password: ") == true && made.count == 20)
        var directory = try #require(try UsersFile.read(users))
        let hasher = BcryptHasher()
        #expect(hasher.verify("correct horse", against: directory.users["alice@example.com"]!.passwordHash))
        #expect(hasher.verify(made, against: directory.users["bob"]!.passwordHash))
        #expect(directory.users["alice@example.com"]!.isAdmin && !directory.users["bob"]!.isAdmin)
        let mode = try FileManager.default.attributesOfItem(atPath: users)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!String(decoding: try Data(contentsOf: URL(fileURLWithPath: users)), as: UTF8.self).contains(made))

        #expect(try await Self.run(["group", "add", "team", "alice@example.com", "bob"], users: users).status == 0)
        #expect(try await Self.run(["grant", "team", "/", "read"], users: users).status == 0)
        #expect(try await Self.run(["grant", "bob", "Projects/Secret/", "none"], users: users).status == 0)
        #expect(try await Self.run(["grant", "bob", "Drop", "upload"], users: users).status == 0)
        directory = try #require(try UsersFile.read(users))
        let bob = try #require(directory.policy(for: "bob"))
        #expect(bob.right(at: ["Projects", "a.txt"]) == .read)
        #expect(bob.right(at: ["Projects", "Secret", "a.txt"]) == Right.none)
        #expect(bob.right(at: ["Drop", "new.pdf"]) == .upload)

        result = try await Self.run(["list", "--json"], users: users)
        #expect(
            result.lines == [
                #"{"user":"alice@example.com","admin":true,"groups":["team"]}"#,
                #"{"user":"bob","admin":false,"groups":["team"]}"#,
                #"{"group":"team","members":["alice@example.com","bob"]}"#,
                #"{"grant":"team","path":"/","right":"read"}"#,
                #"{"grant":"bob","path":"/Projects/Secret","right":"none"}"#,
                #"{"grant":"bob","path":"/Drop","right":"upload"}"#,
            ], "\(result)")
        result = try await Self.run(["list"], users: users)
        #expect(result.lines.first == "user  alice@example.com (admin) in team")
        #expect(!result.lines.joined().contains("$2"), "never a hash")

        #expect(try await Self.run(["revoke", "bob", "Drop"], users: users).status == 0)
        #expect(try await Self.run(["passwd", "bob"], users: users, input: "battery staple\n").status == 0)
        directory = try #require(try UsersFile.read(users))
        #expect(hasher.verify("battery staple", against: directory.users["bob"]!.passwordHash))
        #expect(!hasher.verify(made, against: directory.users["bob"]!.passwordHash))
        #expect(try await Self.run(["group", "remove", "team", "bob"], users: users).status == 0)
        #expect(try await Self.run(["remove", "bob"], users: users).status == 0)
        #expect(try await Self.run(["group", "remove", "team"], users: users).status == 0)
        directory = try #require(try UsersFile.read(users))
        #expect(Array(directory.users.keys) == ["alice@example.com"] && directory.groups.isEmpty)
        #expect(directory.grants.isEmpty)
    }

    @Test("bad use exits 2, a refused change exits 1; both say why in one line and leave the file as it was")
    func refusals() async throws {
        let folder = try TemporaryFolder()
        let users = folder.path + "/users.json"
        #expect(try await Self.run(["add", "alice", "--generate-password"], users: users).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: users))
        for (arguments, input, status, message) in [
            (["add", "alice"], "a good password\n", Int32(1), "exists already"),
            (["add", "bo b"], "a good password\n", 2, "not a valid name"),
            (["add", "carol"], "short\n", 2, "shorter than 8"),
            (["add", "carol"], String(repeating: "x", count: 73) + "\n", 2, "longer than 72 bytes"),
            (["passwd", "zed"], "a good password\n", 1, "no user is called 'zed'"),
            (["remove", "zed"], "", 1, "no user is called 'zed'"),
            (["grant", "alice", "/", "all"], "", 2, "is not a right"),
            (["grant", "zed", "/", "read"], "", 1, "no user or group is called 'zed'"),
            (["grant", "alice", "../etc", "read"], "", 1, "not a path in the shared folder"),
            (["group", "add", "alice", "alice"], "", 1, "is a user"),
            (["group", "add", "team", "zed"], "", 1, "no user is called 'zed'"),
            (["revoke", "alice", "/"], "", 1, "has no rule"),
        ] {
            let result = try await Self.run(arguments, users: users, input: input)
            #expect(result.status == status, "\(arguments): \(result)")
            #expect(
                result.error.contains(message) && result.error.split(separator: "\n").count == 1,
                "\(arguments): \(result.error)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: users)) == before, "\(arguments) left the file as it was")
        }
        // A damaged file is named, and left alone.
        try writeFile("{ not json".utf8, to: users)
        let damaged = try await Self.run(["add", "carol", "--generate-password"], users: users)
        #expect(damaged.status == 1 && damaged.error.contains("is not a users file"), "\(damaged)")
        #expect(try String(contentsOfFile: users, encoding: .utf8) == "{ not json")
    }

    @Test(
        "a users file broken by hand is named with its line and column and what was expected, never a decoder's dump; the advice works",
        arguments: [
            (
                "{\n  \"format\" : \"fileshare-users 1\",\n  \"grants\" : [],\n  \"users\" : {},\n}\n",
                "(line 4, column 15)", "JSON does not allow a comma after the last member of an object"
            ),
            (
                "{\n  \"format\" : 1,\n  \"grants\" : [],\n  \"users\" : {}\n}\n",
                "(line 2, column 14)", "expected a string for \"format\", found an integer"
            ),
            (
                "{\n  \"format\" : \"fileshare-users 1\",\n  \"users\" : {}\n}\n",
                "(line 1, column 1)", "expected a member \"grants\" in this object"
            ),
            (
                "{\n  \"format\" : \"fileshare-users 1\",\n  \"grants\" : [],\n  \"users\" : { \"ann\" : { \"admin\" : \"yes\" } }\n}\n",
                "(line 4, column 23)", "expected a member \"password\" in this object"
            ),
        ])
    func brokenByHand(content: String, place: String, expected: String) async throws {
        let folder = try TemporaryFolder()
        let users = folder.path + "/users.json"
        try writeFile(content.utf8, to: users)
        let serve = try CommandProcess(["serve", folder.path + "/share", "--port", "0", "--users", users])
        #expect(await serve.exitStatus(timeout: .seconds(60)) != 0)
        for output in [serve.errorOutput, try await Self.run(["list"], users: users).error] {
            #expect(output.contains(users + " " + place), "\(output)")
            #expect(output.contains(expected), "\(output)")
            #expect(!output.contains("DecodingError") && !output.contains("CodingKeys"), "\(output)")
        }
        #expect(try String(contentsOfFile: users, encoding: .utf8) == content, "left as it was")
        // The advice: correct it there, or move it aside and make a new one.
        #expect(
            serve.errorOutput.contains(
                "move it aside and make a new one with 'fileshare users add NAME --users \(users)'"))
        try FileManager.default.moveItem(atPath: users, toPath: users + ".broken")
        let added = try await Self.run(["add", "carol", "--generate-password"], users: users)
        #expect(added.status == 0, "\(added)")
        #expect(try UsersFile.read(users)?.users["carol"] != nil)
    }

    @Test("ten commands at once on one file: none loses another's change")
    func concurrent() async throws {
        let folder = try TemporaryFolder()
        let users = folder.path + "/users.json"
        try await withThrowingTaskGroup(of: Int32.self) { group in
            for index in 0..<10 {
                group.addTask {
                    try await Self.run(["add", "user\(index)", "--generate-password"], users: users).status
                }
            }
            for try await status in group { #expect(status == 0) }
        }
        let directory = try #require(try UsersFile.read(users))
        #expect(directory.users.keys.sorted() == (0..<10).map { "user\($0)" }.sorted())
    }
}
