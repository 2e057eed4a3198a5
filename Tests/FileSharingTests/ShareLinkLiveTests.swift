import Accounts
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

/// Share links and the audit on a live server with a users file
/// (``AccessFixture``): who may make which link, what a link opens and
/// what it never does, how it ends, and what the audit keeps.
@Suite("Share links, live", .timeLimit(.minutes(5)))
struct ShareLinkLiveTests {
    static func share(
        _ folder: TemporaryFolder, limits: SignInThrottle.Limits = SignInThrottle.Limits()
    ) throws -> ShareFixture {
        let usersFile = folder("users.json")
        try UsersFile.write(try AccessFixture.directory(), to: usersFile)
        let share = try ShareFixture(credentials: false, users: usersFile, signInLimits: limits)
        for (path, content) in [
            "Team/plan.txt": "plan", "Team/Secret/code.txt": "code", "Team/Sub/deep.txt": "deep",
            "Private/diary.txt": "diary", "Drop/old.pdf": "old",
        ] {
            try share.write(path, content)
        }
        // A symbolic link inside the linked folder, to a folder outside it (still inside the share).
        try FileManager.default.createSymbolicLink(atPath: share.path("Team/out"), withDestinationPath: "../Private")
        return share
    }

    static func send(
        _ client: any TestClientProtocol, _ user: String?, _ method: HTTPRequest.Method, _ uri: String,
        headers: HTTPFields = [:], body: String? = nil
    ) async throws -> TestResponse {
        var headers = headers
        if let user { headers[.authorization] = "Basic " + Data("\(user):\(user)-pw".utf8).base64EncodedString() }
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }

    /// Makes a link as `user`; answers its token.
    static func make(_ client: any TestClientProtocol, _ user: String, _ body: String) async throws -> String {
        let made = try await send(client, user, .post, "/api/shares", body: body)
        #expect(made.status == .created, "\(made.text)")
        let token = try #require(made.json["token"] as? String)
        #expect(made.json["url"] as? String == "/s/" + token)
        return token
    }

    static func waitForScan(_ client: any TestClientProtocol) async -> Bool {
        await eventuallyTrue {
            try await send(client, "admin", .get, "/api/list?path=Team").text.contains("plan.txt")
        }
    }

    @Test("only who may share an item makes a link to it; a read link opens the file, nothing else")
    func readLinkToFile() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(folder)
        try await share.test(.live) { client in
            #expect(await Self.waitForScan(client))
            // The right to share: read for a read link, write for an upload link; hidden stays hidden.
            #expect(
                try await Self.send(client, "nobody", .post, "/api/shares", body: #"{"path":"Team/plan.txt"}"#).status
                    == .notFound)
            #expect(
                try await Self.send(client, "reader", .post, "/api/shares", body: #"{"path":"Team","access":"upload"}"#)
                    .status == .forbidden)
            #expect(
                try await Self.send(
                    client, "dropper", .post, "/api/shares", body: #"{"path":"Drop","access":"upload"}"#
                )
                .status == .forbidden)
            #expect(
                try await Self.send(client, "writer", .post, "/api/shares", body: #"{"path":"Team","expires":"soon"}"#)
                    .status == .badRequest)
            let token = try await Self.make(client, "reader", #"{"path":"Team/plan.txt","access":"read"}"#)
            #expect(LinkToken.isWellFormed(token))

            let page = try await Self.send(client, nil, .get, "/s/" + token)
            #expect(page.status == .ok && page.text.contains("plan.txt"), "\(page.text)")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            let file = try await Self.send(client, nil, .get, "/s/\(token)/download")
            #expect(file.status == .ok && file.text == "plan")
            let range = try await Self.send(client, nil, .get, "/s/\(token)/download", headers: [.range: "bytes=1-2"])
            #expect(range.status == .partialContent && range.text == "la")
            // Nothing but the file: no folder pages, no other file, no API.
            for uri in [
                "/s/\(token)/download/x", "/s/\(token)/page/x", "/s/\(token)/zip", "/s/\(token)/files/n.txt",
                "/s/\(token)/download/..%2FSecret%2Fcode.txt",
            ] {
                let response = try await Self.send(client, nil, .get, uri)
                #expect(response.status == .notFound, "\(uri): \(response.status)")
                #expect(!response.text.contains("code"), "\(uri)")
            }
            #expect(try await Self.send(client, nil, .get, "/api/list?path=Team").status == .unauthorized)

            // The store keeps no token, readable by the server's user only.
            let store = share.path(".fileshare/shares.json")
            let stored = try String(contentsOfFile: store, encoding: .utf8)
            #expect(!stored.contains(token) && stored.contains(LinkToken.hash(token)))
            let mode = try FileManager.default.attributesOfItem(atPath: store)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // Listed for its maker and for admins, not for others; the listing has no token.
            let mine = try await Self.send(client, "reader", .get, "/api/shares").text
            #expect(mine.contains("Team/plan.txt") && !mine.contains(token))
            #expect(!(try await Self.send(client, "writer", .get, "/api/shares").text.contains("plan.txt")))
            #expect(try await Self.send(client, "admin", .get, "/api/shares").text.contains("plan.txt"))
            // Revoked by its maker (not by another user): 410 at once.
            #expect(try await Self.send(client, "writer", .delete, "/api/shares/" + token).status == .notFound)
            #expect(try await Self.send(client, "reader", .delete, "/api/shares/" + token).status == .noContent)
            let gone = try await Self.send(client, nil, .get, "/s/\(token)/download")
            #expect(gone.status == .gone && gone.text.contains("revoked"))
        }
        withExtendedLifetime(folder) {}
    }

    @Test("a folder link browses, downloads and zips inside it; path tricks and symbolic links out answer 404")
    func folderLinkTricks() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(folder)
        try await share.test(.live) { client in
            #expect(await Self.waitForScan(client))
            let token = try await Self.make(client, "writer", #"{"path":"Team/Sub"}"#)
            let page = try await Self.send(client, nil, .get, "/s/" + token)
            #expect(page.status == .ok && page.text.contains("deep.txt") && !page.text.contains("plan.txt"))
            #expect(try await Self.send(client, nil, .get, "/s/\(token)/download/deep.txt").text == "deep")
            let zip = try await Self.send(client, nil, .get, "/s/\(token)/zip")
            #expect(zip.status == .ok && zip.text.contains("Sub/deep.txt") && !zip.text.contains("plan"))

            let whole = try await Self.make(client, "writer", #"{"path":"Team"}"#)
            #expect(try await Self.send(client, nil, .get, "/s/\(whole)/page/Sub").text.contains("deep.txt"))
            let tricks = [
                "/s/\(token)/download/..%2Fplan.txt", "/s/\(token)/download/%2e%2e/plan.txt",
                "/s/\(token)/download/../plan.txt", "/s/\(token)/download//etc/passwd",
                "/s/\(token)/download/%2Fetc%2Fpasswd", "/s/\(token)/download/.fileshare/shares.json",
                "/s/\(token)/page/..", "/s/\(whole)/download/out/diary.txt", "/s/\(whole)/page/out",
                "/s/\(whole)/zip/out", "/s/\(whole)/download/Sub%2Fdeep.txt",
            ]
            for uri in tricks {
                let response = try await Self.send(client, nil, .get, uri)
                #expect(response.status == .notFound, "\(uri): \(response.status) \(response.text)")
                #expect(!response.text.contains("diary") && !response.text.contains("passwd\n"), "\(uri)")
            }
            let zipAll = try await Self.send(client, nil, .get, "/s/\(whole)/zip")
            #expect(zipAll.status == .ok && zipAll.text.contains("Team/plan.txt") && !zipAll.text.contains("diary"))
        }
        withExtendedLifetime(folder) {}
    }

    @Test("an upload link adds files (a name taken keeps both) and shows nothing of what is there")
    func uploadLink() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(folder)
        try await share.test(.live) { client in
            #expect(await Self.waitForScan(client))
            #expect(
                try await Self.send(
                    client, "writer", .post, "/api/shares", body: #"{"path":"Team/plan.txt","access":"upload"}"#
                )
                .status == .conflict)
            let token = try await Self.make(client, "writer", #"{"path":"Team","access":"upload"}"#)
            let page = try await Self.send(client, nil, .get, "/s/" + token)
            #expect(page.status == .ok && page.text.contains("drop-zone") && !page.text.contains("plan.txt"))
            #expect(try await Self.send(client, nil, .put, "/s/\(token)/files/new.txt", body: "N").status == .created)
            // A name taken keeps both, numbered as the Inbox does; nothing there is replaced.
            #expect(
                try await Self.send(client, nil, .put, "/s/\(token)/files/new.txt", body: "again").status == .created)
            #expect(
                try await Self.send(client, nil, .post, "/s/\(token)/files/plan.txt", body: "X").status == .created)
            #expect(
                try await Self.send(client, nil, .put, "/s/\(token)/files/..%2Fescape.txt", body: "X").status
                    == .notFound)
            #expect(
                try await Self.send(client, nil, .put, "/s/\(token)/files/out/x.txt", body: "X").status == .notFound)
            for uri in ["/s/\(token)/download/plan.txt", "/s/\(token)/zip", "/s/\(token)/page/Sub"] {
                #expect(try await Self.send(client, nil, .get, uri).status == .notFound, "\(uri)")
            }
            // Another site's page may not drop files through a visitor's browser.
            #expect(
                try await Self.send(
                    client, nil, .put, "/s/\(token)/files/csrf.txt", headers: [.secFetchSite: "cross-site"], body: "X"
                ).status == .forbidden)
        }
        #expect(share.read("Team/new.txt") == "N")
        #expect(share.read("Team/new 2.txt") == "again")
        #expect(share.read("Team/plan.txt") == "plan")
        #expect(share.read("Team/plan 2.txt") == "X")
        #expect(!FileManager.default.fileExists(atPath: share.path("escape.txt")))
        #expect(!FileManager.default.fileExists(atPath: share.path("Private/x.txt")))
        #expect(!FileManager.default.fileExists(atPath: share.path("Team/csrf.txt")))
        withExtendedLifetime(folder) {}
    }

    @Test("used up after maxDownloads complete downloads (ranges of one are one), expired, deleted: 410 saying which")
    func endings() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(folder)
        try await share.test(.live) { client in
            #expect(await Self.waitForScan(client))
            let once = try await Self.make(client, "writer", #"{"path":"Team/plan.txt","maxDownloads":2}"#)
            // Pieces of one download: one counted (the last piece, once).
            for range in ["bytes=0-1", "bytes=2-3", "bytes=2-3"] {
                #expect(
                    try await Self.send(client, nil, .get, "/s/\(once)/download", headers: [.range: range]).status
                        == .partialContent)
            }
            #expect(try await Self.send(client, nil, .head, "/s/\(once)/download").status == .ok)
            #expect(
                await eventuallyTrue {
                    try await Self.send(client, "writer", .get, "/api/shares").text.contains(#""downloads":1"#)
                })
            #expect(try await Self.send(client, nil, .get, "/s/\(once)/download").text == "plan")
            #expect(
                await eventuallyTrue {
                    let used = try await Self.send(client, nil, .get, "/s/\(once)/download")
                    return used.status == .gone && used.text.contains("used as many times")
                })

            let soon = try await Self.make(client, "writer", #"{"path":"Team/plan.txt","expires":"PT1S"}"#)
            #expect(
                await eventuallyTrue {
                    let expired = try await Self.send(client, nil, .get, "/s/" + soon)
                    return expired.status == .gone && expired.text.contains("expired")
                })

            // Renamed and moved, the link follows; deleted, it ends.
            let follow = try await Self.make(client, "writer", #"{"path":"Team/Sub/deep.txt"}"#)
            #expect(
                try await Self.send(
                    client, "writer", .post, "/api/move", body: #"{"from":"Team/Sub/deep.txt","to":"Team/moved.txt"}"#
                )
                .status == .ok)
            #expect(
                await eventuallyTrue {
                    let followed = try await Self.send(client, nil, .get, "/s/\(follow)/download").text == "deep"
                    let listed = try await Self.send(client, "writer", .get, "/api/shares").text
                    return followed && listed.contains("Team/moved.txt")
                })
            #expect(try await Self.send(client, "writer", .delete, "/api/files/Team/moved.txt").status == .noContent)
            #expect(
                await eventuallyTrue {
                    let deleted = try await Self.send(client, nil, .get, "/s/" + follow)
                    return deleted.status == .gone && deleted.text.contains("deleted")
                })
        }
        withExtendedLifetime(folder) {}
    }

    @Test("guessed tokens are 404 and slowed; a link's password is asked, checked and slowed the same way")
    func guessesAndPasswords() async throws {
        let folder = try TemporaryFolder()
        let limits = SignInThrottle.Limits(freeFailures: 3, firstDelay: .seconds(30))
        let share = try Self.share(folder, limits: limits)
        try await share.test(.live) { client in
            #expect(await Self.waitForScan(client))
            let token = try await Self.make(client, "writer", #"{"path":"Team/plan.txt","password":"open sesame"}"#)
            let form = try await Self.send(client, nil, .get, "/s/" + token)
            #expect(
                form.status == .unauthorized && form.text.contains("name=\"password\"") && !form.text.contains("plan"))
            #expect(try await Self.send(client, nil, .get, "/s/\(token)/download").status == .unauthorized)
            let urlencoded: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            let wrong = try await Self.send(
                client, nil, .post, "/s/\(token)/password", headers: urlencoded, body: "password=nope")
            #expect(wrong.status == .unauthorized && wrong.text.contains("wrong"))
            let right = try await Self.send(
                client, nil, .post, "/s/\(token)/password", headers: urlencoded, body: "password=open+sesame")
            #expect(right.status == .seeOther)
            let cookie = try #require(right.headers[.setCookie])
            #expect(
                cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/s/\(token)")
            )
            let pair = String(cookie.split(separator: ";")[0])
            #expect(
                try await Self.send(client, nil, .get, "/s/\(token)/download", headers: [.cookie: pair]).text == "plan")
            // Scripts: the password as Basic credentials (any name).
            let basic = "Basic " + Data("x:open sesame".utf8).base64EncodedString()
            #expect(
                try await Self.send(client, nil, .get, "/s/\(token)/download", headers: [.authorization: basic]).text
                    == "plan")
            // What a link's visitor holds (its cookie, its password) opens nothing but the link: every face
            // refuses it (401; 429 once the Basic attempts, wrong as sign-ins, are slowed).
            let faces: [(HTTPRequest.Method, String)] = [
                (.get, "/api/list?path=Team"), (.get, "/api/files/Team/plan.txt"), (.get, "/api/zip?path=Team"),
                (.get, "/api/changes?since=0"), (.get, "/api/shares"), (.get, "/api/audit"), (.get, "/api/info"),
                (.put, "/api/files/Team/x.txt"), (.delete, "/api/files/Team/plan.txt"), (.get, "/dav/Team/plan.txt"),
                (HTTPRequest.Method("PROPFIND")!, "/dav/"), (.get, "/api/thumbnail/Team/plan.txt"),
            ]
            for (method, uri) in faces {
                for headers: HTTPFields in [[.cookie: pair], [.authorization: basic]] {
                    let response = try await Self.send(client, nil, method, uri, headers: headers)
                    #expect(
                        response.status == .unauthorized || response.status == .tooManyRequests,
                        "\(method) \(uri): \(response.status)")
                    #expect(!response.text.contains("plan"))
                }
            }

            // Guesses: 404 each, then slowed (429) for this address, even for a real token.
            // (The wrong password above counted for this address too: 3 free failures, then waits.)
            for _ in 0..<3 {
                let guess = LinkToken.make()
                #expect(try await Self.send(client, nil, .get, "/s/" + guess).status == .notFound)
            }
            #expect(try await Self.send(client, nil, .get, "/s/short").status == .tooManyRequests)
            let slowed = try await Self.send(client, nil, .get, "/s/" + token)
            #expect(slowed.status == .tooManyRequests && slowed.headers[.retryAfter] != nil)
        }
        withExtendedLifetime(folder) {}
    }

    @Test("the audit: sign-ins, downloads (ranges once), uploads, moves, deletes, links; no token, no password")
    func audit() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(folder)
        let token: String = try await share.test(.live) { client in
            #expect(await Self.waitForScan(client))
            #expect(try await Self.send(client, "reader", .get, "/api/info", headers: [:]).status == .ok)
            let badBasic = "Basic " + Data("reader:not-the-password".utf8).base64EncodedString()
            #expect(
                try await Self.send(client, nil, .get, "/api/info", headers: [.authorization: badBasic]).status
                    == .unauthorized)
            for range in ["bytes=0-0", "bytes=1-1", "bytes=2-3"] {
                _ = try await Self.send(client, "reader", .get, "/api/files/Team/plan.txt", headers: [.range: range])
            }
            #expect(try await Self.send(client, "writer", .put, "/api/files/Team/up.txt", body: "U").status == .created)
            #expect(
                try await Self.send(
                    client, "writer", .post, "/api/move", body: #"{"from":"Team/up.txt","to":"Team/up2.txt"}"#
                )
                .status == .ok)
            #expect(try await Self.send(client, "writer", .delete, "/api/files/Team/up2.txt").status == .noContent)
            let token = try await Self.make(client, "writer", #"{"path":"Team/plan.txt","password":"pw-secret"}"#)
            let basic = "Basic " + Data("x:pw-secret".utf8).base64EncodedString()
            #expect(
                try await Self.send(client, nil, .get, "/s/\(token)/download", headers: [.authorization: basic]).status
                    == .ok)
            // Admins only; others are told it does not exist.
            #expect(try await Self.send(client, "reader", .get, "/api/audit").status == .notFound)
            for bad in ["limit=0", "limit=100001", "limit=x", "since=yesterday"] {
                #expect(try await Self.send(client, "admin", .get, "/api/audit?" + bad).status == .badRequest, "\(bad)")
            }
            #expect(
                await eventuallyTrue {
                    try await Self.send(client, "admin", .get, "/api/audit?user=writer").text.contains("link-create")
                })
            let all = try await Self.send(client, "admin", .get, "/api/audit").text
            let events = try #require(
                (try JSONSerialization.jsonObject(with: Data(all.utf8)) as? [String: Any])?["events"]
                    as? [[String: Any]])
            func count(_ action: String, _ who: String, _ path: String? = nil) -> Int {
                events.filter {
                    $0["action"] as? String == action && $0["who"] as? String == who
                        && (path == nil || $0["path"] as? String == path)
                }.count
            }
            #expect(count("download", "reader", "Team/plan.txt") == 1, "\(all)")
            #expect(count("signin", "reader") == 1, "\(all)")
            #expect(count("upload", "writer", "Team/up.txt") == 1)
            #expect(count("move", "writer", "Team/up.txt") == 1)
            #expect(count("delete", "writer", "Team/up2.txt") == 1)
            #expect(count("link-create", "writer", "Team/plan.txt") == 1)
            let linkWho = events.first {
                $0["action"] as? String == "download" && ($0["who"] as? String)?.hasPrefix("link ") == true
            }
            #expect(linkWho?["path"] as? String == "Team/plan.txt", "\(all)")
            #expect(events.allSatisfy { ($0["address"] as? String)?.isEmpty == false })
            let pathOnly = try await Self.send(client, "admin", .get, "/api/audit?path=Team/up2.txt&limit=5").text
            #expect(pathOnly.contains("delete") && !pathOnly.contains("signin"))
            return token
        }
        await share.server.audit.close()
        let files = AuditReader.files(in: AuditReader.folder(forSharedFolder: share.root))
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for secret in [token, "pw-secret", "not-the-password", "reader-pw", "writer-pw", LinkToken.hash(token)] {
                #expect(!text.contains(secret), "the audit holds a secret")
            }
        }
        withExtendedLifetime(folder) {}
    }
}
