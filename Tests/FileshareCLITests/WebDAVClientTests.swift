import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve`'s WebDAV face (`/dav/`) driven by real clients: litmus,
/// cadaver, rclone, a davfs2 mount, and the request sequences of Finder and
/// Windows (with curl). A missing client skips its test, except on CI, whose
/// .ci/run installs them.
@Suite("WebDAV clients")
struct WebDAVClientTests {
    static let litmusSuites = ["basic", "copymove", "props", "locks", "http"]

    @Test("litmus: basic, copymove, props, locks and http all pass, with credentials, without warnings")
    func litmus() async throws {
        try ExternalTool.litmus.require()
        try await MachineSettings.shared {
            let share = try await DAVShare(credentialsFromEnvironment: true)
            try await Self.runLitmus(Self.litmusSuites, on: share)
            try await share.stop()
        }
    }

    @Test("litmus: locks (and basic) pass with the locks in a database (serve --database)")
    func litmusWithDatabase() async throws {
        try ExternalTool.litmus.require()
        try await MachineSettings.shared {
            try await withPostgres { database in
                let share = try await DAVShare(extra: ["--database", database.url])
                try await Self.runLitmus(["basic", "locks"], on: share)
                try await share.stop()
            }
        }
    }

    /// Runs litmus's `suites` against `share`: each passes whole, without warnings.
    private static func runLitmus(_ suites: [String], on share: DAVShare) async throws {
        // litmus writes debug.log and child.log into its working folder.
        let work = try share.scratchFolder("litmus")
        let run = try CommandProcess(
            ["-k", share.dav, DAVShare.user, DAVShare.password], in: work, executable: ExternalTool.litmus.path,
            environment: ["TESTS": suites.joined(separator: " ")], input: .text(""))
        let status = await run.exitStatus(timeout: .seconds(300))
        // Each test's line is rewritten with carriage returns: what it said last counts.
        let lines = run.lines.map { $0.split(separator: "\r").last.map(String.init) ?? "" }
        let summaryPattern = #/summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed/#
        var summaries: [String: (line: String, run: Int, passed: Int, failed: Int)] = [:]
        for line in lines {
            if let match = line.firstMatch(of: summaryPattern) {
                summaries[String(match.1)] = (line, Int(match.2) ?? -1, Int(match.3) ?? -1, Int(match.4) ?? -1)
            }
        }
        let failing = lines.filter { $0.contains("FAIL") || $0.contains("SKIPPED") }
        let warnings = run.lines.filter { $0.contains("WARNING") || $0.contains("warning") }
        let report = (failing + warnings).joined(separator: "\n")
        #expect(
            summaries.keys.sorted() == suites.sorted(),
            "a summary for each suite:\n\(lines.suffix(20).joined(separator: "\n"))\n\(run.errorOutput)")
        for suite in suites {
            guard let summary = summaries[suite] else { continue }
            #expect(
                summary.run > 0 && summary.passed == summary.run && summary.failed == 0,
                "\(summary.line)\n\(report)")
        }
        #expect(warnings.isEmpty, "litmus warned:\n\(warnings.joined(separator: "\n"))")
        #expect(status == 0, "litmus exited with \(status) (-1: timed out):\n\(report)")
    }

    @Test("cadaver: mkcol, put, get, copy, move, propset/propget, lock (kept by another client) and unlock, delete, ls")
    func cadaver() async throws {
        try ExternalTool.cadaver.require()
        try await MachineSettings.shared {
            let share = try await DAVShare()
            let home = try share.scratchFolder("home")
            // cadaver takes the credentials from ~/.netrc, which must be private.
            try "machine 127.0.0.1 login \(DAVShare.user) password \(DAVShare.password)\n"
                .write(toFile: home + "/.netrc", atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: home + "/.netrc")
            let first = "hello from cadaver\n", second = "second version, written under a lock\n"
            try first.write(toFile: home + "/first.txt", atomically: false, encoding: .utf8)
            try second.write(toFile: home + "/second.txt", atomically: false, encoding: .utf8)
            let folder = share.root + "/Cadaver Docs"
            let session = CadaverSession(
                process: try CommandProcess(
                    [share.dav], executable: ExternalTool.cadaver.path, environment: ["HOME": home], input: .pipe))

            await session.run("mkcol \"Cadaver Docs\"", expecting: "Creating `Cadaver Docs': succeeded.")
            #expect(isDirectory(folder))
            // cd prints nothing: pwd says where cadaver is.
            session.process.writeInput("cd \"Cadaver Docs\"\n")
            await session.run("pwd", expecting: "/dav/Cadaver%20Docs/")
            await session.run("put \(home)/first.txt hello.txt", expecting: "succeeded.")
            #expect(contents(folder + "/hello.txt") == Data(first.utf8))
            await session.run("get hello.txt \(home)/fetched.txt", expecting: "succeeded.")
            #expect(contents(home + "/fetched.txt") == Data(first.utf8))
            await session.run("copy hello.txt \"copy of hello.txt\"", expecting: "succeeded.")
            #expect(contents(folder + "/copy of hello.txt") == Data(first.utf8))
            await session.run("move \"copy of hello.txt\" renamed.txt", expecting: "succeeded.")
            #expect(contents(folder + "/renamed.txt") == Data(first.utf8))
            #expect(!FileManager.default.fileExists(atPath: folder + "/copy of hello.txt"))
            await session.run("propset hello.txt color blue", expecting: "Setting property on `hello.txt': succeeded.")
            await session.run("propget hello.txt color", expecting: "Value of color is: blue")

            // While cadaver holds the lock, another client cannot write; cadaver can.
            await session.run("lock hello.txt", expecting: "Locking `hello.txt': succeeded.")
            let refused = try await curl([
                "-u", DAVShare.credentials, "-X", "PUT", "--data-binary", "not allowed",
                share.dav + "Cadaver%20Docs/hello.txt",
            ])
            #expect(refused.0 == 423, "a PUT without the lock token: \(refused)")
            await session.run("put \(home)/second.txt hello.txt", expecting: "succeeded.")
            #expect(contents(folder + "/hello.txt") == Data(second.utf8))
            await session.run("propget hello.txt color", expecting: "Value of color is: blue")
            await session.run("discover hello.txt", expecting: "Scope: exclusive  Type: write")
            await session.run("unlock hello.txt", expecting: "Unlocking `hello.txt': succeeded.")
            await session.run("discover hello.txt", expecting: "no locks found.")

            await session.run("delete renamed.txt", expecting: "Deleting `renamed.txt': succeeded.")
            #expect(!FileManager.default.fileExists(atPath: folder + "/renamed.txt"))
            let listing = await session.run("ls", expecting: "Listing collection `/dav/Cadaver Docs/': succeeded.")
            let helloRow = listing.first { $0.contains("hello.txt") }
            #expect(helloRow?.contains(" \(second.utf8.count) ") == true, "ls: \(listing)")
            #expect(
                !listing.contains { $0.contains("renamed.txt") || $0.contains("copy of hello.txt") }, "ls: \(listing)")

            session.process.writeInput("quit\n")
            session.process.closeInput()
            #expect(await session.process.exitStatus() == 0)
            let failures = session.process.lines.filter { $0.contains("failed") }
            #expect(failures.isEmpty, "cadaver said:\n\(session.process.lines.joined(separator: "\n"))")
            try await share.stop()
        }
    }

    @Test(
        "rclone: copy in a tree of 200 files, check, copy back byte for byte, lsjson sizes; one added event from dav per file"
    )
    func rclone() async throws {
        try ExternalTool.rclone.require()
        try await MachineSettings.shared {
            let share = try await DAVShare()
            let source = try share.scratchFolder("source")
            let back = try share.scratchFolder("back")
            let home = try share.scratchFolder("rclone-home")
            let tree = try RcloneTree.make(at: source)
            #expect(tree.count > 200 && tree.values.contains(0) && tree.values.contains { $0 > 3 << 20 })

            try writeFile(Data(), to: home + "/rclone.conf")
            let obscure = try CommandProcess(
                ["obscure", DAVShare.password], executable: ExternalTool.rclone.path, input: .text(""))
            #expect(await obscure.exitStatus() == 0)
            let obscured = try #require(obscure.lines.first, "rclone obscure: \(obscure.errorOutput)")
            let environment = [
                "HOME": home, "RCLONE_CONFIG": home + "/rclone.conf",
                "RCLONE_CONFIG_SHARE_TYPE": "webdav", "RCLONE_CONFIG_SHARE_URL": share.dav,
                "RCLONE_CONFIG_SHARE_VENDOR": "other", "RCLONE_CONFIG_SHARE_USER": DAVShare.user,
                "RCLONE_CONFIG_SHARE_PASS": obscured,
            ]
            // No retries: a failed request is a failure, not a second upload.
            func runRclone(_ arguments: [String]) async throws -> CommandProcess {
                let run = try CommandProcess(
                    arguments + ["--retries", "1", "--low-level-retries", "1"], executable: ExternalTool.rclone.path,
                    environment: environment, input: .text(""))
                let status = await run.exitStatus(timeout: .seconds(300))
                #expect(
                    status == 0, "rclone \(arguments.joined(separator: " ")) exited with \(status):\n\(run.errorOutput)"
                )
                return run
            }

            _ = try await runRclone(["copy", source, "share:rc"])
            let check = try await runRclone(["check", source, "share:rc", "--download"])
            #expect(
                check.errorOutput.contains("0 differences found")
                    && check.errorOutput.contains("\(tree.count) matching files"),
                "rclone check:\n\(check.errorOutput)")
            let list = try await runRclone(["lsjson", "-R", "--files-only", "share:rc"])
            let entries =
                try JSONSerialization.jsonObject(with: Data(list.lines.joined(separator: "\n").utf8))
                as? [[String: Any]] ?? []
            var listed: [String: Int] = [:]
            for entry in entries {
                if let path = entry["Path"] as? String, let size = entry["Size"] as? Int { listed[path] = size }
            }
            #expect(listed == tree, "lsjson differs from the source: \(listed.count) entries for \(tree.count) files")
            _ = try await runRclone(["copy", "share:rc", back])

            var differences: [String] = []
            let copiedBack = try regularFiles(under: back)
            if copiedBack != Set(tree.keys) {
                differences.append("copied back: \(copiedBack.symmetricDifference(tree.keys).sorted())")
            }
            for path in tree.keys.sorted() {
                let original = contents(source + "/" + path)
                if contents(share.root + "/rc/" + path) != original { differences.append("on the share: \(path)") }
                if contents(back + "/" + path) != original { differences.append("copied back: \(path)") }
            }
            #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(20))")

            // The event stream: one `added` per file, made through WebDAV, nothing else.
            let arrived = await waitFor(timeout: .seconds(60)) {
                let added = Set(share.events.filter { $0.type == "added" }.compactMap(\.path))
                return tree.keys.allSatisfy { added.contains("rc/" + $0) }
            }
            #expect(arrived, "an added event for every file")
            try await share.caughtUp()
            let events = share.events
            var wrong: [String] = []
            for path in tree.keys.sorted() {
                let about = events.filter { $0.path == "rc/" + path }
                let added = about.filter { $0.type == "added" }
                if added.count != 1 || added.first?.face != "dav" || about.count != 1 {
                    wrong.append(about.isEmpty ? "no event for rc/\(path)" : about.map(\.line).joined(separator: "\n"))
                }
            }
            #expect(
                wrong.isEmpty,
                "\(wrong.count) files without exactly one added event from dav:\n\(wrong.prefix(10).joined(separator: "\n"))"
            )
            try await share.stop()
        }
    }

    @Test(
        "davfs2: files written through a mount (rename and delete too) land on disk; a file on disk reads back and takes an append"
    )
    func davfs2() async throws {
        try ExternalTool.mountDavfs.require()
        if let reason = DavfsMount.unavailableReason {
            try Test.cancel("skipped: mount -t davfs cannot work on this machine: \(reason)")
        }
        try await MachineSettings.shared {
            let share = try await DAVShare()
            let work = try share.scratchFolder("davfs")
            let before = "made on disk before the mount\n", after = "and appended through it\n"
            try before.write(toFile: share.root + "/Before Mount.txt", atomically: false, encoding: .utf8)
            let note = Data("written through davfs2\n".utf8)
            let blob = randomBytes(2 << 20)
            let unicode = Data("ünïcödé\n".utf8)
            let draft = Data("a draft, renamed once closed\n".utf8)
            let unicodeName = "Ünïcödé #1 %41 +x.txt"

            let mount = try await DavfsMount(
                url: share.dav, user: DAVShare.user, password: DAVShare.password, work: work)
            try await mount.whileMounted {
                let folder = mount.point + "/Written"
                #expect(mkdir(folder, 0o755) == 0, "mkdir through the mount: \(String(cString: strerror(errno)))")
                try writeFile(folder + "/note.txt", note)
                try writeFile(folder + "/blob.bin", blob)
                try writeFile(folder + "/" + unicodeName, unicode)
                try writeFile(folder + "/draft.txt", draft)
                #expect(
                    rename(folder + "/draft.txt", folder + "/final.txt") == 0,
                    "rename: \(String(cString: strerror(errno)))")
                try writeFile(folder + "/scratch.txt", Data("short-lived\n".utf8))
                #expect(unlink(folder + "/scratch.txt") == 0, "unlink: \(String(cString: strerror(errno)))")
                #expect(contents(mount.point + "/Before Mount.txt") == Data(before.utf8))
                let appended = open(mount.point + "/Before Mount.txt", O_WRONLY | O_APPEND)
                #expect(
                    appended >= 0 && write(appended, after, after.utf8.count) == after.utf8.count
                        && close(appended) == 0,
                    "appending through the mount: \(String(cString: strerror(errno)))")
                let landed = await waitFor(timeout: .seconds(60)) {
                    contents(share.root + "/Written/note.txt") == note
                        && contents(share.root + "/Written/blob.bin") == blob
                        && contents(share.root + "/Written/" + unicodeName) == unicode
                        && contents(share.root + "/Written/final.txt") == draft
                        && contents(share.root + "/Before Mount.txt") == Data((before + after).utf8)
                }
                #expect(landed, "the files reach the share while mounted")
            }
            // Unmounted: whatever davfs2 still held is on the server now.
            let written = share.root + "/Written"
            #expect(contents(written + "/note.txt") == note)
            #expect(contents(written + "/blob.bin") == blob)
            #expect(contents(written + "/" + unicodeName) == unicode)
            #expect(contents(written + "/final.txt") == draft)
            #expect(!FileManager.default.fileExists(atPath: written + "/draft.txt"))
            #expect(!FileManager.default.fileExists(atPath: written + "/scratch.txt"))
            #expect(contents(share.root + "/Before Mount.txt") == Data((before + after).utf8))
            try await share.caughtUp()
            for name in ["note.txt", "blob.bin", unicodeName] {
                let about = share.events.filter { $0.path == "Written/" + name }
                #expect(
                    about.count == 1 && about.first?.type == "added" && about.first?.face == "dav",
                    "one added event from dav: \(about.map(\.line))")
            }
            try await share.stop()
        }
    }

    @Test("Finder: PUT of 0 bytes, LOCK, PUT with the token, UNLOCK: the content on disk, one added event")
    func finderSequence() async throws {
        try await MachineSettings.shared {
            let share = try await DAVShare()
            let name = "Finder Note.txt", url = "Finder%20Note.txt"
            let content = "what Finder copied\n"
            let clock = ContinuousClock()
            // Started before the empty PUT is sent, so the time to the LOCK's
            // answer bounds the server's from one to the other from above
            // (after the PUT's answer, curl ending on a loaded machine once
            // took more than the server's whole grace).
            let emptyPut = clock.now
            let created = try await share.request("PUT", url, headers: ["Content-Type: text/plain"], body: "")
            #expect(created.status == 201, "empty PUT: \(created.status) \(created.body)")
            let lock = try await share.request("LOCK", url, headers: DAVShare.lockHeaders, body: DAVShare.lockInfo)
            // The server holds an empty file back for 2 seconds, waiting for its lock.
            let lockDelay = clock.now - emptyPut
            #expect(lock.status == 200 || lock.status == 201, "LOCK: \(lock.status) \(lock.body)")
            let token = try #require(lock.header("Lock-Token"), "LOCK answers a Lock-Token").trimmingCharacters(
                in: CharacterSet(charactersIn: "<> "))
            let other = try await share.request(
                "PUT", url, headers: ["Content-Type: text/plain"], body: "from someone else")
            #expect(other.status == 423, "a PUT without the token: \(other.status) \(other.body)")
            // Finder sends the content chunked, with its length in X-Expected-Entity-Length.
            let put = try await share.request(
                "PUT", url,
                headers: [
                    "Content-Type: text/plain", "Transfer-Encoding: chunked",
                    "X-Expected-Entity-Length: \(content.utf8.count)",
                    "If: (<\(token)>)",
                ],
                body: content)
            #expect(put.status == 201 || put.status == 204, "PUT with the token: \(put.status) \(put.body)")
            let unlock = try await share.request("UNLOCK", url, headers: ["Lock-Token: <\(token)>"])
            #expect(unlock.status == 204, "UNLOCK: \(unlock.status) \(unlock.body)")
            #expect(contents(share.root + "/" + name) == Data(content.utf8))
            try await share.caughtUp()
            let note = "the LOCK came \(lockDelay) after the empty PUT"
            // lockDelay bounds from above the time the server saw between the
            // empty PUT and the LOCK: under its 2 s grace, the LOCK surely
            // came in time, and one added event is the only right answer.
            if lockDelay < .seconds(2) {
                share.expectOneAddedEvent(name, size: content.utf8.count, note: note)
            } else {
                // A loaded machine: the LOCK may have reached the server after
                // the grace, and the empty file was put in place. Then: added
                // empty, then modified.
                let about = share.events.filter { $0.path == name }
                let lines = about.map(\.line).joined(separator: "\n") + "\n(\(note))"
                #expect(about.filter { $0.type == "added" }.count == 1, "one added event:\n\(lines)")
                #expect(about.last?.size == content.utf8.count, "the final size last:\n\(lines)")
                #expect(
                    about.count == 1 || about.first?.size == 0, "a later event only after an empty file:\n\(lines)")
            }
            try await share.stop()
        }
    }

    @Test(
        "Windows: LOCK a new name (201), PUT and PROPPATCH Win32 properties with the token, UNLOCK: one file, one added event, the properties kept"
    )
    func windowsSequence() async throws {
        try await MachineSettings.shared {
            let share = try await DAVShare()
            // Text, under a name that says so: text named .docx would be refused as a name that lies.
            let name = "Windows Report #1.txt", url = "Windows%20Report%20%231.txt"
            let content = String(repeating: "what Windows Explorer copied\n", count: 1000)
            let lock = try await share.request("LOCK", url, headers: DAVShare.lockHeaders, body: DAVShare.lockInfo)
            #expect(lock.status == 201, "LOCK on a new name: \(lock.status) \(lock.body)")
            let token = try #require(lock.header("Lock-Token"), "LOCK answers a Lock-Token").trimmingCharacters(
                in: CharacterSet(charactersIn: "<> "))
            #expect(
                !FileManager.default.fileExists(atPath: share.root + "/" + name), "the locked empty file is held back")
            let ifHeader = "If: (<\(token)>)"
            // The redirector sets the times once it has made the file, and again after writing it.
            let early = try await share.request(
                "PROPPATCH", url, headers: [ifHeader, "Content-Type: text/xml; charset=\"utf-8\""],
                body: Self.win32PropertyUpdate(["Win32CreationTime": Self.win32Properties["Win32CreationTime"]!]))
            #expect(
                early.status == 207 && !Self.hasFailedPropstat(early.body),
                "PROPPATCH before the content: \(early.status) \(early.body)")
            let put = try await share.request(
                "PUT", url, headers: ["Content-Type: application/octet-stream", ifHeader], body: content)
            #expect(put.status == 201 || put.status == 204, "PUT with the token: \(put.status) \(put.body)")
            let patch = try await share.request(
                "PROPPATCH", url, headers: [ifHeader, "Content-Type: text/xml; charset=\"utf-8\""],
                body: Self.win32PropertyUpdate(Self.win32Properties.filter { $0.key != "Win32CreationTime" }))
            #expect(
                patch.status == 207 && !Self.hasFailedPropstat(patch.body), "PROPPATCH: \(patch.status) \(patch.body)")
            let unlock = try await share.request("UNLOCK", url, headers: ["Lock-Token: <\(token)>"])
            #expect(unlock.status == 204, "UNLOCK: \(unlock.status) \(unlock.body)")
            #expect(contents(share.root + "/" + name) == Data(content.utf8))

            let propfind = try await share.request(
                "PROPFIND", url, headers: ["Depth: 0", "Content-Type: text/xml; charset=\"utf-8\""],
                body: """
                    <?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:prop>\
                    <Z:Win32CreationTime/><Z:Win32LastAccessTime/><Z:Win32LastModifiedTime/><Z:Win32FileAttributes/>\
                    <D:getcontentlength/></D:prop></D:propfind>
                    """)
            #expect(
                propfind.status == 207 && propfind.body.contains("urn:schemas-microsoft-com:"),
                "PROPFIND: \(propfind.status) \(propfind.body)")
            for (property, value) in Self.win32Properties {
                let element = try Regex(
                    "<([A-Za-z0-9_]+:)?\(property)( [^>]*)?>\(value)</([A-Za-z0-9_]+:)?\(property)>")
                #expect(propfind.body.contains(element), "\(property) = \(value) in \(propfind.body)")
            }
            #expect(propfind.body.contains(">\(content.utf8.count)</"), "getcontentlength: \(propfind.body)")
            try await share.caughtUp()
            share.expectOneAddedEvent(name, size: content.utf8.count)
            try await share.stop()
        }
    }

    static let win32Properties = [
        "Win32CreationTime": "Mon, 02 Mar 2026 09:15:00 GMT",
        "Win32LastAccessTime": "Tue, 03 Mar 2026 10:16:01 GMT",
        "Win32LastModifiedTime": "Wed, 04 Mar 2026 11:17:02 GMT",
        "Win32FileAttributes": "00000020",
    ]

    static func win32PropertyUpdate(_ properties: [String: String]) -> String {
        let set = properties.sorted { $0.key < $1.key }.map { "<Z:\($0.key)>\($0.value)</Z:\($0.key)>" }.joined()
        return """
            <?xml version="1.0" encoding="utf-8" ?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:">\
            <D:set><D:prop>\(set)</D:prop></D:set></D:propertyupdate>
            """
    }

    /// Whether a multistatus reports a status other than 200 for some property.
    static func hasFailedPropstat(_ body: String) -> Bool {
        body.components(separatedBy: "<D:status>").dropFirst().contains { !$0.hasPrefix("HTTP/1.1 200") }
    }
}

// MARK: - The server

/// `fileshare serve` on a free port with known credentials, in a temporary
/// folder (the share is its `share` subfolder), and the change events it
/// prints on stderr.
private struct DAVShare {
    static let user = "dav-tester"
    static let password = "Pa55-w0rd"
    static var credentials: String { user + ":" + password }
    static let lockHeaders = ["Content-Type: text/xml; charset=\"utf-8\"", "Depth: 0", "Timeout: Second-600"]
    static let lockInfo = """
        <?xml version="1.0" encoding="utf-8" ?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype><D:owner><D:href>tester</D:href></D:owner></D:lockinfo>
        """

    let folder: TemporaryFolder
    let root: String
    let serve: CommandProcess
    /// The page's address, e.g. `http://127.0.0.1:8080/`.
    let url: String
    var dav: String { url + "dav/" }

    /// Starts the server; the credentials go in as `--user`/`--password`, or
    /// as `FILESHARE_USER`/`FILESHARE_PASSWORD` when `credentialsFromEnvironment`.
    /// - Parameter extra: More arguments for `serve` (`--database URL`).
    init(credentialsFromEnvironment: Bool = false, extra: [String] = []) async throws {
        folder = try TemporaryFolder()
        root = folder.path + "/share"
        if credentialsFromEnvironment {
            serve = try CommandProcess(
                ["serve", root, "--port", "0", "--print-changes"] + extra,
                environment: ["FILESHARE_USER": Self.user, "FILESHARE_PASSWORD": Self.password])
        } else {
            serve = try CommandProcess(
                ["serve", root, "--port", "0", "--print-changes", "--user", Self.user, "--password", Self.password]
                    + extra)
        }
        let started = await serve.waitForLine { $0.hasPrefix("Serving ") }
        try #require(started, "fileshare serve did not start: \(serve.errorOutput)")
        url = String(serve.lines.first?.split(separator: " ").last ?? "")
        #expect(!serve.errorOutput.contains("password '"), "the given credentials are used")
    }

    /// A new folder beside the share (not in it).
    func scratchFolder(_ name: String) throws -> String {
        let path = folder.path + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The change events printed so far.
    var events: [ChangeEvent] {
        serve.errorOutput.split(separator: "\n").compactMap { ChangeEvent(line: String($0)) }
    }

    /// Waits until the observer has reported everything done before this
    /// call: a folder made on disk now is reported after all of it.
    func caughtUp() async throws {
        let name = "caught-up-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: false)
        let seen = await waitFor(timeout: .seconds(30)) { events.contains { $0.type == "added" && $0.path == name } }
        try #require(seen, "the observer reports a folder made on disk")
    }

    /// One request to `/dav/` + `path` (percent-encoded) with curl.
    func request(_ method: String, _ path: String, headers: [String] = [], body: String? = nil) async throws
        -> CurlResponse
    {
        var arguments = ["-u", Self.credentials, "-X", method]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        return try await curlResponse(arguments + [dav + path])
    }

    /// Exactly one `added` event from the WebDAV face for `path` (and
    /// possibly its `finished`), with the file's final size; nothing else.
    func expectOneAddedEvent(
        _ path: String, size: Int, note: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let about = events.filter { $0.path == path }
        let added = about.filter { $0.type == "added" }
        let finished = about.filter { $0.type == "finished" }
        let others = about.filter { $0.type != "added" && $0.type != "finished" }
        let lines = about.map(\.line).joined(separator: "\n") + (note.isEmpty ? "" : "\n(\(note))")
        #expect(
            added.count == 1 && added.first?.face == "dav", "one added event from dav:\n\(lines)",
            sourceLocation: sourceLocation)
        #expect(
            finished.count <= 1 && others.isEmpty, "no modified or other event:\n\(lines)",
            sourceLocation: sourceLocation)
        #expect(
            (finished.last ?? added.last)?.size == size, "the final size, \(size):\n\(lines)",
            sourceLocation: sourceLocation)
    }

    /// Stops the server: SIGINT, exit 0.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        serve.send(SIGINT)
        let status = await serve.exitStatus()
        #expect(
            status == 0, "fileshare serve exited with \(status): \(serve.errorOutput.suffix(2000))",
            sourceLocation: sourceLocation)
    }
}

/// One JSON line of the server's change events.
private struct ChangeEvent {
    var type: String
    var path: String?
    var size: Int?
    /// The face of its origin (`api`, `dav`), when the server made the change.
    var face: String?
    var line: String

    init?(line: String) {
        guard line.hasPrefix("{"),
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let type = object["type"] as? String
        else { return nil }
        self.type = type
        self.line = line
        path = object["path"] as? String
        size = object["size"] as? Int
        face = (object["origin"] as? [String: Any])?["face"] as? String
    }
}

// MARK: - Clients

/// cadaver driven one command at a time through its stdin.
private struct CadaverSession {
    let process: CommandProcess

    /// Sends `command` and waits for a line printed after it that contains
    /// `expected`; returns the lines printed since.
    @discardableResult
    func run(_ command: String, expecting expected: String, sourceLocation: SourceLocation = #_sourceLocation) async
        -> [String]
    {
        let start = process.lines.count
        process.writeInput(command + "\n")
        let found = await waitFor(timeout: .seconds(30)) {
            process.lines.dropFirst(start).contains { $0.contains(expected) }
        }
        let printed = Array(process.lines.dropFirst(start))
        #expect(
            found, "cadaver: \(command)\n\(printed.joined(separator: "\n"))\n\(process.errorOutput)",
            sourceLocation: sourceLocation)
        return printed
    }
}

/// The tree rclone copies in and out.
private enum RcloneTree {
    static let folders = [
        "", "Alpha", "Alpha/Beta", "Alpha/Beta/Gamma deep", "Ünïcödé Földer", "Specials #1 %41 +x", "Alpha/日本語",
    ]

    /// Makes 200 files (and an empty one) in nested folders, of sizes from 0
    /// to 4 MiB, with names that have spaces, '#', '%', '+' and non-ASCII
    /// letters; returns their relative paths and sizes.
    static func make(at root: String) throws -> [String: Int] {
        let pool = randomBytes((4 << 20) + 4096)
        var tree: [String: Int] = ["Alpha/empty file.txt": 0]
        for index in 0..<200 {
            let folder = folders[index % folders.count]
            let name =
                switch index % 6 {
                case 0: "file \(index).txt"
                case 1: "report#\(index).bin"
                case 2: "100%25 \(index).dat"
                case 3: "a+b=c \(index).txt"
                case 4: "naïve café \(index).txt"
                default: "Ελληνικά–\(index) ✓.txt"
                }
            let size =
                if index % 50 == 7 { (index / 50 + 1) << 20 + index } else if index % 3 == 0 { index * 7919 % 512 } else
                { index * 104_729 % 300_000 }
            tree[folder.isEmpty ? name : folder + "/" + name] = size
        }
        for (path, size) in tree {
            let directory = (root + "/" + path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let offset = Int(UInt(bitPattern: path.hashValue) % UInt(pool.count - size + 1))
            try writeFile(root + "/" + path, pool[offset..<offset + size])
        }
        return tree
    }
}

/// A davfs2 mount (`mount -t davfs`), with its own configuration, secrets and cache.
private struct DavfsMount {
    let point: String
    /// `mount`, which Foundation sees exit only once the daemon is gone.
    let mount: CommandProcess

    /// Why `mount -t davfs` cannot work here, or nil when it can: it needs
    /// root with CAP_SYS_ADMIN, and FUSE (davfs2 1.6 dropped the coda module).
    static var unavailableReason: String? {
        if getuid() != 0 { return "mounting needs root (uid \(getuid()))" }
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let effective =
            status.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
            .flatMap { UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
        if effective & (1 << 21) == 0 { return "no CAP_SYS_ADMIN (a container without it)" }
        let fuse = open("/dev/fuse", O_RDWR)
        guard fuse >= 0 else { return "/dev/fuse cannot be opened: \(String(cString: strerror(errno)))" }
        close(fuse)
        return nil
    }

    /// Mounts `url` at `work/mount`; davfs2's files go in `work` too.
    init(url: String, user: String, password: String, work: String) async throws {
        point = work + "/mount"
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        // mount.davfs runs as the davfs2 user: it must reach its cache, which
        // it wants owned by root, in the davfs2 group, writable by the group.
        let cache = work + "/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: false)
        if let group = getgrnam("davfs2") { chown(cache, 0, group.pointee.gr_gid) }
        chmod(cache, 0o775)
        chmod(work, 0o711)
        chmod((work as NSString).deletingLastPathComponent, 0o711)
        try "\(url) \(user) \(password)\n".write(toFile: work + "/secrets", atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: work + "/secrets")
        // Upload a file as soon as it is closed (not 10 seconds later).
        try "secrets \(work)/secrets\ncache_dir \(cache)\ndelay_upload 0\n"
            .write(toFile: work + "/davfs2.conf", atomically: false, encoding: .utf8)
        mount = try CommandProcess(
            ["-t", "davfs", url, point, "-o", "conf=\(work)/davfs2.conf"],
            executable: "/usr/bin/mount", input: .text(""))
        // mount.davfs stays behind as a daemon that keeps the descriptor by which
        // Foundation learns that `mount` exited: wait for the mount itself.
        let point = self.point, mount = self.mount
        let mounted = await waitFor(timeout: .seconds(60)) { Self.isMounted(point) || !mount.isRunning }
        if !mounted || !Self.isMounted(point) {
            let status = await mount.exitStatus(timeout: .seconds(1))
            throw MountFailure(
                description: "mount -t davfs did not mount \(url) at \(point) (status \(status), -1: still running): "
                    + mount.lines.joined(separator: "\n") + mount.errorOutput)
        }
    }

    struct MountFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func isMounted(_ point: String) -> Bool {
        // Read to its end: a /proc file says it is empty, and a read sized by that stops short.
        let mounts =
            FileHandle(forReadingAtPath: "/proc/mounts").map {
                String(decoding: $0.readDataToEndOfFile(), as: UTF8.self)
            } ?? ""
        return mounts.split(separator: "\n").contains {
            $0.split(separator: " ").dropFirst().first.map(String.init) == point
        }
    }

    /// Runs `body`, then unmounts, also when `body` throws.
    func whileMounted(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            await unmount()
            throw error
        }
        await unmount()
    }

    /// Unmounts (umount.davfs waits for the uploads still due; lazily if
    /// that fails); then `mount`, whose daemon is gone, must have exited 0.
    func unmount(sourceLocation: SourceLocation = #_sourceLocation) async {
        if Self.isMounted(point) {
            let umount = try? CommandProcess([point], executable: "/usr/bin/umount", input: .text(""))
            let status = await umount?.exitStatus(timeout: .seconds(120)) ?? -1
            #expect(
                status == 0, "umount exited with \(status): \(umount?.errorOutput ?? "")",
                sourceLocation: sourceLocation)
            if Self.isMounted(point) {
                let lazy = try? CommandProcess(["-l", point], executable: "/usr/bin/umount", input: .text(""))
                _ = await lazy?.exitStatus(timeout: .seconds(60))
            }
        }
        let status = await mount.exitStatus(timeout: .seconds(30))
        #expect(
            status == 0, "mount -t davfs exited with \(status): \(mount.errorOutput)", sourceLocation: sourceLocation)
    }
}

// MARK: - Files

private func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

private func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
}

/// Writes `data` to a new file in place with open/write/close (no temporary
/// name: through davfs2 every name is a request, and a hidden one is refused).
private func writeFile(_ path: String, _ data: some DataProtocol) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    var failure: Int32 = 0
    var written = 0
    let bytes = Array(data)
    while written < bytes.count && failure == 0 {
        let result = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if result < 0 { failure = errno } else { written += result }
    }
    if close(fd) != 0 && failure == 0 { failure = errno }
    if failure != 0 { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
}

private func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    let words = (0..<(count + 7) / 8).map { _ in generator.next() as UInt64 }
    return words.withUnsafeBytes { Data($0.prefix(count)) }
}

/// The relative paths of the regular files under `root`.
private func regularFiles(under root: String) throws -> Set<String> {
    var files: Set<String> = []
    for path in try FileManager.default.subpathsOfDirectory(atPath: root) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue
        {
            files.insert(path)
        }
    }
    return files
}
