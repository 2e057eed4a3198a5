import Accounts
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

/// Every face, every operation, for users with read, write, upload and no
/// rights on nested folders (``AccessFixture``), on a live server: each
/// answer's status, no hidden name in any answer, and the disk afterwards.
@Suite("Rights, the permission matrix")
struct AccessMatrixTests {
    struct Step: CustomStringConvertible {
        var user: String
        var method: String
        var uri: String
        var headers: [String: String] = [:]
        var body: String? = nil
        var status: Int

        var description: String { "\(user) \(method) \(uri)" }
    }

    /// What each user must never see in an answer (beyond what they asked about).
    static let hidden: [String: [String]] = [
        "reader": ["Secret", "code.txt", "Private", "diary", "Drop", "old.pdf", "2025", "q4"],
        "writer": ["Private", "diary", "Drop", "old.pdf", "Reports", "q1", "q4"],
        "dropper": ["old.pdf", "Team", "plan", "Private", "diary", "Reports"],
        "nobody": ["Team", "plan", "Private", "diary", "Drop", "old.pdf", "Reports"],
    ]

    static let propfind1 = ["Depth": "1"]
    static func destination(_ path: String) -> [String: String] { ["Destination": "http://localhost/dav/" + path] }
    static func tus(_ path: String) -> [String: String] {
        [
            "Tus-Resumable": "1.0.0", "Upload-Length": "3",
            "Upload-Metadata": "path " + Data(path.utf8).base64EncodedString(),
        ]
    }
    static let proppatch = """
        <?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:x"><D:set><D:prop>\
        <Z:color>red</Z:color></D:prop></D:set></D:propertyupdate>
        """
    static let lock = """
        <?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype></D:lockinfo>
        """

    static let steps: [Step] = [
        // reader: read on Team (not Team/Secret), read on Reports/2026.
        Step(user: "reader", method: "GET", uri: "/api/list?path=", status: 200),
        Step(user: "reader", method: "GET", uri: "/api/list?path=Team", status: 200),
        Step(user: "reader", method: "GET", uri: "/api/list?path=Reports", status: 200),
        Step(user: "reader", method: "GET", uri: "/api/list?path=Team/Secret", status: 404),
        Step(user: "reader", method: "GET", uri: "/api/list?path=Private", status: 404),
        Step(user: "reader", method: "GET", uri: "/api/files/Team/plan.txt", status: 200),
        Step(user: "reader", method: "HEAD", uri: "/api/files/Team/plan.txt", status: 200),
        Step(user: "reader", method: "GET", uri: "/api/files/Team/Secret/code.txt", status: 404),
        Step(user: "reader", method: "GET", uri: "/api/files/Private/diary.txt", status: 404),
        Step(user: "reader", method: "GET", uri: "/api/files/Reports/2025/q4.txt", status: 404),
        Step(user: "reader", method: "GET", uri: "/api/files/Reports/2026/q1.txt", status: 200),
        Step(user: "reader", method: "GET", uri: "/api/thumbnail/Private/diary.txt", status: 404),
        Step(user: "reader", method: "PUT", uri: "/api/files/Team/new.txt", body: "R", status: 403),
        Step(user: "reader", method: "PUT", uri: "/api/files/Private/new.txt", body: "R", status: 404),
        Step(user: "reader", method: "DELETE", uri: "/api/files/Team/plan.txt", status: 403),
        Step(user: "reader", method: "DELETE", uri: "/api/files/Private/diary.txt", status: 404),
        Step(user: "reader", method: "POST", uri: "/api/mkdir", body: #"{"path":"Team/x"}"#, status: 403),
        Step(
            user: "reader", method: "POST", uri: "/api/move", body: #"{"from":"Team/plan.txt","to":"Team/p2.txt"}"#,
            status: 403),
        Step(user: "reader", method: "GET", uri: "/api/zip?path=", status: 200),
        Step(user: "reader", method: "GET", uri: "/api/zip?path=Team", status: 200),
        Step(user: "reader", method: "GET", uri: "/api/zip?path=Private", status: 404),
        Step(
            user: "reader", method: "POST", uri: "/api/uploads?path=Team/u.txt", headers: ["Upload-Length": "3"],
            status: 403),
        Step(user: "reader", method: "POST", uri: "/api/tus/", headers: tus("Private/t.txt"), status: 404),
        Step(user: "reader", method: "POST", uri: "/api/tus/", headers: tus("Team/t.txt"), status: 403),
        Step(user: "reader", method: "PROPFIND", uri: "/dav/", headers: propfind1, status: 207),
        Step(user: "reader", method: "PROPFIND", uri: "/dav/Team/", headers: propfind1, status: 207),
        Step(user: "reader", method: "PROPFIND", uri: "/dav/Private/", headers: propfind1, status: 404),
        Step(user: "reader", method: "GET", uri: "/dav/Reports/", status: 200),
        Step(user: "reader", method: "GET", uri: "/dav/Team/plan.txt", status: 200),
        Step(user: "reader", method: "GET", uri: "/dav/Private/diary.txt", status: 404),
        Step(user: "reader", method: "PUT", uri: "/dav/Team/n.txt", body: "R", status: 403),
        Step(user: "reader", method: "DELETE", uri: "/dav/Team/plan.txt", status: 403),
        Step(user: "reader", method: "DELETE", uri: "/dav/Team/Secret/code.txt", status: 404),
        Step(user: "reader", method: "MKCOL", uri: "/dav/Team/m", status: 403),
        Step(
            user: "reader", method: "MOVE", uri: "/dav/Team/plan.txt", headers: destination("Team/z.txt"), status: 403),
        Step(
            user: "reader", method: "COPY", uri: "/dav/Team/plan.txt", headers: destination("Private/z.txt"),
            status: 404),
        Step(
            user: "reader", method: "COPY", uri: "/dav/Team/plan.txt", headers: destination("Team/z.txt"), status: 403),
        Step(user: "reader", method: "PROPPATCH", uri: "/dav/Team/plan.txt", body: proppatch, status: 403),
        Step(user: "reader", method: "LOCK", uri: "/dav/Team/plan.txt", body: lock, status: 403),
        Step(user: "reader", method: "LOCK", uri: "/dav/Private/diary.txt", body: lock, status: 404),
        // writer: write on Team (Secret included).
        Step(user: "writer", method: "PUT", uri: "/api/files/Team/w.txt", body: "W", status: 201),
        Step(user: "writer", method: "PUT", uri: "/api/files/Team/plan.txt", body: "replaced", status: 200),
        Step(user: "writer", method: "PUT", uri: "/api/files/Reports/x.txt", body: "W", status: 404),
        Step(user: "writer", method: "DELETE", uri: "/api/files/Private/diary.txt", status: 404),
        Step(user: "writer", method: "POST", uri: "/api/mkdir", body: #"{"path":"Team/newdir"}"#, status: 201),
        Step(
            user: "writer", method: "POST", uri: "/api/move", body: #"{"from":"Team/w.txt","to":"Private/w.txt"}"#,
            status: 404),
        Step(
            user: "writer", method: "POST", uri: "/api/move", body: #"{"from":"Team/w.txt","to":"Team/w2.txt"}"#,
            status: 200),
        Step(
            user: "writer", method: "COPY", uri: "/dav/Team/Secret/code.txt", headers: destination("Team/copy.txt"),
            status: 201),
        Step(
            user: "writer", method: "MOVE", uri: "/dav/Private/diary.txt", headers: destination("Team/diary.txt"),
            status: 404),
        Step(user: "writer", method: "PROPPATCH", uri: "/dav/Team/plan.txt", body: proppatch, status: 207),
        Step(user: "writer", method: "PROPFIND", uri: "/dav/", headers: propfind1, status: 207),
        Step(user: "writer", method: "GET", uri: "/api/zip?path=", status: 200),
        // dropper: upload on Drop.
        Step(user: "dropper", method: "GET", uri: "/api/list?path=", status: 200),
        Step(user: "dropper", method: "GET", uri: "/api/list?path=Drop", status: 200),
        Step(user: "dropper", method: "GET", uri: "/api/list?path=Drop/nothing", status: 404),
        Step(user: "dropper", method: "GET", uri: "/api/zip?path=Drop/nothing", status: 404),
        Step(user: "dropper", method: "GET", uri: "/api/files/Drop/old.pdf", status: 404),
        Step(user: "dropper", method: "GET", uri: "/api/thumbnail/Drop/old.pdf", status: 404),
        Step(user: "dropper", method: "PUT", uri: "/api/files/Drop/new.txt", body: "D", status: 201),
        Step(user: "dropper", method: "PUT", uri: "/api/files/Drop/new.txt", body: "again", status: 409),
        Step(user: "dropper", method: "PUT", uri: "/api/files/Drop/old.pdf", body: "D", status: 409),
        Step(user: "dropper", method: "DELETE", uri: "/api/files/Drop/old.pdf", status: 403),
        Step(user: "dropper", method: "DELETE", uri: "/api/files/Drop/nothing.pdf", status: 403),
        Step(user: "dropper", method: "POST", uri: "/api/mkdir", body: #"{"path":"Drop/d"}"#, status: 403),
        Step(
            user: "dropper", method: "POST", uri: "/api/move", body: #"{"from":"Drop/new.txt","to":"Drop/n2.txt"}"#,
            status: 403),
        Step(user: "dropper", method: "GET", uri: "/api/zip?path=Drop", status: 200),
        Step(
            user: "dropper", method: "POST", uri: "/api/uploads?path=Drop/old.pdf", headers: ["Upload-Length": "3"],
            status: 409),
        Step(
            user: "dropper", method: "POST", uri: "/api/uploads?path=Drop/r.txt", headers: ["Upload-Length": "3"],
            status: 201),
        Step(user: "dropper", method: "POST", uri: "/api/tus/", headers: tus("Drop/t.txt"), status: 201),
        Step(user: "dropper", method: "PROPFIND", uri: "/dav/Drop/", headers: propfind1, status: 207),
        Step(user: "dropper", method: "PROPFIND", uri: "/dav/Drop/old.pdf", headers: propfind1, status: 404),
        Step(user: "dropper", method: "GET", uri: "/dav/Drop/old.pdf", status: 404),
        Step(user: "dropper", method: "PUT", uri: "/dav/Drop/dav.txt", body: "D", status: 201),
        Step(user: "dropper", method: "PUT", uri: "/dav/Drop/old.pdf", body: "D", status: 409),
        Step(user: "dropper", method: "GET", uri: "/api/files/Team/plan.txt", status: 404),
        // nobody: no rule at all.
        Step(user: "nobody", method: "GET", uri: "/api/list?path=", status: 200),
        Step(user: "nobody", method: "GET", uri: "/api/list?path=Team", status: 404),
        Step(user: "nobody", method: "GET", uri: "/api/files/Team/plan.txt", status: 404),
        Step(user: "nobody", method: "PUT", uri: "/api/files/Team/x.txt", body: "N", status: 404),
        Step(user: "nobody", method: "PUT", uri: "/api/files/x.txt", body: "N", status: 404),
        Step(user: "nobody", method: "DELETE", uri: "/api/files/Team/plan.txt", status: 404),
        Step(user: "nobody", method: "GET", uri: "/api/zip?path=", status: 200),
        Step(user: "nobody", method: "PROPFIND", uri: "/dav/", headers: propfind1, status: 207),
        Step(user: "nobody", method: "PROPFIND", uri: "/dav/Team/", headers: propfind1, status: 404),
        Step(user: "nobody", method: "DELETE", uri: "/dav/Team/plan.txt", status: 404),
        Step(user: "nobody", method: "MOVE", uri: "/dav/Team/plan.txt", headers: destination("p.txt"), status: 404),
    ]

    @Test("every face answers each user as their rights say, leaks nothing, and changes only what is allowed")
    func matrix() async throws {
        let folder = try TemporaryFolder()
        let usersFile = folder("users.json")
        try UsersFile.write(try AccessFixture.directory(), to: usersFile)
        let share = try ShareFixture(credentials: false, users: usersFile)
        let files = [
            "Team/plan.txt": "plan", "Team/Secret/code.txt": "code", "Private/diary.txt": "diary",
            "Drop/old.pdf": "old", "Reports/2026/q1.txt": "q1", "Reports/2025/q4.txt": "q4",
        ]
        for (path, content) in files { try share.write(path, content) }
        try await share.test(.live) { client in
            // Each user's answers, for the checks after.
            #expect(
                await eventuallyTrue {
                    try await Self.send(client, "admin", "GET", "/api/list?path=Team").text.contains("plan.txt")
                })
            for step in Self.steps {
                let response = try await Self.send(client, step.user, step.method, step.uri, step.headers, step.body)
                #expect(Int(response.status.code) == step.status, "\(step): \(response.text)")
                // What the request names itself may come back (in an error); nothing else hidden may.
                let tusPath = step.headers["Upload-Metadata"].flatMap { Data(base64Encoded: String($0.dropFirst(5))) }
                let asked =
                    step.uri + (step.body ?? "") + step.headers.values.joined()
                    + String(decoding: tusPath ?? Data(), as: UTF8.self)
                for name in Self.hidden[step.user, default: []] where !asked.contains(name) {
                    #expect(!response.text.contains(name), "\(step) shows '\(name)': \(response.text)")
                }
            }
            // Listings show what is there for the user, and only that.
            let root = try await Self.send(client, "reader", "GET", "/api/list?path=").text
            #expect(root.contains("\"Team\"") && root.contains("\"Reports\""), "\(root)")
            #expect(root.contains(#""access":"none""#))
            let team = try await Self.send(client, "reader", "GET", "/api/list?path=Team").text
            #expect(team.contains(#""access":"read""#) && team.contains("plan.txt"), "\(team)")
            let drop = try await Self.send(client, "dropper", "GET", "/api/list?path=").text
            #expect(drop.contains("\"Drop\""), "\(drop)")
            let dropBox = try await Self.send(client, "dropper", "GET", "/api/list?path=Drop").text
            #expect(dropBox == #"{"path":"Drop","access":"upload","items":[]}"#)
            let zip = try await Self.send(client, "reader", "GET", "/api/zip?path=").text
            #expect(zip.contains("Team/plan.txt") && zip.contains("Reports/2026/q1.txt"))

            // A move out of what reader sees, and one into it, as reader's changes tell them.
            try FileManager.default.moveItem(
                atPath: share.path("Private/diary.txt"), toPath: share.path("Team/moved-in.txt"))
            try FileManager.default.moveItem(atPath: share.path("Team/w2.txt"), toPath: share.path("Private/w2.txt"))
            #expect(
                await eventuallyTrue {
                    try await Self.send(client, "admin", "GET", "/api/changes?since=0").text.contains("Private/w2.txt")
                })
            let changes = try await Self.send(client, "reader", "GET", "/api/changes?since=0").text
            #expect(changes.contains(#""type":"added","path":"Team/moved-in.txt""#), "\(changes)")
            #expect(changes.contains(#""type":"removed","path":"Team/w2.txt""#), "\(changes)")
            #expect(!changes.contains("Private"), "\(changes)")
            // The event stream, from the start, as reader: the same records.
            let stream = try RawConnection(port: try #require(client.port))
            let reader = "Basic " + Data("reader:reader-pw".utf8).base64EncodedString()
            await stream.send("GET /api/events?since=0 HTTP/1.1\r\nHost: x\r\nAuthorization: \(reader)\r\n\r\n")
            let events = await stream.receive(until: #""type":"removed","path":"Team/w2.txt""#)
            stream.disconnect()
            #expect(events.contains(#""type":"added","path":"Team/moved-in.txt""#), "\(events)")
            #expect(events.contains(#""type":"removed","path":"Team/w2.txt""#), "\(events)")
            // (Names of digits alone could match an id or a time by chance.)
            for name in Self.hidden["reader", default: []] where name.contains(where: \.isLetter) {
                #expect(!events.contains(name), "events show \(name)")
            }
            #expect(
                try await Self.send(client, "reader", "GET", "/api/info", authorization: "reader:wrong").status
                    == .unauthorized)
        }
        // On disk: what was allowed happened, nothing else did.
        #expect(share.read("Team/plan.txt") == "replaced")
        #expect(share.read("Team/Secret/code.txt") == "code")
        #expect(share.read("Team/copy.txt") == "code")
        #expect(share.read("Team/moved-in.txt") == "diary")
        #expect(share.read("Drop/old.pdf") == "old")
        #expect(share.read("Drop/new.txt") == "D")
        #expect(share.read("Drop/dav.txt") == "D")
        #expect(share.read("Reports/2025/q4.txt") == "q4")
        #expect(share.read("Private/w2.txt") == "W")
        let absent = [
            "Team/new.txt", "Private/new.txt", "Team/x", "Team/p2.txt", "Team/u.txt", "Team/t.txt", "Private/t.txt",
            "Team/n.txt", "Team/m", "Team/z.txt", "Private/z.txt", "Reports/x.txt", "Private/w.txt", "Team/diary.txt",
            "Drop/d", "Drop/n2.txt", "Team/x.txt", "x.txt", "p.txt",
        ]
        for path in absent { #expect(!FileManager.default.fileExists(atPath: share.path(path)), "\(path)") }
        withExtendedLifetime(folder) {}
    }

    static func send(
        _ client: any TestClientProtocol, _ user: String, _ method: String, _ uri: String,
        _ headers: [String: String] = [:], _ body: String? = nil, authorization: String? = nil
    ) async throws -> TestResponse {
        var fields = HTTPFields()
        let credentials = authorization ?? "\(user):\(user)-pw"
        fields[.authorization] = "Basic " + Data(credentials.utf8).base64EncodedString()
        for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
        return try await client.execute(
            uri: uri, method: HTTPRequest.Method(method)!, headers: fields, body: body.map { ByteBuffer(string: $0) })
    }
}
