import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `fileshare serve`'s WebDAV face against hostile requests from accounts
/// of a users file (the security review of issue #31): an admin, alice
/// (write on `Alice` only), a reader (read everywhere) and a drop box user.
@Suite("WebDAV against hostile clients", .timeLimit(.minutes(10)))
struct WebDAVHostileTests {
    static let password = "Pa55-w0rd-long"

    /// A share with four accounts, served.
    struct Share {
        let folder: TemporaryFolder
        let root: String
        let users: String
        var serve: CommandProcess
        var url: String
        var dav: String { url + "dav/" }

        /// Makes the accounts and the folders `Alice`, `Other`, `Drop`;
        /// `prepare` puts files in the share before the server starts.
        init(prepare: (String) throws -> Void = { _ in }) async throws {
            folder = try TemporaryFolder()
            root = folder.path + "/share"
            users = folder.path + "/users.json"
            for name in ["Alice", "Other", "Drop"] {
                try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
            }
            try prepare(root)
            for arguments in [
                ["add", "admin", "--admin"], ["add", "alice"], ["add", "reader"], ["add", "dropper"],
                ["grant", "alice", "Alice", "write"], ["grant", "reader", "/", "read"],
                ["grant", "dropper", "Drop", "upload"],
            ] {
                let run = try await UsersCommandTests.run(
                    arguments, users: users, input: WebDAVHostileTests.password + "\n")
                try #require(run.status == 0, "\(arguments): \(run)")
            }
            (serve, url) = try await Self.start(root: root, users: users)
        }

        static func start(root: String, users: String) async throws -> (CommandProcess, String) {
            let serve = try CommandProcess(["serve", root, "--port", "0", "--users", users])
            let started = await serve.waitForLine { $0.hasPrefix("Serving ") }
            try #require(started, "fileshare serve did not start: \(serve.errorOutput)")
            return (serve, String(serve.lines.first?.split(separator: " ").last ?? ""))
        }

        /// Kills the server (no chance to tidy up), calls `meanwhile`, and
        /// starts another on the same folder.
        mutating func killAndRestart(meanwhile: () throws -> Void = {}) async throws {
            serve.send(SIGKILL)
            _ = await serve.exitStatus()
            try meanwhile()
            (serve, url) = try await Self.start(root: root, users: users)
        }

        /// One request as `user` to `/dav/` + `path`.
        func request(
            _ user: String, _ method: String, _ path: String, headers: [String] = [], body: String? = nil,
            bodyFile: String? = nil
        ) async throws -> CurlResponse {
            var arguments = ["-u", user + ":" + WebDAVHostileTests.password, "-X", method]
            for header in headers { arguments += ["-H", header] }
            if let body { arguments += ["--data-binary", body] }
            if let bodyFile { arguments += ["--data-binary", "@" + bodyFile] }
            return try await curlResponse(arguments + [dav + path])
        }

        /// Many requests as `user` on one connection (one curl): the status of each.
        func statuses(
            _ user: String, _ requests: [(method: String, path: String, headers: [String], bodyFile: String?)]
        )
            async throws -> [Int]
        {
            var config = ""
            func quoted(_ text: String) -> String {
                "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }
            for (index, request) in requests.enumerated() {
                if index > 0 { config += "next\n" }
                config += "url = \(quoted(dav + request.path))\nrequest = \(quoted(request.method))\n"
                config += "user = \(quoted(user + ":" + WebDAVHostileTests.password))\n"
                for header in request.headers { config += "header = \(quoted(header))\n" }
                if let bodyFile = request.bodyFile { config += "data-binary = \(quoted("@" + bodyFile))\n" }
                config += "output = \"/dev/null\"\nwrite-out = \"%{http_code}\\n\"\nsilent\n"
            }
            let file = folder.path + "/curl-\(UUID().uuidString).conf"
            try config.write(toFile: file, atomically: false, encoding: .utf8)
            let run = try CommandProcess(
                ["--max-time", "120", "-K", file], executable: "/usr/bin/curl", input: .text(""))
            _ = await run.exitStatus(timeout: .seconds(180))
            return run.lines.compactMap { Int($0) }
        }
    }

    static let lockInfo = """
        <?xml version="1.0" encoding="utf-8" ?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype><D:owner><D:href>tester</D:href></D:owner></D:lockinfo>
        """
    static let lockHeaders = ["Content-Type: text/xml", "Depth: 0", "Timeout: Second-3600"]

    /// Whether `body` is a well-formed XML document (libxml2 says so).
    static func isWellFormedXML(_ body: String) -> Bool {
        let parser = XMLParser(data: Data(body.utf8))
        return parser.parse()
    }

    // MARK: 1. XML bodies

    /// A PROPFIND body of about `size` bytes whose root element carries
    /// many attributes, or many namespace declarations.
    static func wideBody(size: Int, namespaces: Bool) -> String {
        var body = "<?xml version=\"1.0\"?><D:propfind xmlns:D=\"DAV:\""
        var index = 0
        while body.utf8.count < size {
            body += namespaces ? " xmlns:p\(index)=\"urn:\(index)\"" : " a\(index)=\"\(index)\""
            index += 1
        }
        return body + "><D:prop><D:displayname/></D:prop></D:propfind>"
    }

    @Test(
        "500 KiB PROPFIND bodies of attributes or namespace declarations are a 400 naming the limit; another user's listing is answered meanwhile"
    )
    func wideXMLBodies() async throws {
        try await MachineSettings.shared {
            let share = try await Share { root in
                for index in 0..<50 {
                    try "x".write(toFile: root + "/Alice/f\(index).txt", atomically: false, encoding: .utf8)
                }
            }
            defer { share.serve.send(SIGKILL) }
            var files: [String] = []
            for namespaces in [false, true] {
                let file = share.folder.path + "/wide-\(namespaces).xml"
                try Self.wideBody(size: 500 * 1024, namespaces: namespaces).write(
                    toFile: file, atomically: false, encoding: .utf8)
                files.append(file)
            }
            // The reader sends both at once, twice; alice lists her folder meanwhile.
            async let hostile: [CurlResponse] = withThrowingTaskGroup(of: CurlResponse.self) { group in
                for file in files + files {
                    group.addTask {
                        try await share.request(
                            "reader", "PROPFIND", "Alice/", headers: ["Depth: 0", "Content-Type: text/xml"],
                            bodyFile: file)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let listing = try await share.request("alice", "PROPFIND", "Alice/", headers: ["Depth: 1"])
            #expect(listing.status == 207, "\(listing.status) \(listing.body.prefix(300))")
            #expect(listing.body.contains("f49.txt"))
            for response in try await hostile {
                #expect(response.status == 400, "\(response.status) \(response.body.prefix(300))")
                #expect(response.body.contains("more than 100"), "the limit is named: \(response.body.prefix(300))")
            }
            // A body under the limits is still read.
            let small = try await share.request(
                "reader", "PROPFIND", "Alice/", headers: ["Depth: 0"],
                body: "<D:propfind xmlns:D=\"DAV:\" xmlns:a=\"urn:a\" a:x=\"1\"><D:prop><a:y/></D:prop></D:propfind>")
            #expect(small.status == 207, "\(small.status) \(small.body)")
        }
    }

    // MARK: 2. Locks

    @Test(
        "a user holds at most 1,000 locks (507); a LOCK writes what one lock costs; locks survive kill -9 and a torn record"
    )
    func lockCapAndJournal() async throws {
        try await MachineSettings.shared {
            var share = try await Share { root in
                for index in 0...1000 {
                    try "x".write(toFile: root + "/Alice/f\(index).txt", atomically: false, encoding: .utf8)
                }
                for index in 0..<20 {
                    try "x".write(toFile: root + "/Other/o\(index).txt", atomically: false, encoding: .utf8)
                }
            }
            defer { share.serve.send(SIGKILL) }
            let lockInfo = share.folder.path + "/lockinfo.xml"
            try Self.lockInfo.write(toFile: lockInfo, atomically: false, encoding: .utf8)
            let granted = try await share.statuses(
                "alice", (0..<1000).map { ("LOCK", "Alice/f\($0).txt", Self.lockHeaders, lockInfo) })
            #expect(granted.count == 1000 && granted.allSatisfy { $0 == 200 }, "\(Set(granted))")
            let over = try await share.request(
                "alice", "LOCK", "Alice/f1000.txt", headers: Self.lockHeaders, body: Self.lockInfo)
            #expect(over.status == 507, "\(over.status) \(over.body)")
            #expect(over.body.contains("1,000 locks"), "\(over.body)")
            // Other users are not held back by alice's locks.
            let pid = share.serve.processIdentifier
            let before = try Self.bytesWritten(by: pid)
            let others = try await share.statuses(
                "admin", (0..<10).map { ("LOCK", "Other/o\($0).txt", Self.lockHeaders, lockInfo) })
            let after = try Self.bytesWritten(by: pid)
            #expect(others == Array(repeating: 200, count: 10), "\(others)")
            // Ten locks among a thousand: a record each (and an audit line), not the whole table each time
            // (about 250 KiB apiece before). 64 KiB leaves room for the records, the audit and the log.
            print("bytes written for 10 LOCKs beside 1,000 locks: \(after - before)")
            #expect(after - before < 64 * 1024, "\(after - before) bytes written for 10 LOCKs")

            // Killed, with a record torn in the middle of its write: the other locks are all there.
            let journal = share.root + "/.fileshare/dav-locks.json"
            try await share.killAndRestart {
                let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: journal))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("{\"put\":{\"token\":\"opaquelocktoken:torn\",\"ro".utf8))
                try handle.close()
            }
            let blocked = try await share.statuses(
                "alice", [0, 500, 999].map { ("PUT", "Alice/f\($0).txt", [], lockInfo) })
            #expect(blocked == [423, 423, 423], "alice's locks survived: \(blocked)")
            let stillOver = try await share.request(
                "alice", "LOCK", "Alice/f1000.txt", headers: Self.lockHeaders, body: Self.lockInfo)
            #expect(stillOver.status == 507, "the cap holds after a restart: \(stillOver.status)")
            let otherLock = try await share.request("admin", "PUT", "Other/o3.txt", body: "y")
            #expect(otherLock.status == 423, "the admin's lock survived: \(otherLock.status)")
            let next = try await share.request(
                "admin", "LOCK", "Other/o15.txt", headers: Self.lockHeaders, body: Self.lockInfo)
            #expect(next.status == 200, "a lock after the torn record: \(next.status) \(next.body)")
        }
    }

    /// Bytes the process has handed to `write` and its kin so far (`/proc/PID/io`).
    static func bytesWritten(by pid: Int32) throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("wchar:") })
        return try #require(Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)))
    }

    // MARK: 3. Finder's files

    @Test("COPY and MOVE of Finder's ._ files check the destination's rights and tell nothing of what is there")
    func clientMetadataDestinations() async throws {
        try await MachineSettings.shared {
            let share = try await Share()
            defer { share.serve.send(SIGKILL) }
            #expect(try await share.request("admin", "PUT", "Other/._admins", body: "admin's").status == 201)
            #expect(try await share.request("alice", "PUT", "Alice/._mine", body: "alice's").status == 201)
            let destination = share.dav + "Other/._admins"
            for method in ["COPY", "MOVE"] {
                let overwrite = try await share.request(
                    "alice", method, "Alice/._mine", headers: ["Destination: \(destination)", "Overwrite: T"])
                #expect(overwrite.status == 404, "\(method) over the admin's: \(overwrite.status) \(overwrite.body)")
            }
            let kept = try await share.request("admin", "GET", "Other/._admins")
            #expect(kept.status == 200 && kept.body == "admin's", "\(kept.status) \(kept.body)")
            // Whatever a client stored there, a browser is told not to take it for a page.
            #expect(kept.header("X-Content-Type-Options") == "nosniff")
            #expect(try await share.request("alice", "GET", "Alice/._mine").body == "alice's")
            // Taken or free, a destination alice cannot see answers the same.
            var answers: [String: Int] = [:]
            for name in ["._admins", "._nothing"] {
                let response = try await share.request(
                    "alice", "COPY", "Alice/._mine",
                    headers: ["Destination: \(share.dav)Other/\(name)", "Overwrite: F"])
                answers[name] = response.status
            }
            #expect(answers["._admins"] == answers["._nothing"], "\(answers)")
            // The reader sees Other but may not write there; the drop box user may not write Finder's files into it.
            let reader = try await share.request(
                "reader", "COPY", "Other/._admins", headers: ["Destination: \(share.dav)Other/._copy"])
            #expect(reader.status == 403, "\(reader.status) \(reader.body)")
            let dropper = try await share.request(
                "dropper", "COPY", "Other/._admins", headers: ["Destination: \(share.dav)Drop/._copy"])
            // The source's folder is closed to the drop box user: 404, as for any path they may not see.
            #expect(dropper.status == 404, "\(dropper.status) \(dropper.body)")
            // Their drop box is seen (as an empty folder) but takes no Finder files: 403, as for any change there.
            let planted = try await share.request("dropper", "PUT", "Drop/._planted", body: "x")
            #expect(planted.status == 403, "\(planted.status) \(planted.body)")
            // Alice's own folder still works, both ways.
            let own = try await share.request(
                "alice", "COPY", "Alice/._mine", headers: ["Destination: \(share.dav)Alice/._copy"])
            #expect(own.status == 201, "\(own.status) \(own.body)")
        }
    }

    // MARK: 4. Names XML cannot carry

    @Test("names with control characters or bytes that are not UTF-8: every PROPFIND answer is well-formed XML")
    func controlCharacterNames() async throws {
        try await MachineSettings.shared {
            let share = try await Share { root in
                try "x".write(toFile: root + "/Alice/ctl\u{01}.txt", atomically: false, encoding: .utf8)
                try "x".write(toFile: root + "/Alice/tab\there\u{1B}[31m.txt", atomically: false, encoding: .utf8)
                try "x".write(toFile: root + "/Alice/plain.txt", atomically: false, encoding: .utf8)
                // A name that is not UTF-8 (Latin-1 é), made with the bytes themselves.
                var bytes = Array((root + "/Alice/caf").utf8) + [0xE9] + Array(".txt".utf8) + [0]
                let fd = bytes.withUnsafeMutableBufferPointer { buffer in
                    buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                        open($0, O_WRONLY | O_CREAT | O_EXCL, 0o644)
                    }
                }
                #expect(fd >= 0)
                close(fd)
            }
            defer { share.serve.send(SIGKILL) }
            for body in [
                nil, "<D:propfind xmlns:D=\"DAV:\"><D:propname/></D:propfind>",
                "<D:propfind xmlns:D=\"DAV:\"><D:prop><D:displayname/><D:getcontenttype/></D:prop></D:propfind>",
            ] {
                let listing = try await share.request("alice", "PROPFIND", "Alice/", headers: ["Depth: 1"], body: body)
                #expect(listing.status == 207)
                #expect(Self.isWellFormedXML(listing.body), "well-formed: \(listing.body)")
                #expect(listing.body.contains("plain.txt"))
                if body == nil {
                    #expect(
                        listing.body.contains("/dav/Alice/ctl%01.txt"), "the href carries the name: \(listing.body)")
                    #expect(listing.body.contains("<D:displayname>ctl\u{FFFD}.txt</D:displayname>"))
                }
            }
            let alone = try await share.request("alice", "PROPFIND", "Alice/ctl%01.txt", headers: ["Depth: 0"])
            #expect(alone.status == 207 && Self.isWellFormedXML(alone.body), "\(alone.body)")
            #expect(try await share.request("alice", "GET", "Alice/ctl%01.txt").body == "x")
            // A lock's answer and a refusal naming it are XML too.
            let locked = try await share.request(
                "alice", "LOCK", "Alice/ctl%01.txt", headers: Self.lockHeaders, body: Self.lockInfo)
            #expect(locked.status == 200 && Self.isWellFormedXML(locked.body), "\(locked.body)")
            let refused = try await share.request("alice", "PUT", "Alice/ctl%01.txt", body: "y")
            #expect(refused.status == 423 && Self.isWellFormedXML(refused.body), "\(refused.body)")
            // A property value XML cannot carry is refused rather than kept (it would spoil every answer).
            let proppatch = try await share.request(
                "alice", "PROPPATCH", "Alice/plain.txt",
                body:
                    "<D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><x xmlns=\"urn:x\">a&#1;b</x></D:prop></D:set></D:propertyupdate>"
            )
            #expect(proppatch.status == 400, "\(proppatch.status) \(proppatch.body)")
            let after = try await share.request("alice", "PROPFIND", "Alice/plain.txt", headers: ["Depth: 0"])
            #expect(Self.isWellFormedXML(after.body), "\(after.body)")
        }
    }
}
