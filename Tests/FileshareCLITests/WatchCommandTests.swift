import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare watch` end to end: the real binary, real folders, real signals.
@Suite("fileshare watch")
struct WatchCommandTests {
    @Test(
        "--json prints scan-started, scan-completed and changes, a flushed line each; SIGINT and SIGTERM exit 0",
        arguments: [SIGINT, SIGTERM])
    func jsonStream(signal: Int32) async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try "one".write(toFile: dir.path + "/existing.txt", atomically: false, encoding: .utf8)
            let watch = try CommandProcess([
                "watch", dir.path, "--json", "--initial", "--latency", "0", "--settle", "0.2",
            ])
            #expect(await watch.waitForLine { $0.contains(#""type":"scan-completed""#) })
            try "two".write(toFile: dir.path + "/new.txt", atomically: false, encoding: .utf8)
            #expect(await watch.waitForLine { $0.contains(#""type":"finished""#) && $0.contains("new.txt") })
            let lines = watch.lines
            #expect(lines.first == #"{"type":"scan-started","root":"\#(dir.path)"}"#)
            #expect(lines.contains { $0.hasPrefix(#"{"type":"added","path":"existing.txt","id":""#) })
            #expect(
                lines.contains { $0.contains(#""type":"added","path":"new.txt""#) && $0.contains(#""writing":true"#) })
            for line in lines {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object?["type"] is String, "every line is a JSON object with a type: \(line)")
            }
            watch.send(signal)
            #expect(await watch.exitStatus() == 0)
        }
    }

    @Test(
        "--initial: a file closed just before the start is complete (no finished, also after a rename); one still open is writing, finished once closed"
    )
    func recentFilesAtStart() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try "closed".write(toFile: dir.path + "/a.txt", atomically: false, encoding: .utf8)
            let writer = open(dir.path + "/open.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            #expect(writer >= 0)
            #expect(write(writer, "partial", 7) == 7)
            // A settle time long enough that both files are recent at the scan, however slow the start.
            let watch = try CommandProcess([
                "watch", dir.path, "--json", "--initial", "--latency", "0", "--settle", "3",
            ])
            #expect(await watch.waitForLine { $0.contains(#""type":"scan-completed""#) })
            let lines = watch.lines
            #expect(lines.contains { $0.contains(#""path":"a.txt""#) && $0.contains(#""writing":false"#) }, "\(lines)")
            #expect(
                lines.contains { $0.contains(#""path":"open.txt""#) && $0.contains(#""writing":true"#) }, "\(lines)")
            try FileManager.default.moveItem(atPath: dir.path + "/a.txt", toPath: dir.path + "/b.txt")
            #expect(await watch.waitForLine { $0.contains(#""type":"renamed""#) })
            close(writer)
            // After the open file's finished, any finished of the closed one would have come before.
            #expect(await watch.waitForLine { $0.contains(#""type":"finished""#) && $0.contains("open.txt") })
            #expect(
                !watch.lines.contains {
                    $0.contains(#""type":"finished""#) && ($0.contains("a.txt") || $0.contains("b.txt"))
                },
                "\(watch.lines)")
            watch.send(SIGINT)
            #expect(await watch.exitStatus() == 0)
        }
    }

    @Test("human-readable lines without --json")
    func humanLines() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let watch = try CommandProcess(["watch", dir.path, "--latency", "0"])
            #expect(await watch.waitForLine { $0.hasPrefix("watching 0 items") })
            try FileManager.default.createDirectory(atPath: dir.path + "/Comics", withIntermediateDirectories: false)
            #expect(await watch.waitForLine { $0 == "added     Comics/" })
            watch.send(SIGINT)
            #expect(await watch.exitStatus() == 0)
        }
    }

    @Test("DIR defaults to ./Documents")
    func defaultDirectory() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try FileManager.default.createDirectory(atPath: dir.path + "/Documents", withIntermediateDirectories: false)
            let watch = try CommandProcess(["watch", "--json"], in: dir.path)
            #expect(await watch.waitForLine { $0 == #"{"type":"scan-started","root":"\#(dir.path)/Documents"}"# })
            watch.send(SIGTERM)
            #expect(await watch.exitStatus() == 0)
        }
    }

    @Test("the root removed: a root-removed line, exit 1")
    func rootRemoved() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let root = dir.path + "/root"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
            let watch = try CommandProcess(["watch", root, "--json"])
            #expect(await watch.waitForLine { $0.contains("scan-completed") })
            try FileManager.default.removeItem(atPath: root)
            #expect(await watch.exitStatus() == 1)
            #expect(watch.lines.last == #"{"type":"root-removed","root":"\#(root)"}"#)
            #expect(watch.errorOutput.contains("removed"))
        }
    }

    @Test(
        "as another user: an unreadable folder is degraded with the chmod to run; finished without leases")
    func unreadableFolderAsAnotherUser() async throws {
        try Requirement.requireRoot(for: "running the observer as another user")
        try ExternalTool.setpriv.require()
        // A separate function: the 6.3 compiler crashes on this body inside the closure.
        try await MachineSettings.shared { try await unreadableFolderBody() }
    }

    func unreadableFolderBody() async throws {
        let dir = try TemporaryFolder()
        let root = dir.path + "/shared"
        try FileManager.default.createDirectory(atPath: root + "/private/inner", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/public", withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root + "/public")
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: root + "/private")
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root + "/private") }
        let watch = try CommandProcess(
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", CommandProcess.binary, "watch", root, "--json",
                "--initial", "--latency", "0", "--settle", "0.2",
            ],
            executable: "/usr/bin/setpriv")
        #expect(await watch.waitForLine { $0.contains("scan-completed") })
        let degraded = watch.lines.first { $0.contains(#""type":"degraded""#) }
        #expect(degraded?.contains(#""path":"private","reason":"permission""#) == true, "\(watch.lines)")
        #expect(degraded?.contains("chmod") == true)
        // A file of root's, which the observer (not its owner) cannot lease:
        // finished comes from the kernel's close and the stability window.
        let fd = open(root + "/public/report.txt", O_WRONLY | O_CREAT, 0o644)
        #expect(fd >= 0)
        _ = write(fd, "data", 4)
        close(fd)
        #expect(await watch.waitForLine { $0.contains(#""type":"finished","path":"public/report.txt""#) })
        watch.send(SIGTERM)
        #expect(await watch.exitStatus() == 0)
    }

    @Test(
        "bad input: exit 2, one line on stderr, nothing created",
        arguments: [
            (["watch", "MISSING"], "no such directory"),
            (["watch", "FILE"], "not a directory"),
            (["watch", "DIR", "--state", "s.json", "--initial"], "--state cannot be combined with --initial"),
            (["watch", "DIR", "--bogus"], "--bogus"),
            (["watch", "DIR", "--latency", "soon"], "--latency"),
            (["watch", "DIR", "--exclude", ""], "--exclude"),
        ])
    func badInput(arguments: [String], message: String) async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try FileManager.default.createDirectory(atPath: dir.path + "/d", withIntermediateDirectories: false)
            try "x".write(toFile: dir.path + "/f", atomically: false, encoding: .utf8)
            let resolved = arguments.map { argument in
                switch argument {
                case "MISSING": dir.path + "/missing"
                case "FILE": dir.path + "/f"
                case "DIR": dir.path + "/d"
                default: argument
                }
            }
            let before = try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted()
            let watch = try CommandProcess(resolved, in: dir.path)
            #expect(await watch.exitStatus() == 2)
            let stderr = watch.errorOutput.split(separator: "\n")
            #expect(stderr.count == 1, "one line: \(stderr)")
            #expect(stderr.first?.contains(message) == true, "\(stderr)")
            #expect(watch.lines.isEmpty, "nothing on stdout")
            #expect(try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted() == before)
        }
    }
}
