import Accounts
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

@Suite("Changes from other sites")
struct CrossSiteCheckTests {
    static let cases: [(method: String, site: String?, origin: String?, allowed: Bool)] = [
        ("GET", "cross-site", "https://evil.example", true),  // changes nothing
        ("PROPFIND", "cross-site", nil, true),
        ("POST", "same-origin", "http://share:8080", true),
        ("PUT", "none", nil, true),
        ("DELETE", "cross-site", nil, false),
        ("POST", "same-site", nil, false),  // a sibling host is another site's page too
        ("POST", nil, "http://share:8080", true),  // an older browser: Origin alone
        ("POST", nil, "http://evil.example", false),
        ("MOVE", nil, "null", false),
        ("PUT", nil, nil, true),  // a script or WebDAV client
    ]

    @Test("Sec-Fetch-Site, else Origin against Host; scripts send neither", arguments: cases)
    func check(_ entry: (method: String, site: String?, origin: String?, allowed: Bool)) {
        #expect(
            CrossSiteCheck.allows(method: entry.method, fetchSite: entry.site, origin: entry.origin, host: "share:8080")
                == entry.allowed)
    }
}

/// The page's sign-in, on a live server with a users file.
@Suite("Sign-in, live")
struct SignInLiveTests {
    static func share(
        in folder: TemporaryFolder, signInLimits: SignInThrottle.Limits = SignInThrottle.Limits()
    ) throws -> ShareFixture {
        let usersFile = folder("users.json")
        try UsersFile.write(try AccessFixture.directory(), to: usersFile)
        let share = try ShareFixture(credentials: false, users: usersFile, signInLimits: signInLimits)
        try share.write("Team/plan.txt", "plan")
        return share
    }

    static func send(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ headers: HTTPFields = [:],
        body: String? = nil
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }

    static func cookie(_ response: TestResponse) -> String? {
        guard let header = response.headers[.setCookie], header.hasPrefix(SessionFace.cookieName + "=") else {
            return nil
        }
        return String(header.split(separator: ";")[0])
    }

    @Test("the form signs in with a new session id, the cookie works, sign-out ends it")
    func form() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(in: folder)
        try await share.test(.live) { client in
            // A browser without a session is sent to the form; the page's own script gets no Basic dialog.
            let page = try await Self.send(client, .get, "/", [.accept: "text/html"])
            #expect(page.status == .seeOther && page.headers[.location] == "/signin")
            let script = try await Self.send(client, .get, "/api/info", [.secFetchMode: "cors"])
            #expect(script.status == .unauthorized && script.headers[.wwwAuthenticate] == nil)
            #expect(script.text.contains("\"signIn\":\"/signin\""))
            let bare = try await Self.send(client, .get, "/api/info")
            #expect(bare.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            #expect(
                try await Self.send(client, .get, "/signin").text.contains("<form method=\"post\" action=\"/signin\">"))

            // A planted id is not kept: sign-in makes a new one.
            let planted = SessionFace.cookieName + "=" + String(repeating: "a", count: 64)
            let form: HTTPFields = [
                .contentType: "application/x-www-form-urlencoded", .cookie: planted, .secFetchSite: "same-origin",
            ]
            let wrong = try await Self.send(client, .post, "/signin", form, body: "name=reader&password=nope")
            #expect(wrong.status == .unauthorized && wrong.text.contains("wrong"))
            let signedIn = try await Self.send(client, .post, "/signin", form, body: "name=reader&password=reader-pw")
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/")
            let setCookie = try #require(signedIn.headers[.setCookie])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            #expect(!setCookie.contains("Secure"))  // not under TLS
            let cookie = try #require(Self.cookie(signedIn))
            #expect(cookie != planted)
            #expect(try await Self.send(client, .get, "/api/info", [.cookie: planted]).status == .unauthorized)

            let info = try await Self.send(client, .get, "/api/info", [.cookie: cookie])
            #expect(info.status == .ok && info.text.contains("\"user\":\"reader\""))
            let who = try await Self.send(client, .get, "/api/session", [.cookie: cookie])
            #expect(who.text == #"{"user":"reader","admin":false}"#)
            #expect(try await Self.send(client, .get, "/api/files/Team/plan.txt", [.cookie: cookie]).text == "plan")
            // The rights are the user's: reader may not write.
            let put = try await Self.send(
                client, .put, "/api/files/Team/x.txt", [.cookie: cookie, .secFetchSite: "same-origin"], body: "x")
            #expect(put.status == .forbidden)

            let out = try await Self.send(client, .post, "/signout", [.cookie: cookie, .secFetchSite: "same-origin"])
            #expect(out.status == .seeOther && out.headers[.setCookie]?.contains("Max-Age=0") == true)
            #expect(try await Self.send(client, .get, "/api/info", [.cookie: cookie]).status == .unauthorized)
        }
    }

    @Test("a changed password ends the sessions signed in with the old one; another user's stay")
    func passwordChangeEndsSessions() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(in: folder)
        try await share.test(.live) { client in
            let json: HTTPFields = [.contentType: "application/json", .secFetchSite: "same-origin"]
            var cookies: [String: String] = [:]
            for name in ["reader", "writer"] {
                let body = #"{"name":"\#(name)","password":"\#(name)-pw"}"#
                let signedIn = try await Self.send(client, .post, "/api/session", json, body: body)
                cookies[name] = try #require(Self.cookie(signedIn), "\(signedIn.status) \(signedIn.text)")
            }
            let reader = try #require(cookies["reader"])
            #expect(try await Self.send(client, .get, "/api/session", [.cookie: reader]).status == .ok)
            var directory = try #require(try UsersFile.read(folder("users.json")))
            try directory.setPassword("reader", passwordHash: "another hash")
            try UsersFile.write(directory, to: folder("users.json"))
            // The users file is looked at once a second.
            let clock = ContinuousClock()
            let start = clock.now
            var status = HTTPResponse.Status.ok
            while clock.now - start < .seconds(10) {
                status = try await Self.send(client, .get, "/api/session", [.cookie: reader]).status
                if status == .unauthorized { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(status == .unauthorized)
            let writer = try #require(cookies["writer"])
            #expect(try await Self.send(client, .get, "/api/session", [.cookie: writer]).status == .ok)
        }
    }

    @Test("a change sent from another site's page is refused, with a cookie or Basic")
    func crossSite() async throws {
        let folder = try TemporaryFolder()
        let share = try Self.share(in: folder)
        try await share.test(.live) { client in
            let login = try await Self.send(
                client, .post, "/api/session", [.contentType: "application/json"],
                body: #"{"name":"writer","password":"writer-pw"}"#)
            let cookie = try #require(Self.cookie(login))
            let basic = "Basic " + Data("writer:writer-pw".utf8).base64EncodedString()
            for credentials: HTTPFields in [[.cookie: cookie], [.authorization: basic]] {
                var headers = credentials
                headers[.secFetchSite] = "cross-site"
                let refused = try await Self.send(client, .delete, "/api/files/Team/plan.txt", headers)
                #expect(refused.status == .forbidden)
                headers[.secFetchSite] = nil
                headers[.origin] = "https://evil.example"
                #expect(try await Self.send(client, .delete, "/api/files/Team/plan.txt", headers).status == .forbidden)
            }
            #expect(share.read("Team/plan.txt") == "plan")
            // The same from the page itself goes ahead.
            let own = try await Self.send(
                client, .put, "/api/files/Team/new.txt", [.cookie: cookie, .secFetchSite: "same-origin"], body: "n")
            #expect(own.status == .created)
            #expect(try await Self.send(client, .delete, "/api/session", [.cookie: cookie]).status == .noContent)
        }
    }

    @Test("failed sign-ins are slowed per name and per address: 429 with Retry-After, for the form and Basic")
    func throttled() async throws {
        let folder = try TemporaryFolder()
        // A wait long enough that a slow machine does not see it end meanwhile
        // (its end is the state machine's test, with a clock of its own).
        let share = try Self.share(in: folder, signInLimits: .init(firstDelay: .seconds(60)))
        try await share.test(.live) { client in
            let wrong = "Basic " + Data("dropper:nope".utf8).base64EncodedString()
            for _ in 0..<6 {
                #expect(try await Self.send(client, .get, "/api/info", [.authorization: wrong]).status == .unauthorized)
            }
            let slowed = try await Self.send(client, .get, "/api/info", [.authorization: wrong])
            // The seconds left of the wait (a loaded machine may take a few to get here).
            #expect(slowed.status == .tooManyRequests)
            #expect((50...60).contains(Int(slowed.headers[.retryAfter] ?? "") ?? 0), "\(slowed.headers)")
            // Even the right password waits: nothing is checked while slowed.
            let right = "Basic " + Data("dropper:dropper-pw".utf8).base64EncodedString()
            #expect(try await Self.send(client, .get, "/api/info", [.authorization: right]).status == .tooManyRequests)
            let form = try await Self.send(
                client, .post, "/signin", [.contentType: "application/x-www-form-urlencoded"],
                body: "name=dropper&password=dropper-pw")
            #expect(form.status == .tooManyRequests)
        }
    }
}
