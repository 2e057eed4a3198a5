import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A share attacked as a hostile user would, through the real binary: the
/// rights hold for a folder operated on whole, for share links, for symbolic
/// links made on disk, for files the server must never serve, against
/// guesses sent at once, and against other sites' pages.
@Suite("Hostile users against fileshare serve")
struct HostileUserTests {
    /// A share with users whose rights leave parts of their folders closed:
    /// bob reads `Team` but not `Team/Secret`; carol writes `Proj` but not
    /// `Proj/Hidden`; alice writes `Alice` only; root is the admin.
    final class Share: Sendable {
        let folder: TemporaryFolder
        let serve: CommandProcess
        let url: String
        var share: String { folder("share") }

        static let password = "a long password"
        static let files = [
            "Team/plan.txt": "plan\n", "Team/Secret/s.txt": "secret\n", "Proj/p.txt": "project\n",
            "Proj/Hidden/h.txt": "hidden\n", "Other/o.txt": "other\n", "Alice/a.txt": "alice\n",
            "Bob/b.txt": "bob\n", "Carol/c.txt": "carol\n",
        ]

        init(extraArguments: [String] = [], prepare: (TemporaryFolder) throws -> Void = { _ in }) async throws {
            folder = try TemporaryFolder()
            for (path, content) in Share.files {
                let full = folder("share/" + path)
                try FileManager.default.createDirectory(
                    atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try content.write(toFile: full, atomically: false, encoding: .utf8)
            }
            let users = folder("users.json")
            let steps: [[String]] = [
                ["add", "root", "--admin"], ["add", "bob"], ["add", "carol"], ["add", "alice"],
                ["grant", "bob", "Bob", "write"], ["grant", "bob", "Team", "read"],
                ["grant", "bob", "Team/Secret", "none"], ["grant", "carol", "Carol", "write"],
                ["grant", "carol", "Proj", "write"], ["grant", "carol", "Proj/Hidden", "none"],
                ["grant", "alice", "Alice", "write"],
            ]
            for arguments in steps {
                let run = try await UsersCommandTests.run(arguments, users: users, input: Share.password + "\n")
                try #require(run.status == 0, "\(arguments): \(run)")
            }
            try prepare(folder)
            serve = try CommandProcess(
                ["serve", folder("share"), "--port", "0", "--users", users] + extraArguments)
            try #require(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            url = String(serve.lines.first?.split(separator: " ").last ?? "")
        }

        /// curl as `user`, with the arguments and then the URL of `path`.
        func curl(_ user: String, _ method: String, _ path: String, _ arguments: [String] = []) async throws
            -> CurlResponse
        {
            try await curlResponse(["-u", "\(user):\(Share.password)", "-X", method] + arguments + [url + path])
        }

        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: folder("share/" + path)) }

        func stop() async {
            serve.send(SIGTERM)
            _ = await serve.exitStatus()
        }
    }

    @Test("a folder holding what the user may not see is not copied, moved or deleted whole, on any face")
    func foldersWithClosedParts() async throws {
        try await MachineSettings.shared {
            let share = try await Share()
            // bob reads Team but not Team/Secret: a copy of Team would carry Secret into his own folder.
            var response = try await share.curl(
                "bob", "COPY", "dav/Team", ["-H", "Destination: \(share.url)dav/Bob/T"])
            #expect(response.status == 403, "\(response.body)")
            #expect(response.body.contains("holds items you may not read"))
            #expect(!share.exists("Bob/T"))
            #expect(try await share.curl("bob", "GET", "api/files/Bob/T/Secret/s.txt").status == 404)
            // What he may read he may copy.
            response = try await share.curl(
                "bob", "COPY", "dav/Team/plan.txt", ["-H", "Destination: \(share.url)dav/Bob/plan.txt"])
            #expect(response.status == 201, "\(response.body)")
            // carol writes Proj but not Proj/Hidden: no move of Proj, by the API or WebDAV, and no delete.
            response = try await share.curl(
                "carol", "POST", "api/move",
                ["-H", "Content-Type: application/json", "-d", #"{"from":"Proj","to":"Carol/P"}"#])
            #expect(response.status == 403, "\(response.body)")
            response = try await share.curl(
                "carol", "MOVE", "dav/Proj", ["-H", "Destination: \(share.url)dav/Carol/P"])
            #expect(response.status == 403, "\(response.body)")
            #expect(try await share.curl("carol", "DELETE", "api/files/Proj").status == 403)
            #expect(try await share.curl("carol", "DELETE", "dav/Proj").status == 403)
            #expect(share.exists("Proj/Hidden/h.txt") && !share.exists("Carol/P"))
            // The parts she may change, she may: one file moved out of Proj.
            response = try await share.curl(
                "carol", "POST", "api/move",
                ["-H", "Content-Type: application/json", "-d", #"{"from":"Proj/p.txt","to":"Carol/p.txt"}"#])
            #expect(response.status == 200, "\(response.body)")
            // Deleted whole by the admin, Proj is in the trash: carol sees its entry but may neither restore nor purge it.
            #expect(try await share.curl("root", "DELETE", "api/files/Proj").status == 204)
            let trash = try await share.curl("carol", "GET", "api/trash")
            let entry = try #require(
                (try JSONSerialization.jsonObject(with: Data(trash.body.utf8)) as? [String: Any])?["items"]
                    as? [[String: Any]]
            ).first { $0["path"] as? String == "Proj" }
            let trashId = try #require(entry?["trashId"] as? String, "\(trash.body)")
            response = try await share.curl(
                "carol", "POST", "api/trash/restore",
                ["-H", "Content-Type: application/json", "-d", #"{"trashId":"\#(trashId)"}"#])
            #expect(response.status == 403, "\(response.body)")
            #expect(try await share.curl("carol", "DELETE", "api/trash/\(trashId)").status == 403)
            #expect(try await share.curl("root", "GET", "api/trash").body.contains(trashId))
            #expect(!share.exists("Proj"))
            // The sign-in form cannot be framed by another site either.
            let signIn = try await curlResponse([share.url + "signin"])
            #expect(signIn.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            await share.stop()
        }
    }

    @Test("versions and their restore tell nothing of a folder closed to the user")
    func versionsOfClosedFolders() async throws {
        try await MachineSettings.shared {
            let share = try await Share()
            // The admin saves a file twice in Proj/Hidden, then moves it out into Proj, where carol sees it.
            for content in ["one", "two"] {
                let put = try await share.curl(
                    "root", "PUT", "api/files/Proj/Hidden/doc.txt", ["--data-binary", content])
                #expect(put.status == 201 || put.status == 200 || put.status == 204, "\(put.body)")
            }
            let moved = try await share.curl(
                "root", "POST", "api/move",
                ["-H", "Content-Type: application/json", "-d", #"{"from":"Proj/Hidden/doc.txt","to":"Proj/doc.txt"}"#])
            #expect(moved.status == 200, "\(moved.body)")
            let versions = try await share.curl("carol", "GET", "api/versions?path=Proj/doc.txt")
            #expect(versions.status == 200 && versions.body.contains(#""version":"#), "\(versions.body)")
            #expect(!versions.body.contains("Hidden"), "\(versions.body)")
            #expect(
                try await share.curl("root", "GET", "api/versions?path=Proj/doc.txt").body.contains(
                    "Proj/Hidden/doc.txt"))
            // A restore asked for a hidden file that exists answers as for one that does not, without its id.
            func restore(_ path: String) async throws -> CurlResponse {
                try await share.curl(
                    "carol", "POST", "api/versions/restore",
                    [
                        "-H", "Content-Type: application/json", "-d",
                        #"{"path":"\#(path)","version":"00000000000000000001"}"#,
                    ])
            }
            let existing = try await restore("Proj/Hidden/h.txt")
            let missing = try await restore("Proj/Hidden/nothing.txt")
            #expect(existing.status == 404 && missing.status == 404, "\(existing.body) \(missing.body)")
            #expect(
                existing.body.replacingOccurrences(of: "h.txt", with: "nothing.txt") == missing.body,
                "\(existing.body) \(missing.body)")
            await share.stop()
        }
    }

    @Test("a share link sees what its maker may see now, and no more")
    func linksNarrowedByTheirMaker() async throws {
        try await MachineSettings.shared {
            let share = try await Share()
            func link(_ user: String, _ body: String) async throws -> String {
                let made = try await share.curl(
                    user, "POST", "api/shares", ["-H", "Content-Type: application/json", "-d", body])
                try #require(made.status == 201, "\(made.body)")
                let json = try JSONSerialization.jsonObject(with: Data(made.body.utf8)) as? [String: Any]
                return try #require(json?["url"] as? String).replacingOccurrences(of: "/s/", with: "s/")
            }
            // bob's read link to Team: its page, downloads and ZIP hold nothing of Team/Secret.
            let team = try await link("bob", #"{"path":"Team"}"#)
            let page = try await curlResponse([share.url + team])
            #expect(
                page.status == 200 && page.body.contains("plan.txt") && !page.body.contains("Secret"), "\(page.body)")
            #expect(try await curlResponse([share.url + team + "/download/plan.txt"]).status == 200)
            #expect(try await curlResponse([share.url + team + "/download/Secret/s.txt"]).status == 404)
            #expect(try await curlResponse([share.url + team + "/page/Secret"]).status == 404)
            #expect(try await curlResponse([share.url + team + "/zip/Secret"]).status == 404)
            let zip = share.folder("team.zip")
            #expect(try await curlToFile(zip, [share.url + team + "/zip"]) == 200)
            let listing = try await runUnzip(["-l", zip])
            #expect(
                listing.contains("plan.txt") && !listing.contains("Secret") && !listing.contains("s.txt"), "\(listing)")
            // carol's upload link to Proj takes new files in Proj, none in Proj/Hidden.
            let drop = try await link("carol", #"{"path":"Proj","access":"upload"}"#)
            #expect(try await curlResponse(["-T", "/etc/hostname", share.url + drop + "/files/new.txt"]).status == 201)
            #expect(
                try await curlResponse(["-T", "/etc/hostname", share.url + drop + "/files/Hidden/x.txt"]).status == 404)
            #expect(share.exists("Proj/new.txt") && !share.exists("Proj/Hidden/x.txt"))
            // Rights narrowed after the link was made hold at once: bob loses Team/plan.txt too.
            _ = try await UsersCommandTests.run(
                ["grant", "bob", "Team/plan.txt", "none"], users: share.folder("users.json"))
            #expect(
                await waitFor { (try? await curlResponse([share.url + team + "/download/plan.txt"]).status) == 404 })
            await share.stop()
        }
    }

    @Test("symbolic links made on disk lead nowhere, on every face")
    func symbolicLinksOnDisk() async throws {
        try await MachineSettings.shared {
            let share = try await Share { folder in
                try FileManager.default.createSymbolicLink(atPath: folder("share/Alice/up"), withDestinationPath: "..")
                try FileManager.default.createSymbolicLink(
                    atPath: folder("share/Alice/state"), withDestinationPath: "../.fileshare")
                try FileManager.default.createSymbolicLink(
                    atPath: folder("share/Alice/o.txt"), withDestinationPath: "../Other/o.txt")
            }
            // Reads: the API (the router and the small-read lane answer the same), WebDAV, ZIP, thumbnails.
            for path in [
                "api/files/Alice/up/Other/o.txt", "api/files/Alice/o.txt", "dav/Alice/up/Other/o.txt",
                "api/files/Alice/state/shares.json", "api/thumbnail/Alice/up/Other/pic.jpg", "api/list?path=Alice/up",
                "api/list?path=Alice/state", "api/versions?path=Alice/up/Other/o.txt",
            ] {
                for user in ["alice", "root"] {
                    let response = try await share.curl(user, "GET", path)
                    // The observer does not know a path through a link: a thumbnail of one is not found before it is opened.
                    let refused = path.hasPrefix("api/thumbnail/") ? [403, 404] : [403]
                    #expect(
                        refused.contains(response.status), "\(user) GET \(path): \(response.status) \(response.body)")
                    #expect(!response.body.contains("other"), "\(path)")
                }
            }
            let propfind = try await share.curl("alice", "PROPFIND", "dav/Alice/", ["-H", "Depth: 1"])
            #expect(propfind.status == 207 && propfind.body.contains("a.txt"), "\(propfind.body)")
            #expect(!propfind.body.contains("/dav/Alice/up") && !propfind.body.contains("/dav/Alice/state"))
            let zip = share.folder("alice.zip")
            #expect(
                try await curlToFile(zip, ["-u", "alice:\(Share.password)", share.url + "api/zip?path=Alice"]) == 200)
            let listing = try await runUnzip(["-l", zip])
            #expect(listing.contains("a.txt") && !listing.contains("o.txt") && !listing.contains("audit"), "\(listing)")
            // Writes through a link: the API, WebDAV, resumable uploads and tus; deletes and moves.
            #expect(
                try await share.curl("alice", "PUT", "api/files/Alice/up/Other/x.txt", ["--data-binary", "x"]).status
                    == 403)
            #expect(
                try await share.curl("alice", "PUT", "dav/Alice/up/Other/x.txt", ["--data-binary", "x"]).status == 403)
            #expect(
                try await share.curl(
                    "alice", "POST", "api/uploads?path=Alice/up/Other/y.txt", ["-H", "Upload-Length: 1"]
                ).status
                    == 403)
            let tusPath = Data("Alice/up/Other/z.txt".utf8).base64EncodedString()
            #expect(
                try await share.curl(
                    "alice", "POST", "api/tus/",
                    ["-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: 1", "-H", "Upload-Metadata: path \(tusPath)"]
                ).status == 403)
            #expect(try await share.curl("alice", "DELETE", "api/files/Alice/up/Other/o.txt").status == 403)
            #expect(try await share.curl("alice", "DELETE", "dav/Alice/up/Other/o.txt").status == 403)
            let move = try await share.curl(
                "alice", "POST", "api/move",
                [
                    "-H", "Content-Type: application/json", "-d",
                    #"{"from":"Alice/up/Other/o.txt","to":"Alice/mine.txt"}"#,
                ])
            #expect(move.status == 403, "\(move.body)")
            #expect(share.exists("Other/o.txt") && !share.exists("Other/x.txt") && !share.exists("Alice/mine.txt"))
            for name in ["x.txt", "y.txt", "z.txt"] { #expect(!share.exists("Other/" + name)) }
            // A link of alice's to her folder opens nothing through them either.
            let made = try await share.curl(
                "alice", "POST", "api/shares", ["-H", "Content-Type: application/json", "-d", #"{"path":"Alice"}"#])
            let link = try #require(
                (try JSONSerialization.jsonObject(with: Data(made.body.utf8)) as? [String: Any])?["url"] as? String)
            let base = share.url + link.dropFirst()
            #expect(try await curlResponse([base + "/download/up/Other/o.txt"]).status == 404)
            #expect(try await curlResponse([base + "/download/state/shares.json"]).status == 404)
            // The links themselves are listed as links, and alice may remove one from her folder.
            let list = try await share.curl("alice", "GET", "api/list?path=Alice")
            #expect(list.body.contains(#""name":"up","path":"Alice/up","kind":"symlink""#), "\(list.body)")
            #expect(try await share.curl("alice", "DELETE", "api/files/Alice/up").status == 204)
            #expect(share.exists("Other/o.txt"))
            await share.stop()
        }
    }

    @Test("a users file or TLS key inside the shared folder: the server does not start")
    func privateFilesInsideTheShare() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder("share"), withIntermediateDirectories: true)
        let users = folder("share/users.json")
        try #require(
            try await UsersCommandTests.run(["add", "root", "--admin"], users: users, input: "pw pw pw\n").status == 0)
        let serve = try CommandProcess(["serve", folder("share"), "--port", "0", "--users", users])
        #expect(await serve.exitStatus() == 2)
        #expect(
            serve.errorOutput.contains("the users file \(users) is inside the shared folder"), "\(serve.errorOutput)")
        #expect(serve.lines.isEmpty)
        // The same file reached through a link from outside is inside all the same.
        try FileManager.default.createSymbolicLink(atPath: folder("users-link.json"), withDestinationPath: users)
        let linked = try CommandProcess(["serve", folder("share"), "--port", "0", "--users", folder("users-link.json")])
        #expect(await linked.exitStatus() == 2)
        #expect(linked.errorOutput.contains("is inside the shared folder"), "\(linked.errorOutput)")
        try "key".write(toFile: folder("share/key.pem"), atomically: false, encoding: .utf8)
        try "cert".write(toFile: folder("cert.pem"), atomically: false, encoding: .utf8)
        let tls = try CommandProcess([
            "serve", folder("share"), "--port", "0", "--user", "u", "--password", "p",
            "--tls-cert", folder("cert.pem"), "--tls-key", folder("share/key.pem"),
        ])
        #expect(await tls.exitStatus() == 2)
        #expect(
            tls.errorOutput.contains("the TLS key \(folder("share/key.pem")) is inside the shared folder"),
            "\(tls.errorOutput)")
    }

    @Test("guesses sent at once are counted before their passwords are checked")
    func guessesAtOnce() async throws {
        try await MachineSettings.shared {
            let share = try await Share()
            // 32 wrong passwords for one user at once, from one address: 5 free and the 6th checked, the
            // rest slowed. A loaded machine may take seconds to answer them all: each wait that passed
            // meanwhile (1 s, then 2, 4…) lets one more be checked, as the limits say, and no more.
            let started = ContinuousClock.now
            let statuses = try await parallelStatuses(
                ["-u", "alice:wrong password"], urls: Array(repeating: share.url + "api/info", count: 32),
                address: "127.0.0.3")
            #expect(statuses.count == 32, "\(statuses)")
            #expect(statuses.filter { $0 == 401 }.count <= 6 + waitsPassed(since: started), "\(statuses)")
            #expect(statuses.allSatisfy { $0 == 401 || $0 == 429 }, "\(statuses)")
            // A link's password, likewise (by the form, which tells a wrong one, 401, from a slowed one, 429).
            let made = try await share.curl(
                "root", "POST", "api/shares",
                ["-H", "Content-Type: application/json", "-d", #"{"path":"Alice","password":"the right one"}"#])
            try #require(made.status == 201, "\(made.body)")
            let link = try #require(
                (try JSONSerialization.jsonObject(with: Data(made.body.utf8)) as? [String: Any])?["url"] as? String)
            let linkStarted = ContinuousClock.now
            let guesses = try await parallelStatuses(
                ["-d", "password=wrong"], urls: Array(repeating: share.url + link.dropFirst() + "/password", count: 32),
                address: "127.0.0.2")
            #expect(guesses.count == 32)
            #expect(guesses.filter { $0 == 401 }.count <= 6 + waitsPassed(since: linkStarted), "\(guesses)")
            #expect(guesses.allSatisfy { $0 == 401 || $0 == 429 }, "\(guesses)")
            await share.stop()
        }
    }

    @Test(
        "another site's page changes nothing, with Basic credentials or none; without them only loopback names answer")
    func crossSite() async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            try FileManager.default.createDirectory(atPath: folder("share"), withIntermediateDirectories: true)
            try "small\n".write(toFile: folder("share/small.txt"), atomically: false, encoding: .utf8)
            let basic = try CommandProcess(["serve", folder("share"), "--port", "0", "--user", "u", "--password", "p"])
            try #require(await basic.waitForLine { $0.hasPrefix("Serving ") }, "\(basic.errorOutput)")
            let url = String(basic.lines.first?.split(separator: " ").last ?? "")
            let mkdir = ["-u", "u:p", "-X", "POST", "-H", "Content-Type: application/json", "-d", #"{"path":"made"}"#]
            for header in ["Origin: http://evil.example", "Sec-Fetch-Site: cross-site"] {
                let response = try await curlResponse(mkdir + ["-H", header, url + "api/mkdir"])
                #expect(response.status == 403, "\(header): \(response.body)")
            }
            #expect(!FileManager.default.fileExists(atPath: folder("share/made")))
            let moved = try await curlResponse([
                "-u", "u:p", "-X", "MOVE", "-H", "Origin: http://evil.example", "-H", "Destination: \(url)dav/x.txt",
                url + "dav/small.txt",
            ])
            #expect(moved.status == 403)
            #expect(
                try await curlResponse(mkdir + ["-H", "Sec-Fetch-Site: same-origin", url + "api/mkdir"]).status == 201)
            basic.send(SIGTERM)
            _ = await basic.exitStatus()
            // Without credentials: a page that points its own name at 127.0.0.1 reads nothing (the lane's GET, the router's list).
            let open = try CommandProcess(["serve", folder("share"), "--port", "0", "--no-auth"])
            try #require(await open.waitForLine { $0.hasPrefix("Serving ") }, "\(open.errorOutput)")
            let openURL = String(open.lines.first?.split(separator: " ").last ?? "")
            let port = try #require(URLComponents(string: openURL)?.port)
            for path in ["api/files/small.txt", "api/list?path=", "dav/small.txt"] {
                let rebound = try await curlResponse(["-H", "Host: evil.example:\(port)", openURL + path])
                #expect(rebound.status == 403, "\(path): \(rebound.status) \(rebound.body)")
                #expect(!rebound.body.contains("small\n"))
                let local = try await curlResponse(["-H", "Host: localhost:\(port)", openURL + path])
                #expect(local.status == 200 || local.status == 207, "\(path): \(local.status)")
            }
            // No other site may frame the page or the sign-in form (a framed page can be made to click).
            let page = try await curlResponse(["-H", "Host: localhost:\(port)", openURL])
            #expect(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
            #expect(page.header("X-Frame-Options") == "DENY")
            let crossSite = try await curlResponse([
                "-X", "POST", "-H", "Origin: http://evil.example", "-H", "Content-Type: application/json", "-d",
                #"{"path":"made2"}"#, openURL + "api/mkdir",
            ])
            #expect(crossSite.status == 403)
            open.send(SIGTERM)
            _ = await open.exitStatus()
        }
    }
}

/// The statuses of `urls` fetched by one curl at once (`--parallel`), with
/// `arguments` for each, from `address` (a loopback address of its own, so
/// the throttle of one test's address is not another's).
func parallelStatuses(_ arguments: [String], urls: [String], address: String = "127.0.0.1") async throws -> [Int] {
    var command = [
        "--no-progress-meter", "--parallel", "--parallel-immediate", "--parallel-max", String(urls.count),
        "--interface", address,
    ]
    for url in urls { command += arguments + ["-o", "/dev/null", "-w", "%{http_code}\\n", url] }
    let output = try await ProgramRun.run("/usr/bin/curl", ["-s", "--max-time", "30"] + command).output
    return output.split(separator: "\n").compactMap { Int($0) }
}

/// How many of the throttle's waits after the 6th failure (1 s, 2 s, 4 s…,
/// one after the other) have passed since `start`: each lets one more
/// attempt be checked.
func waitsPassed(since start: ContinuousClock.Instant) -> Int {
    let elapsed = ContinuousClock.now - start
    var waits = 0
    var total = Duration.seconds(1)
    while total <= elapsed {
        waits += 1
        total += .seconds(1 << waits)
    }
    return waits
}

/// Fetches with curl into `file`; answers the status.
func curlToFile(_ file: String, _ arguments: [String]) async throws -> Int {
    let arguments = ["-s", "--max-time", "30", "-o", file, "-w", "%{http_code}"] + arguments
    return Int(try await ProgramRun.run("/usr/bin/curl", arguments).output) ?? 0
}

/// What Info-ZIP's unzip prints for `arguments`.
func runUnzip(_ arguments: [String]) async throws -> String {
    let unzip = try await ProgramRun.run("/usr/bin/unzip", arguments)
    return unzip.output + unzip.errorOutput
}
