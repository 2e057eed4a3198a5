import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

extension HTTPRequest.Method {
    static let proppatch = HTTPRequest.Method("PROPPATCH")!
    static let mkcol = HTTPRequest.Method("MKCOL")!
    static let copy = HTTPRequest.Method("COPY")!
    static let move = HTTPRequest.Method("MOVE")!
    static let lock = HTTPRequest.Method("LOCK")!
    static let unlock = HTTPRequest.Method("UNLOCK")!
}

/// WebDAV through the router, on real folders: the cases litmus does not
/// cover (bad input, path rules, properties kept on disk, held-back empty files).
@Suite("WebDAV")
struct WebDAVRouterTests {
    static let lockBody = """
        <?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype><D:owner><D:href>mailto:alice@example.com</D:href></D:owner></D:lockinfo>
        """

    static func setProperty(_ name: String, _ value: String) -> String {
        """
        <?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:">\
        <D:set><D:prop><Z:\(name)>\(value)</Z:\(name)></D:prop></D:set></D:propertyupdate>
        """
    }

    static let getProperty = """
        <?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:prop>\
        <Z:Win32FileAttributes/><D:getcontentlength/><Z:missing/></D:prop></D:propfind>
        """

    @Test("OPTIONS, PROPFIND depth 0 and 1 (hidden names and links out left out), infinity refused")
    func propfind() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("Docs/a.txt", "hello")
            try share.write("Docs/.hidden", "h")
            try FileManager.default.createDirectory(atPath: share.path("Docs/Sub"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: share.path("Docs/out"), withDestinationPath: "/etc")
            try FileManager.default.createSymbolicLink(atPath: share.path("Docs/in"), withDestinationPath: "a.txt")
            try await share.test { (client: any TestClientProtocol) async throws in
                let options = try await client.request("/dav/", .options)
                #expect(options.status == .ok && options.headers[HTTPField.Name("DAV")!] == "1, 2")
                let one = try await client.request("/dav/Docs", .propfind, headers: [.depth: "1"])
                #expect(one.status.code == 207)
                #expect(one.text.contains("<D:href>/dav/Docs/</D:href>"))
                #expect(one.text.contains("<D:href>/dav/Docs/a.txt</D:href>"))
                #expect(one.text.contains("<D:href>/dav/Docs/Sub/</D:href>"))
                // Symbolic links are never followed, so WebDAV, which cannot show one, leaves them out.
                #expect(!one.text.contains("/dav/Docs/in"))
                #expect(!one.text.contains("hidden") && !one.text.contains("/dav/Docs/out"))
                #expect(one.text.contains("<D:getcontentlength>5</D:getcontentlength>"))
                #expect(one.text.components(separatedBy: "<D:response>").count - 1 == 3)
                let zero = try await client.request(
                    "/dav/Docs/a.txt", .propfind, headers: [.depth: "0"], body: WebDAVRouterTests.getProperty)
                #expect(zero.text.contains("<D:getcontentlength>5</D:getcontentlength>"))
                #expect(zero.text.contains("404 Not Found") && zero.text.contains("missing"))
                let infinity = try await client.request("/dav/", .propfind, headers: [.depth: "infinity"])
                #expect(infinity.status == .forbidden && infinity.text.contains("propfind-finite-depth"))
                #expect(try await client.request("/dav/", .propfind).status == .forbidden)
                #expect(try await client.request("/dav/nothing", .propfind, headers: [.depth: "0"]).status == .notFound)
                let names = try await client.request(
                    "/dav/Docs/a.txt", .propfind, headers: [.depth: "0"],
                    body: #"<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>"#)
                #expect(names.text.contains("<D:getetag/>") && !names.text.contains("hello"))
                let quota = try await client.request(
                    "/dav/", .propfind, headers: [.depth: "0"],
                    body:
                        #"<D:propfind xmlns:D="DAV:"><D:prop><D:quota-available-bytes/><D:quota-used-bytes/></D:prop></D:propfind>"#
                )
                #expect(quota.text.contains("<D:quota-available-bytes>") && quota.text.contains("<D:quota-used-bytes>"))
            }
        }
    }

    @Test(
        "bad input: clear statuses, nothing changed",
        arguments: [
            ("PROPFIND", "/dav/", ["Depth": "0"], "<D:propfind xmlns:D=\"DAV:\"><D:prop>", 400),
            ("PROPFIND", "/dav/", ["Depth": "0"], "<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>", 400),
            ("PROPFIND", "/dav/", ["Depth": "0"], "<other/>", 400),
            (
                "PROPPATCH", "/dav/f.txt", [:],
                "<D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><x:y xmlns:x=\"\"/></D:prop></D:set></D:propertyupdate>",
                400
            ),
            (
                "LOCK", "/dav/f.txt", [:],
                "<D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/></D:lockscope></D:lockinfo>", 400
            ),
            ("LOCK", "/dav/f.txt", ["Depth": "1"], lockBody, 400),
            ("COPY", "/dav/f.txt", ["Destination": "http://elsewhere.example/dav/g.txt"], "", 502),
            ("COPY", "/dav/f.txt", ["Destination": "/api/files/g.txt"], "", 403),
            ("MOVE", "/dav/f.txt", ["Destination": "/dav/../g.txt"], "", 400),
            ("MOVE", "/dav/f.txt", ["Destination": "/dav/%2e%2e/g.txt"], "", 400),
            ("MOVE", "/dav/f.txt", ["Destination": "/dav/.fileshare/g.txt"], "", 403),
            ("MOVE", "/dav/f.txt", [:], "", 400),
            ("MOVE", "/dav/f.txt", ["Destination": "/dav/g.txt", "Overwrite": "maybe"], "", 400),
            ("MOVE", "/dav/f.txt", ["Destination": "/dav/f.txt"], "", 403),
            ("MOVE", "/dav/f.txt", ["Destination": "/dav/missing/g.txt"], "", 409),
            ("PUT", "/dav/f.txt", ["If": "(<opaquelocktoken:does-not-exist>)"], "new", 412),
            ("PUT", "/dav/f.txt", ["If": "(<opaquelocktoken:x"], "new", 400),
            ("PUT", "/dav/f.txt", ["If": "([\"not-the-etag\"])"], "new", 412),
            ("PUT", "/dav/f.txt", ["If-Match": "\"not-the-etag\""], "new", 412),
            ("PUT", "/dav/f.txt", ["If-None-Match": "*"], "new", 412),
            ("PUT", "/dav/f.txt", ["If-Unmodified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"], "new", 412),
            ("DELETE", "/dav/f.txt", ["If-Match": "\"not-the-etag\""], "", 412),
            ("MOVE", "/dav/f.txt", ["Destination": "/dav/g.txt", "If-Match": "\"not-the-etag\""], "", 412),
            ("MKCOL", "/dav/new", ["If-Match": "*"], "", 412),
            ("UNLOCK", "/dav/f.txt", ["Lock-Token": "<opaquelocktoken:does-not-exist>"], "", 409),
            ("UNLOCK", "/dav/f.txt", [:], "", 400),
            ("DELETE", "/dav/f.txt#frag", [:], "", 400),
            ("DELETE", "/dav/%2e%2e/x", [:], "", 400),
            ("PUT", "/dav/.hidden", [:], "x", 403),
            ("PUT", "/dav/no/parent.txt", [:], "x", 409),
            ("MKCOL", "/dav/new", [:], "<x/>", 415),
            ("BREW", "/dav/f.txt", [:], "", 405),
        ] as [(String, String, [String: String], String, Int)])
    func badInput(method: String, uri: String, headers: [String: String], body: String, status: Int) async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("f.txt", "original")
            let before = share.visibleTree()
            try await share.test { (client: any TestClientProtocol) async throws in
                var fields = HTTPFields()
                for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
                let response = try await client.request(
                    uri, HTTPRequest.Method(method)!, headers: fields, body: body.isEmpty ? nil : body)
                #expect(response.status.code == status, "\(method) \(uri): \(response.text)")
                #expect(!response.text.isEmpty)
            }
            #expect(share.visibleTree() == before)
            #expect(share.read("f.txt") == "original")
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("If-Match as on the JSON API: the ETag a GET gave passes, also that of an empty file held back")
    func ifMatch() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("f.txt", "original")
            try await share.test { (client: any TestClientProtocol) async throws in
                let tag = try #require(try await client.request("/dav/f.txt").headers[.eTag])
                #expect(
                    try await client.request("/dav/f.txt", .put, headers: [.ifMatch: tag], body: "new").status
                        == .noContent)
                #expect(
                    try await client.request("/dav/f.txt", .put, headers: [.ifMatch: tag], body: "lost").status.code
                        == 412)
                #expect(share.read("f.txt") == "new")
                #expect(try await client.request("/dav/empty.txt", .put).status == .created)
                let held = try #require(try await client.request("/dav/empty.txt").headers[.eTag])
                #expect(
                    try await client.request("/dav/empty.txt", .put, headers: [.ifMatch: held], body: "content").status
                        == .noContent)
                #expect(share.read("empty.txt") == "content")
            }
        }
    }

    @Test("a PROPFIND body over 1 MiB is 413")
    func hugeBody() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let huge =
                "<D:propfind xmlns:D=\"DAV:\"><D:prop>" + String(repeating: "<D:getetag/>", count: 100_000)
                + "</D:prop></D:propfind>"
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(
                    try await client.request("/dav/", .propfind, headers: [.depth: "0"], body: huge).status
                        == .contentTooLarge)
            }
        }
    }

    @Test("credentials and read-only mode apply to /dav/ as to the rest")
    func rules() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(readOnly: true)
            try share.write("f.txt", "x")
            try await share.test { (client: any TestClientProtocol) async throws in
                let anonymous = try await client.request("/dav/", .propfind, headers: [.depth: "0"], authorized: false)
                #expect(anonymous.status == .unauthorized && anonymous.headers[.wwwAuthenticate] != nil)
                #expect(try await client.request("/dav/", .propfind, headers: [.depth: "1"]).status.code == 207)
                #expect(try await client.request("/dav/f.txt").text == "x")
                for method: HTTPRequest.Method in [.put, .delete, .mkcol, .proppatch, .lock, .move, .copy] {
                    #expect(
                        try await client.request("/dav/f.txt", method, headers: [.destination: "/dav/g.txt"], body: "y")
                            .status == .forbidden)
                }
            }
            #expect(share.visibleTree() == ["f.txt"] && share.read("f.txt") == "x")
        }
    }

    @Test("properties are kept on disk: they survive a restart and follow MOVE, COPY and a rename outside the server")
    func deadProperties() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("f.txt", "content")
            try await share.test { (client: any TestClientProtocol) async throws in
                let set = try await client.request(
                    "/dav/f.txt", .proppatch, body: WebDAVRouterTests.setProperty("Win32FileAttributes", "00000020"))
                #expect(set.status.code == 207 && set.text.contains("200 OK"))
                // Replacing the content keeps them.
                #expect(try await client.request("/dav/f.txt", .put, body: "new content").status == .noContent)
                #expect(
                    try await client.request("/dav/f.txt", .move, headers: [.destination: "/dav/g.txt"]).status
                        == .created)
                #expect(
                    try await client.request("/dav/g.txt", .copy, headers: [.destination: "/dav/h.txt"]).status
                        == .created)
                let protected = try await client.request(
                    "/dav/h.txt", .proppatch,
                    body: """
                        <D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:getetag>x</D:getetag><D:other>y</D:other></D:prop></D:set></D:propertyupdate>
                        """)
                #expect(protected.text.contains("403 Forbidden") && protected.text.contains("424 Failed Dependency"))
            }
            try FileManager.default.moveItem(atPath: share.path("h.txt"), toPath: share.path("renamed.txt"))
            // A new server over the same folder.
            share.stop()
            let again = try ShareFixture(root: share.root)
            try await again.test { (client: any TestClientProtocol) async throws in
                for name in ["g.txt", "renamed.txt"] {
                    let got = try await client.request(
                        "/dav/\(name)", .propfind, headers: [.depth: "0"], body: WebDAVRouterTests.getProperty)
                    #expect(got.text.contains(">00000020</"), "\(name): \(got.text)")
                    #expect(!got.text.contains("D:other"))
                }
            }
        }
    }

    @Test("an empty PUT is held back until its content comes, and a LOCK on a new name until the lock ends")
    func heldBack() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/dav/finder.txt", .put, body: "").status == .created)
                #expect(share.read("finder.txt") == nil)
                let listed = try await client.request("/dav/", .propfind, headers: [.depth: "1"])
                #expect(listed.text.contains("/dav/finder.txt"))
                #expect(try await client.request("/dav/finder.txt").status == .ok)
                let locked = try await client.request("/dav/finder.txt", .lock, body: WebDAVRouterTests.lockBody)
                let token = try #require(locked.headers[.lockToken])
                #expect(try await client.request("/dav/finder.txt", .put, body: "no token").status.code == 423)
                #expect(try await client.request("/api/files/finder.txt", .put, body: "api").status.code == 423)
                #expect(
                    try await client.request("/dav/finder.txt", .put, headers: [.davIf: "(\(token))"], body: "content")
                        .status == .noContent)
                #expect(share.read("finder.txt") == "content")
                #expect(
                    try await client.request("/dav/finder.txt", .unlock, headers: [.lockToken: token]).status
                        == .noContent)

                let windows = try await client.request("/dav/windows.txt", .lock, body: WebDAVRouterTests.lockBody)
                #expect(windows.status == .created)
                let windowsToken = try #require(windows.headers[.lockToken])
                #expect(share.read("windows.txt") == nil)
                #expect(
                    try await client.request("/dav/windows.txt", .unlock, headers: [.lockToken: windowsToken]).status
                        == .noContent)
                #expect(share.read("windows.txt") == "")

                // An empty PUT nothing follows becomes an empty file once its grace is over.
                #expect(try await client.request("/dav/empty.txt", .put, body: "").status == .created)
                let deadline = ContinuousClock.now + .seconds(30)
                while share.read("empty.txt") == nil && ContinuousClock.now < deadline {
                    await share.server.webDAV.maintainWebDAVOnce()
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(share.read("empty.txt") == "")
            }
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("an empty file held back when the server stopped is put in place by the next start")
    func heldBackRecovered() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/dav/kept.txt", .put, body: "").status == .created)
            }
            #expect(share.read("kept.txt") == nil && share.stagingContent().count == 1)
            share.stop()
            let again = try ShareFixture(root: share.root)
            #expect(again.read("kept.txt") == "")
            #expect(again.stagingContent().isEmpty)
        }
    }

    @Test("COPY and MOVE of folders: Depth, Overwrite, statuses; the folder appears whole")
    func copyMove() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("A/one.txt", "1")
            try share.write("A/B/two.txt", "2")
            try share.write("Target/old.txt", "old")
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(
                    try await client.request("/dav/A/", .copy, headers: [.destination: "/dav/Copy/"]).status == .created
                )
                #expect(share.read("Copy/B/two.txt") == "2")
                #expect(
                    try await client.request("/dav/A/", .copy, headers: [.destination: "/dav/Shallow/", .depth: "0"])
                        .status == .created)
                #expect(share.visibleTree().filter { $0.hasPrefix("Shallow") } == ["Shallow"])
                #expect(
                    try await client.request(
                        "/dav/A/", .copy, headers: [.destination: "/dav/Target/", .overwrite: "F"]
                    ).status == .preconditionFailed)
                #expect(
                    try await client.request("/dav/A/", .move, headers: [.destination: "/dav/Target/"]).status
                        == .noContent)
                #expect(share.read("Target/B/two.txt") == "2" && share.read("Target/old.txt") == nil)
                #expect(
                    try await client.request("/dav/Target/", .move, headers: [.destination: "/dav/Target/inside/"])
                        .status == .forbidden)
                #expect(
                    try await client.request("/dav/Target/", .move, headers: [.destination: "/dav/Moved", .depth: "0"])
                        .status == .badRequest)
            }
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test(
        "Finder's ._ and .DS_Store files are kept apart: readable, lockable, movable through WebDAV, never in the folder or its listings"
    )
    func clientMetadata() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("Docs/a.txt", "a")
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(
                    try await client.request("/dav/.Spotlight-V100", .propfind, headers: [.depth: "0"]).status
                        == .notFound)
                #expect(
                    try await client.request("/dav/Docs/._a.txt", .propfind, headers: [.depth: "0"]).status == .notFound
                )
                #expect(try await client.request("/dav/Docs/._a.txt", .put, body: "finder info").status == .created)
                #expect(try await client.request("/dav/Docs/.DS_Store", .put, body: "store").status == .created)
                #expect(try await client.request("/dav/Nowhere/._a.txt", .put, body: "x").status == .conflict)
                #expect(try await client.request("/dav/Docs/._a.txt").text == "finder info")
                #expect(
                    try await client.request("/dav/Docs/._a.txt", .propfind, headers: [.depth: "0"]).status.code == 207)
                let listing = try await client.request("/dav/Docs/", .propfind, headers: [.depth: "1"])
                #expect(!listing.text.contains("._a.txt") && !listing.text.contains("DS_Store"))
                let locked = try await client.request("/dav/Docs/._a.txt", .lock, body: WebDAVRouterTests.lockBody)
                let token = try #require(locked.headers[.lockToken])
                #expect(try await client.request("/dav/Docs/._a.txt", .put, body: "other").status.code == 423)
                #expect(
                    try await client.request(
                        "/dav/Docs/._a.txt", .put, headers: [.davIf: "(\(token))"], body: "updated"
                    ).status == .noContent)
                #expect(
                    try await client.request("/dav/Docs/._a.txt", .unlock, headers: [.lockToken: token]).status
                        == .noContent)
                #expect(
                    try await client.request("/dav/Docs/._a.txt", .move, headers: [.destination: "/dav/Docs/._b.txt"])
                        .status == .created)
                #expect(try await client.request("/dav/Docs/._b.txt").text == "updated")
                #expect(
                    try await client.request("/dav/Docs/._b.txt", .move, headers: [.destination: "/dav/Docs/b.txt"])
                        .status == .forbidden)
                #expect(try await client.request("/dav/Docs/", .delete).status == .noContent)
                #expect(try await client.request("/dav/Docs/._b.txt").status == .notFound)
            }
            #expect(share.visibleTree().isEmpty)
            #expect(share.stagingContent().isEmpty)
            let mirror = try FileManager.default.contentsOfDirectory(atPath: share.root + "/.fileshare/dav-metadata")
            #expect(mirror.isEmpty, "\(mirror)")
        }
    }

    @Test("a large folder's PROPFIND is written in parts and is one well-formed answer listing every item")
    func largeFolder() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try FileManager.default.createDirectory(atPath: share.path("Big"), withIntermediateDirectories: true)
            for index in 0..<(WebDAVFace.propfindBatch * 2 + 77) {
                FileManager.default.createFile(
                    atPath: share.path("Big/file \(index).txt"), contents: Data("\(index)".utf8))
            }
            try await share.test { (client: any TestClientProtocol) async throws in
                let answer = try await client.request("/dav/Big/", .propfind, headers: [.depth: "1"])
                #expect(answer.status.code == 207)
                let parsed = try XMLDocumentParser.parse(Array(answer.text.utf8))
                #expect(parsed.isDAV("multistatus"))
                #expect(parsed.elements.count == WebDAVFace.propfindBatch * 2 + 78)
                let hrefs = Set(parsed.elements.compactMap { $0.child("href")?.text })
                #expect(hrefs.count == parsed.elements.count && hrefs.contains("/dav/Big/file%20100.txt"))
            }
        }
    }

    @Test("a lock outlives a restart of the server: still refused without its token, released with it")
    func locksSurviveRestart() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("doc.txt", "v1")
            let token = try await share.test { (client: any TestClientProtocol) async throws -> String in
                let locked = try await client.request("/dav/doc.txt", .lock, body: WebDAVRouterTests.lockBody)
                return try #require(locked.headers[.lockToken])
            }
            share.stop()
            let again = try ShareFixture(root: share.root)
            try await again.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/dav/doc.txt", .put, body: "v2").status.code == 423)
                let discovery = try await client.request("/dav/doc.txt", .propfind, headers: [.depth: "0"])
                #expect(
                    discovery.text.contains(String(token.dropFirst().dropLast()))
                        && discovery.text.contains("mailto:alice@example.com"))
                #expect(
                    try await client.request("/dav/doc.txt", .put, headers: [.davIf: "(\(token))"], body: "v2").status
                        == .noContent)
                #expect(
                    try await client.request("/dav/doc.txt", .unlock, headers: [.lockToken: token]).status == .noContent
                )
            }
            again.stop()
            let third = try ShareFixture(root: share.root)
            try await third.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/dav/doc.txt", .put, body: "v3").status == .noContent)
            }
            #expect(share.read("doc.txt") == "v3")
        }
    }
}
