import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How `fileshare serve` starts, and how it fails to: the folder it makes,
/// what a failed start leaves behind, a folder it cannot write, and what it
/// prints on stderr.
@Suite("fileshare serve: starting")
struct ServeStartTests {
    /// Whether `path` exists (a symbolic link counts).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    @Test("a missing folder is made, only its last component, and stderr says so; a mistyped parent is named")
    func makesOnlyTheLastFolder() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let typo = try CommandProcess(["serve", dir.path + "/Shraed/Docs", "--port", "0", "--no-auth"])
            #expect(await typo.exitStatus() == 2)
            #expect(
                typo.errorOutput.contains("\(dir.path)/Shraed does not exist"), "\(typo.errorOutput)")
            #expect(!Self.exists(dir.path + "/Shraed"))
            let serve = try CommandProcess(["serve", dir.path + "/Docs", "--port", "0", "--no-auth"])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            #expect(serve.errorOutput.contains("created the folder \(dir.path)/Docs"), "\(serve.errorOutput)")
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            // Made once: the next start says nothing of it.
            let again = try CommandProcess(["serve", dir.path + "/Docs", "--port", "0", "--no-auth"])
            #expect(await again.waitForLine { $0.hasPrefix("Serving ") }, "\(again.errorOutput)")
            #expect(!again.errorOutput.contains("created the folder"), "\(again.errorOutput)")
            again.send(SIGTERM)
            #expect(await again.exitStatus() == 0)
        }
    }

    @Test("a start that fails (the port is taken) leaves no folder, no private state and prints no password")
    func failedStartLeavesNothing() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let first = try CommandProcess(["serve", dir.path + "/first", "--port", "0", "--no-auth"])
            #expect(await first.waitForLine { $0.hasPrefix("Serving ") }, "\(first.errorOutput)")
            let port = try #require(ServeConfigurationTests.port(of: ServeConfigurationTests.url(of: first)))
            try FileManager.default.createDirectory(atPath: dir.path + "/existing", withIntermediateDirectories: false)
            for folder in ["made", "existing"] {
                let second = try CommandProcess(["serve", dir.path + "/" + folder, "--port", "\(port)"])
                #expect(await second.exitStatus() == 1)
                #expect(second.errorOutput.contains("port \(port) on 127.0.0.1 is taken"), "\(second.errorOutput)")
                #expect(!second.errorOutput.contains("password"), "\(second.errorOutput)")
                #expect(!Self.exists(dir.path + "/" + folder + "/.fileshare"), "\(folder)")
            }
            #expect(!Self.exists(dir.path + "/made"))
            #expect(Self.exists(dir.path + "/existing"))
            first.send(SIGTERM)
            #expect(await first.exitStatus() == 0)
        }
    }

    @Test("stderr: no change lines unless asked (--print-changes), no open-file-limit line, --quiet keeps notices out")
    func standardError() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let config = try dir.write("folder: \(dir.path)/share\nport: 0\nno-auth: true\n", to: "fileshare.yaml")
            for (extra, changes, notices) in [
                ([String](), false, true), (["--print-changes"], true, true), (["--quiet"], false, false),
            ] {
                let serve = try CommandProcess(["serve", "--config", config] + extra)
                #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
                let url = ServeConfigurationTests.url(of: serve)
                #expect(
                    try await curl([
                        "-X", "PUT", "--data-binary", "hello", url + "api/files/\(extra.count)\(changes).txt",
                    ]).0 == 201)
                #expect(await waitFor { serve.errorOutput.contains(#""type":"added""#) } == changes, "\(extra)")
                #expect(serve.errorOutput.contains("read the configuration from") == notices, "\(serve.errorOutput)")
                #expect(!serve.errorOutput.contains("open file limit"), "\(serve.errorOutput)")
                serve.send(SIGTERM)
                #expect(await serve.exitStatus() == 0)
            }
        }
    }

    @Test("a folder the server cannot write: the start names the cause, not a missing file")
    func unwritableFolder() async throws {
        try ExternalTool.setpriv.require()
        let dir = try TemporaryFolder()
        // Run as nobody, so that the folder (root's, 0755) cannot be written.
        #expect(chmod(dir.path, 0o755) == 0)
        try FileManager.default.createDirectory(atPath: dir.path + "/share", withIntermediateDirectories: false)
        for (folder, cause) in [
            ("share", "\(dir.path)/share: you cannot write there"),
            ("share/new", "cannot create \(dir.path)/share/new: you cannot write in \(dir.path)/share"),
        ] {
            let serve = try CommandProcess(
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", CommandProcess.binary, "serve",
                    dir.path + "/" + folder, "--port", "0", "--no-auth",
                ], executable: "/usr/bin/setpriv")
            #expect(await serve.exitStatus() == 2)
            #expect(serve.errorOutput.contains(cause), "\(serve.errorOutput)")
            #expect(!serve.errorOutput.contains("No such file"), "\(serve.errorOutput)")
        }
    }

    /// `fileshare ARGUMENTS` as the user nobody, with `home` as its home folder.
    static func asNobody(_ arguments: [String], home: String) throws -> CommandProcess {
        try CommandProcess(
            ["--reuid=65534", "--regid=65534", "--clear-groups", CommandProcess.binary] + arguments,
            executable: "/usr/bin/setpriv", environment: ["HOME": home, "XDG_STATE_HOME": "", "STATE_DIRECTORY": ""])
    }

    @Test(
        "a folder the server cannot write is shared read-only: its state goes to the home folder, named after its path, or to --state-folder; audit and changes find it; the folder is left as it was"
    )
    func readOnlyStateElsewhere() async throws {
        try ExternalTool.setpriv.require()
        let dir = try TemporaryFolder()
        #expect(chmod(dir.path, 0o755) == 0)
        // Root's folder, 0755: nobody reads it and cannot write it.
        let share = dir.path + "/Family Photos-2026"
        try FileManager.default.createDirectory(atPath: share, withIntermediateDirectories: false)
        try dir.write("hello\n", to: "Family Photos-2026/note.txt")
        let home = dir.path + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        #expect(chown(home, 65534, 65534) == 0)
        // As systemd-escape --path names it: no two paths share a name.
        let escaped =
            String(dir.path.dropFirst()).replacingOccurrences(of: "-", with: "\\x2d")
            .replacingOccurrences(of: "/", with: "-") + "-Family\\x20Photos\\x2d2026"
        let state = home + "/.local/state/fileshare/" + escaped
        let serve = try Self.asNobody(
            [
                "serve", share, "--port", "0", "--no-auth", "--read-only",
            ], home: home)
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        #expect(
            serve.errorOutput.contains("keeping the server's state in \(state), outside the folder shared read-only"),
            "\(serve.errorOutput)")
        let note = try await curl([url + "api/files/note.txt"])
        #expect(note.0 == 200 && note.1.hasPrefix("hello"), "\(note)")
        #expect(try await curl([url + "api/list"]).1.contains("note.txt"))
        #expect(try await curl(["-X", "PUT", "--data-binary", "x", url + "api/files/new.txt"]).0 == 403)
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0, "\(serve.errorOutput)")
        // The shared folder is as it was; the state is in the home folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: share) == ["note.txt"])
        for kept in ["changes", "audit", "observer-state"] {
            #expect(Self.exists(state + "/" + kept), "\(kept) in \(state)")
        }
        // What reads the state finds it without being told.
        let audit = try Self.asNobody(["audit", share], home: home)
        #expect(await audit.exitStatus() == 0, "\(audit.errorOutput)")
        #expect(audit.lines.contains { $0.contains("note.txt") }, "\(audit.lines)")
        let changes = try Self.asNobody(["changes", share, "--since", "0"], home: home)
        #expect(await changes.exitStatus() == 0, "\(changes.errorOutput)")
        // Told where: --state-folder, made if missing.
        let chosen = home + "/kept/photos"
        let again = try Self.asNobody(
            ["serve", share, "--port", "0", "--no-auth", "--read-only", "--state-folder", chosen], home: home)
        #expect(await again.waitForLine { $0.hasPrefix("Serving ") }, "\(again.errorOutput)")
        #expect(again.errorOutput.contains("keeping the server's state in \(chosen)"), "\(again.errorOutput)")
        again.send(SIGTERM)
        #expect(await again.exitStatus() == 0)
        #expect(Self.exists(chosen + "/changes"))
        let chosenAudit = try Self.asNobody(["audit", share, "--state-folder", chosen], home: home)
        #expect(await chosenAudit.exitStatus() == 1, "no download through that server: no audit yet")
        // Refused: a state folder for a folder people change, or inside the shared one.
        for (arguments, cause) in [
            (["--state-folder", chosen], "only for a folder shared read-only"),
            (["--read-only", "--state-folder", share + "/.state"], "inside the shared folder"),
        ] {
            let refused = try CommandProcess(["serve", share, "--port", "0", "--no-auth"] + arguments)
            #expect(await refused.exitStatus() == 2)
            #expect(refused.errorOutput.contains(cause), "\(refused.errorOutput)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: share) == ["note.txt"])
    }
}
