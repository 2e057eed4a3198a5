import Accounts
import FileshareTestSupport
import Foundation
import Testing

/// `fileshare users` without `--users`: the users file the configuration
/// of `fileshare serve` names, and grants checked against its folder.
@Suite("fileshare users: the users file from the configuration")
struct UsersConfigurationTests {
    /// Runs `fileshare users ARGUMENTS` with `environment`, giving `input` on stdin.
    static func run(_ arguments: [String], environment: [String: String], input: String = "") async throws -> (
        status: Int32, lines: [String], error: String
    ) {
        let process = try CommandProcess(["users"] + arguments, environment: environment, input: .text(input))
        let status = await process.exitStatus(timeout: .seconds(60))
        return (status, process.lines, process.errorOutput)
    }

    @Test("FILESHARE_CONFIG or --config names the users file; FILESHARE_USERS and --users come first")
    func usersFileFromConfiguration() async throws {
        let dir = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: dir.path + "/share/Photos", withIntermediateDirectories: true)
        let config = try dir.write(
            "folder: \(dir.path)/share\nusers: \(dir.path)/users.json\n", to: "fileshare.yaml")
        var result = try await Self.run(
            ["add", "alice"], environment: ["FILESHARE_CONFIG": config], input: "alice password\n")
        #expect(result.status == 0, "\(result)")
        #expect(try UsersFile.read(dir.path + "/users.json")?.users["alice"] != nil)
        result = try await Self.run(["list", "--config", config], environment: [:])
        #expect(result.status == 0 && result.lines.contains { $0.contains("alice") }, "\(result)")
        // The environment's users file over the configuration's, --users over both.
        result = try await Self.run(
            ["add", "bob"], environment: ["FILESHARE_CONFIG": config, "FILESHARE_USERS": dir.path + "/other.json"],
            input: "bob's password\n")
        #expect(result.status == 0, "\(result)")
        #expect(try UsersFile.read(dir.path + "/other.json")?.users["bob"] != nil)
        result = try await Self.run(
            ["add", "carol", "--users", dir.path + "/third.json"], environment: ["FILESHARE_CONFIG": config],
            input: "carol's password\n")
        #expect(result.status == 0, "\(result)")
        #expect(try UsersFile.read(dir.path + "/third.json")?.users["carol"] != nil)
        #expect(try UsersFile.read(dir.path + "/users.json")?.users["carol"] == nil)
    }

    @Test("a grant on a path the configured folder does not have is made, with a warning")
    func grantWarnsOfMissingPath() async throws {
        let dir = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: dir.path + "/share/Photos", withIntermediateDirectories: true)
        let config = try dir.write(
            "folder: \(dir.path)/share\nusers: \(dir.path)/users.json\n", to: "fileshare.yaml")
        let environment = ["FILESHARE_CONFIG": config]
        var result = try await Self.run(["add", "alice"], environment: environment, input: "alice password\n")
        #expect(result.status == 0, "\(result)")
        result = try await Self.run(["grant", "alice", "Photos", "read"], environment: environment)
        #expect(result.status == 0 && result.error.isEmpty, "\(result)")
        result = try await Self.run(["grant", "alice", "Photso", "write"], environment: environment)
        #expect(result.status == 0 && result.lines == ["alice has write on /Photso"], "\(result)")
        #expect(result.error.contains("/Photso does not exist in \(dir.path)/share"), "\(result)")
        let grants = try #require(try UsersFile.read(dir.path + "/users.json")).grants
        #expect(grants.contains { $0.path == ["Photso"] && $0.subject == "alice" }, "\(grants)")
    }

    @Test("no users file anywhere, or a mistake in the configuration: exit 2, saying so")
    func mistakes() async throws {
        let dir = try TemporaryFolder()
        var result = try await Self.run(["list"], environment: ["FILESHARE_CONFIG": "", "FILESHARE_USERS": ""])
        #expect(result.status == 2 && result.error.contains("no users file given"), "\(result)")
        let bad = try dir.write("uers: /tmp/x.json\n", to: "bad.yaml")
        result = try await Self.run(["list", "--config", bad], environment: [:])
        #expect(result.status == 2, "\(result)")
        #expect(result.error.contains("\(bad), line 1: unknown key 'uers'; did you mean 'users'?"), "\(result)")
    }
}
