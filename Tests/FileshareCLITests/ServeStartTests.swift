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

    @Test(
        "a folder the server cannot write: the start names the cause, not a missing file",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func unwritableFolder() async throws {
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
}
