import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare inbox` end to end: the real binary on real folders, killed
/// with SIGKILL at random moments.
@Suite("fileshare inbox")
struct InboxCommandTests {
    static let pdf = "%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
    static let png: [UInt8] =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        + [UInt8](repeating: 1, count: 13)

    static func write(_ path: String, _ bytes: [UInt8]) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try writeFile(Data(bytes), to: path)
    }

    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Every regular file under `root` (its private folder left out), relative path → content.
    static func files(in root: String) -> [String: String] {
        var result: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let item = enumerator?.nextObject() as? String {
            if item.hasPrefix(".fileshare") { continue }
            var info = stat()
            guard lstat(root + "/" + item, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            result[item] = read(root + "/" + item)
        }
        return result
    }

    @Test(
        "what the Inbox holds at start is taken in: accepted by content, clashing names numbered, refused ones and lying names quarantined with a reason; the Inbox ends empty"
    )
    func once() async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let root = folder.path
            try InboxCommandTests.write(root + "/Report.pdf", Array("already here".utf8))
            try InboxCommandTests.write(root + "/Inbox/Report.pdf", Array(InboxCommandTests.pdf.utf8))
            try InboxCommandTests.write(root + "/Inbox/Scan.txt", Array(InboxCommandTests.pdf.utf8))
            try InboxCommandTests.write(root + "/Inbox/photo.pdf", InboxCommandTests.png)
            try InboxCommandTests.write(root + "/Inbox/notes.txt", Array("plain words\n".utf8))
            try InboxCommandTests.write(root + "/Inbox/Album/a.txt", Array("a\n".utf8))
            try InboxCommandTests.write(root + "/Inbox/Album/b.txt", Array("b\n".utf8))
            let log = root + "/.fileshare-test-handler.log"
            let process = try CommandProcess([
                "inbox", root, "--once", "--accept", "pdf,public.plain-text", "--exec",
                "printf '%s %s\\n' \"${FILESHARE_REPEAT:-0}\" >> '\(log)'",
            ])
            #expect(await process.exitStatus(timeout: .seconds(60)) == 0, "\(process.errorOutput)")
            let files = InboxCommandTests.files(in: root)
            #expect(files["Report.pdf"] == "already here")
            #expect(files["Report 2.pdf"] == InboxCommandTests.pdf)
            // A PDF by its content, of an accepted type, but its name lies.
            #expect(files["Quarantine/Scan.txt"] == InboxCommandTests.pdf)
            #expect(files["Quarantine/Scan.txt.reason.txt"]?.contains("rename it 'Scan.pdf'") == true)
            #expect(files["notes.txt"] == "plain words\n")
            #expect(files["Album/a.txt"] == "a\n" && files["Album/b.txt"] == "b\n")
            #expect(files["Quarantine/photo.pdf"] != nil)
            #expect(files["Quarantine/photo.pdf.reason.txt"]?.contains("PNG") == true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/Inbox").isEmpty)
            let events = process.lines
            #expect(events.filter { $0.contains("\"type\":\"taken-in\"") }.count == 3)
            // A refusal is said once: its refused event, no error beside it.
            #expect(events.filter { $0.contains("photo.pdf") }.count == 1, "\(events)")
            #expect(events.contains { $0.contains("\"type\":\"refused\"") && $0.contains("photo.pdf") })
            let handled = (InboxCommandTests.read(log) ?? "").split(separator: "\n").sorted()
            #expect(
                handled == ["0 \(root)/Album", "0 \(root)/Report 2.pdf", "0 \(root)/notes.txt"])
        }
    }

    @Test(
        "symbolic links dropped in the Inbox (to a file, to a folder outside the share) are refused; what they lead to is neither moved nor copied in"
    )
    func symbolicLinks() async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let root = folder.path + "/share"
            let outside = folder.path + "/outside"
            try InboxCommandTests.write(outside + "/secret.pdf", Array(InboxCommandTests.pdf.utf8))
            try InboxCommandTests.write(outside + "/Album/private.txt", Array("private\n".utf8))
            try FileManager.default.createDirectory(atPath: root + "/Inbox", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: root + "/Inbox/secret.pdf", withDestinationPath: outside + "/secret.pdf")
            try FileManager.default.createSymbolicLink(
                atPath: root + "/Inbox/Album", withDestinationPath: "../../outside/Album")
            let process = try CommandProcess(["inbox", root, "--once", "--accept", "pdf,txt", "--folders", "unpack"])
            #expect(await process.exitStatus(timeout: .seconds(60)) == 0, "\(process.errorOutput)")
            // What the links led to is where it was, as it was.
            #expect(InboxCommandTests.read(outside + "/secret.pdf") == InboxCommandTests.pdf)
            #expect(InboxCommandTests.read(outside + "/Album/private.txt") == "private\n")
            // Nothing of it inside the share: no regular file holds its content.
            let files = InboxCommandTests.files(in: root)
            #expect(!files.values.contains(InboxCommandTests.pdf) && !files.values.contains("private\n"), "\(files)")
            let refused = process.lines.filter { $0.contains("\"type\":\"refused\"") }
            for name in ["secret.pdf", "Album"] {
                #expect(
                    refused.contains { $0.contains(name) && $0.contains("symbolic link") },
                    "\(name) refused as a link: \(process.lines)")
            }
            #expect(!process.lines.contains { $0.contains("\"type\":\"taken-in\"") }, "\(process.lines)")
        }
    }

    @Test(
        "names that lie (text named .png, a PDF named .txt): quarantined with the reason, or with --fix-extensions taken in under the corrected names",
        arguments: [false, true])
    func misleadingNames(fixing: Bool) async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let root = folder.path
            try InboxCommandTests.write(root + "/Inbox/photo.png", Array("plain words\n".utf8))
            try InboxCommandTests.write(root + "/Inbox/notes.txt", Array(InboxCommandTests.pdf.utf8))
            try InboxCommandTests.write(root + "/Inbox/sizes.txt", Array("a,b\n1,2\n".utf8))
            try InboxCommandTests.write(root + "/notes.pdf", Array("already here".utf8))
            let process = try CommandProcess(
                ["inbox", root, "--once", "--accept", "pdf,png,txt"] + (fixing ? ["--fix-extensions"] : []))
            #expect(await process.exitStatus(timeout: .seconds(60)) == 0, "\(process.errorOutput)")
            let files = InboxCommandTests.files(in: root)
            let events = process.lines
            #expect(files["sizes.txt"] == "a,b\n1,2\n")
            #expect(files["notes.pdf"] == "already here")
            if fixing {
                #expect(files["photo.txt"] == "plain words\n")
                #expect(files["notes 2.pdf"] == InboxCommandTests.pdf)
                #expect(
                    events.contains(
                        #"{"type":"taken-in","from":"Inbox/notes.txt","path":"notes 2.pdf","document_type":"com.adobe.pdf"}"#
                    ))
                #expect(!events.contains { $0.contains("\"type\":\"refused\"") }, "\(events)")
            } else {
                #expect(files["Quarantine/photo.png"] == "plain words\n")
                #expect(files["Quarantine/notes.txt"] == InboxCommandTests.pdf)
                let reason = files["Quarantine/photo.png.reason.txt"] ?? ""
                #expect(
                    reason.hasPrefix(
                        "the name of 'photo.png' says PNG image, but the content is a plain text document: "
                            + "rename it 'photo.txt', or have such names corrected (--fix-extensions)\n"), "\(reason)")
                #expect(
                    events.contains {
                        $0.contains(#""type":"refused","from":"Inbox/notes.txt","path":"Quarantine/notes.txt""#)
                            && $0.contains("rename it 'notes.pdf'")
                    }, "\(events)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/Inbox").isEmpty)
        }
    }

    @Test("a slow writer's file is not taken before it is finished; folders unpacked on request; per-type folders")
    func slowWriter() async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let root = folder.path
            try FileManager.default.createDirectory(atPath: root + "/Inbox", withIntermediateDirectories: true)
            let process = try CommandProcess([
                "inbox", root, "--settle", "0.3", "--folders", "unpack", "--folder-per-type",
            ])
            #expect(await waitFor { FileManager.default.fileExists(atPath: root + "/.fileshare/inbox.lock") })
            // A writer that pauses: the file stays in the Inbox while it is open.
            let fd = open(root + "/Inbox/big.pdf", O_WRONLY | O_CREAT, 0o644)
            let first = Array(InboxCommandTests.pdf.utf8)
            _ = first.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, 10) }
            try await Task.sleep(for: .milliseconds(1500))
            #expect(FileManager.default.fileExists(atPath: root + "/Inbox/big.pdf"))
            #expect(!process.lines.contains { $0.contains("big.pdf") })
            _ = first.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + 10, $0.count - 10) }
            close(fd)
            #expect(
                await process.waitForLine(timeout: .seconds(30)) { $0.contains("taken-in") && $0.contains("big.pdf") })
            let files = InboxCommandTests.files(in: root)
            let placed = files.first { $0.key.hasSuffix("/big.pdf") }
            #expect(placed?.value == InboxCommandTests.pdf, "\(files)")
            #expect(placed?.key.hasPrefix("PDF") == true, "\(files.keys)")
            // A folder, unpacked: its files taken in one by one, the folder removed.
            try InboxCommandTests.write(root + "/.staging/Batch/one.txt", Array("1\n".utf8))
            try InboxCommandTests.write(root + "/.staging/Batch/sub/two.txt", Array("2\n".utf8))
            try InboxCommandTests.write(root + "/.staging/Batch/.DS_Store", Array("finder\n".utf8))
            #expect(rename(root + "/.staging/Batch", root + "/Inbox/Batch") == 0)
            #expect(
                await process.waitForLine(timeout: .seconds(30)) { $0.contains("taken-in") && $0.contains("two.txt") })
            #expect(
                await waitFor(timeout: .seconds(10)) {
                    (try? FileManager.default.contentsOfDirectory(atPath: root + "/Inbox"))?.isEmpty == true
                })
            // The hidden file unpacking left went to the quarantine with the folder.
            #expect(
                await waitFor(timeout: .seconds(10)) {
                    InboxCommandTests.read(root + "/Quarantine/Batch/.DS_Store") == "finder\n"
                })
            process.send(SIGTERM)
            #expect(await process.exitStatus() == 0)
        }
    }

    @Test("serve --inbox: an upload into Inbox/ (page, API or WebDAV) is taken in; a refused one is quarantined")
    func serveInbox() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try InboxCommandTests.write(dir.path + "/report.pdf", Array(InboxCommandTests.pdf.utf8))
            try InboxCommandTests.write(dir.path + "/photo.png", InboxCommandTests.png)
            let serve = try CommandProcess([
                "serve", dir.path + "/share", "--port", "0", "--no-auth", "--inbox", "--print-changes",
            ])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            #expect(try await curl(["-T", dir.path + "/report.pdf", url + "api/files/Inbox/report.pdf"]).0 == 201)
            #expect(
                await waitFor(timeout: .seconds(30)) {
                    serve.errorOutput.contains(#""type":"taken-in","from":"Inbox/report.pdf","path":"report.pdf""#)
                })
            // The Inbox is watched through the server's observer: one inotify instance in the process, not two.
            let descriptors =
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(serve.processIdentifier)/fd")) ?? []
            let inotify = descriptors.filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(serve.processIdentifier)/fd/\($0)"))
                    == "anon_inode:inotify"
            }
            #expect(inotify.count == 1, "\(inotify.count) inotify instances")
            #expect(try await curl(["-T", dir.path + "/report.pdf", url + "dav/Inbox/report.pdf"]).0 == 201)
            #expect(
                await waitFor(timeout: .seconds(30)) {
                    serve.errorOutput.contains(#""type":"taken-in","from":"Inbox/report.pdf","path":"report 2.pdf""#)
                }, "\(serve.errorOutput)")
            let root = dir.path + "/share"
            #expect(InboxCommandTests.read(root + "/report.pdf") == InboxCommandTests.pdf)
            #expect(InboxCommandTests.read(root + "/report 2.pdf") == InboxCommandTests.pdf)
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/Inbox").isEmpty)
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
            // With --accept, an upload into the Inbox is checked at the door already; one put there on disk goes to the quarantine.
            let limited = try CommandProcess([
                "serve", root, "--port", "0", "--no-auth", "--inbox", "--accept", "pdf", "--print-changes",
            ])
            #expect(await limited.waitForLine { $0.hasPrefix("Serving ") })
            try InboxCommandTests.write(dir.path + "/.drop/photo.png", InboxCommandTests.png)
            #expect(rename(dir.path + "/.drop/photo.png", root + "/Inbox/photo.png") == 0)
            #expect(
                await waitFor(timeout: .seconds(30)) {
                    FileManager.default.fileExists(atPath: root + "/Quarantine/photo.png.reason.txt")
                })
            // The event is printed once the change log has it, which may be a moment after the file is there.
            #expect(
                await waitFor(timeout: .seconds(30)) { limited.errorOutput.contains(#""type":"refused""#) },
                "\(limited.errorOutput)")
            limited.send(SIGINT)
            #expect(await limited.exitStatus() == 0)
        }
    }

    @Test(
        "bad options exit 2 with one line",
        arguments: [
            ["--accept", "no.such.type"], ["--folders", "sideways"], ["--quarantine", "Inbox/Q"],
            ["--types", "/nonexistent.json"],
        ])
    func badOptions(arguments: [String]) async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let process = try CommandProcess(["inbox", folder.path, "--once"] + arguments)
            #expect(await process.exitStatus() == 2)
            #expect(process.errorOutput.split(separator: "\n").count == 1, "\(process.errorOutput)")
        }
        let missing = try CommandProcess(["inbox", "/nonexistent/folder", "--once"])
        #expect(await missing.exitStatus() == 2)
    }

    /// The kill test: files keep arriving while the processor is killed with
    /// SIGKILL at random moments and started again; at the end every file
    /// is in exactly one place with its content, and the handler was called
    /// once for each (again only with FILESHARE_REPEAT=1).
    @Test(
        "killed at random moments (FILESHARE_INBOX_KILLS times, 200 by default): every file ends in exactly one place; the handler runs once per file, or again flagged as a repeat"
    )
    func killed() async throws {
        try await MachineSettings.shared {
            let kills = Int(ProcessInfo.processInfo.environment["FILESHARE_INBOX_KILLS"] ?? "") ?? 200
            let folder = try TemporaryFolder()
            let root = folder.path
            let staging = root + "/.drop"
            try FileManager.default.createDirectory(atPath: root + "/Inbox", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
            let log = root + "/.fileshare-test-handler.log"
            let arguments = [
                "inbox", root, "--accept", "txt", "--settle", "0", "--exec",
                "printf '%s %s\\n' \"${FILESHARE_REPEAT:-0}\" >> '\(log)'",
            ]
            var seed = SystemRandomNumberGenerator()
            var expected: [String: Bool] = [:]  // content → accepted
            var dropped = 0
            for round in 0..<kills {
                let process = try CommandProcess(arguments)
                // A burst of files (some refused, many sharing a name), then a kill at a random moment.
                for _ in 0..<Int.random(in: 1...6, using: &seed) {
                    dropped += 1
                    let accepted = Int.random(in: 0..<5, using: &seed) != 0
                    let content =
                        "file \(dropped) of round \(round) \(UInt64.random(in: 0...UInt64.max, using: &seed))\n"
                    let name = ["Report.txt", "notes.txt", "Scan \(dropped % 7).txt"].randomElement(using: &seed)!
                    let bytes = accepted ? Array(content.utf8) : InboxCommandTests.png + Array(content.utf8)
                    try InboxCommandTests.write(staging + "/\(dropped)", bytes)
                    #expect(rename(staging + "/\(dropped)", root + "/Inbox/" + "\(dropped)-" + name) == 0)
                    expected[accepted ? content : String(decoding: bytes, as: UTF8.self)] = accepted
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...250, using: &seed)))
                process.send(SIGKILL)
                _ = await process.exitStatus()
            }
            // A last run, not killed, finishes the work.
            let last = try CommandProcess(["inbox", root, "--once", "--accept", "txt", "--exec", arguments.last!])
            #expect(await last.exitStatus(timeout: .seconds(120)) == 0, "\(last.errorOutput)")

            let files = InboxCommandTests.files(in: root).filter { !$0.key.hasSuffix(".reason.txt") }
            var places: [String: [String]] = [:]
            for (path, content) in files { places[content, default: []].append(path) }
            var misplaced: [String] = []
            for (content, accepted) in expected {
                let found = places[content] ?? []
                if found.count != 1 {
                    misplaced.append("\(found.count) copies of \(content.prefix(40))")
                } else if accepted == found[0].hasPrefix("Quarantine/") || found[0].hasPrefix("Inbox/") {
                    misplaced.append("\(content.prefix(40)) at \(found[0])")
                }
            }
            #expect(misplaced.isEmpty, "\(misplaced.prefix(10))")
            let extra = files.filter { expected[$0.value] == nil }.map(\.key)
            #expect(
                files.count == expected.count && extra.isEmpty,
                "files on disk: \(files.count), dropped: \(expected.count); not dropped: \(extra.prefix(10))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/Inbox").isEmpty)
            // Handler calls: once per accepted file; a second call only flagged as a repeat.
            let calls = (InboxCommandTests.read(log) ?? "").split(separator: "\n").map(String.init)
            var first: [String: Int] = [:], repeats: [String: Int] = [:]
            for call in calls {
                let path = String(call.dropFirst(2))
                if call.hasPrefix("0 ") { first[path, default: 0] += 1 } else { repeats[path, default: 0] += 1 }
            }
            let acceptedPaths = Set(files.keys.filter { !$0.hasPrefix("Quarantine/") }.map { root + "/" + $0 })
            #expect(Set(first.keys).union(repeats.keys) == acceptedPaths)
            #expect(first.values.allSatisfy { $0 == 1 }, "handler called twice without the repeat flag")
            let missingFirst = acceptedPaths.filter { first[$0] == nil }.count
            print(
                """
                inbox kill test: \(kills) kills, \(expected.count) files dropped (\(expected.values.filter { $0 }.count) accepted, \
                \(expected.values.filter { !$0 }.count) refused); every file in exactly one place: \(misplaced.isEmpty); \
                handler calls: \(calls.count) for \(acceptedPaths.count) accepted files, \(repeats.values.reduce(0, +)) repeats \
                flagged FILESHARE_REPEAT=1 (\(missingFirst) of them killed before the first call started)
                """)
        }
    }
}
