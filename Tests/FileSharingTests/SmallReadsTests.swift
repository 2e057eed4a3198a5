import Accounts
import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

/// The event loop's own answers to small reads (`SmallReads`) are the
/// router's answers: the same requests, sent to one folder served first
/// with them and then without, get the same statuses, fields and bytes,
/// and leave the same audit.
@Suite("Small reads on the event loop", .serialized, .timeLimit(.minutes(10)))
struct SmallReadsTests {
    /// A request: its target, method and fields.
    struct Sent: Sendable {
        var uri: String
        var method: HTTPRequest.Method = .get
        var headers: HTTPFields = [:]
    }

    /// Each answer as text: status, every field but `Date`, and the body.
    static func answers(_ sent: [Sent], _ client: any TestClientProtocol) async throws -> [String] {
        var answers: [String] = []
        for request in sent {
            let response = try await client.execute(
                uri: request.uri, method: request.method, headers: request.headers, body: nil)
            let fields = response.headers.filter { $0.name != .date }.map(\.description).joined(separator: "|")
            answers.append(
                "\(request.method) \(request.uri) → \(response.status.code) \(fields) "
                    + String(decoding: response.body.readableBytesView, as: UTF8.self))
        }
        return answers
    }

    /// The audit's downloads and sign-ins, without their times.
    static func audit(_ share: ShareFixture) async -> [String] {
        await share.server.audit.flush()
        return AuditReader.read(folder: AuditReader.folder(forSharedFolder: share.root)).map {
            "\($0.action) \($0.who) \($0.path ?? "-") \($0.outcome)"
        }
    }

    /// Serves one folder with and without small reads on the event loop,
    /// sends `requests(etag)` to each, and compares.
    func compare(
        credentials: Bool, users: String? = nil, files: [String: String],
        requests: @escaping @Sendable (String) -> [Sent]
    ) async throws {
        var results: [(answers: [String], audit: [String], counted: [String], onLoop: Int)] = []
        var root: String? = nil
        var kept: [ShareFixture] = []
        for smallReads in [true, false] {
            let share = try ShareFixture(credentials: credentials, root: root, users: users, smallReads: smallReads)
            kept.append(share)
            if root == nil {
                for (path, text) in files { try share.write(path, text) }
                root = share.root
            }
            let answers = try await share.test(.live) { client in
                // The file's validator, as a client learns it (a HEAD, the same either way).
                var headers: HTTPFields = [:]
                if credentials { headers[.authorization] = ShareFixture.authorization }
                if users != nil {
                    headers[.authorization] = "Basic " + Data("reader:reader-pw".utf8).base64EncodedString()
                }
                let etag =
                    try await client.execute(uri: "/api/files/Team/s.txt", method: .head, headers: headers, body: nil)
                    .headers[.eTag] ?? "none"
                return try await Self.answers(requests(etag), client)
            }
            // Each request counted by face, method and status (the latencies differ, of course).
            let counted = String(decoding: share.server.metrics.render(), as: UTF8.self)
                .split(separator: "\n").filter { $0.hasPrefix("fileshare_http_requests_total{") }.map(String.init)
                .sorted()
            results.append((answers, await Self.audit(share), counted, share.server.smallReadTally.value))
            share.stop()
        }
        #expect(results[0].answers.count == results[1].answers.count)
        for (fast, routed) in zip(results[0].answers, results[1].answers) {
            #expect(fast == routed)
        }
        // The second server's audit holds the first's too (one folder): its half must equal the first.
        let first = results[0].audit
        #expect(Array(results[1].audit.prefix(first.count)) == first)
        #expect(Array(results[1].audit.dropFirst(first.count)) == first)
        // The first server answered most on its event loops, the second none.
        #expect(results[0].onLoop >= 10, "\(results[0].onLoop) answered on the event loop")
        #expect(results[1].onLoop == 0)
        // A failed download is recorded with the status the client saw (a 404 is not a 500).
        #expect(!first.isEmpty && !first.contains { $0.hasSuffix(" 500") }, "\(first)")
        #expect(!results[0].counted.isEmpty)
        #expect(results[0].counted == results[1].counted)
        withExtendedLifetime(kept) {}
    }

    static let files = [
        "Team/s.txt": String(repeating: "small text ", count: 300),
        "Team/a b.txt": "spaced",
        "Team/empty.txt": "",
        "Team/page.html": "<script>alert(1)</script>",
        "Team/Secret/code.txt": "hidden from the reader",
        "Private/diary.txt": "not for the reader",
        "Team/big.bin": String(repeating: "x", count: 300_000),
    ]

    static func basicRequests(_ auth: String) -> @Sendable (String) -> [Sent] {
        { etag in
            let with: HTTPFields = [.authorization: auth]
            func fields(_ extra: HTTPFields) -> HTTPFields {
                var fields = with
                for field in extra { fields.append(field) }
                return fields
            }
            return [
                Sent(uri: "/api/files/Team/s.txt", headers: with),
                Sent(uri: "/api/files/Team/s.txt", method: .head, headers: with),
                Sent(uri: "/api/files/Team/s.txt", headers: fields([.ifNoneMatch: etag])),
                Sent(uri: "/api/files/Team/s.txt", headers: fields([.ifNoneMatch: "W/" + etag])),
                Sent(uri: "/api/files/Team/s.txt", headers: fields([.ifNoneMatch: "\"other\""])),
                Sent(
                    uri: "/api/files/Team/s.txt", headers: fields([.ifModifiedSince: "Sun, 06 Nov 2050 08:49:37 GMT"])),
                Sent(uri: "/api/files/Team/s.txt", headers: fields([.range: "bytes=10-19"])),
                Sent(uri: "/api/files/Team/s.txt", headers: fields([.range: "bytes=-5"])),
                Sent(uri: "/api/files/Team/s.txt", headers: fields([.range: "bytes=99999-"])),
                Sent(uri: "/api/files/Team/s.txt", headers: fields([.range: "bytes=10-19", .ifRange: "\"old\""])),
                Sent(uri: "/api/files/Team/s.txt?download", headers: with),
                Sent(uri: "/api/files/Team/a%20b.txt", headers: with),
                Sent(uri: "/api/files/Team/empty.txt", headers: with),
                Sent(uri: "/api/files/Team/page.html", headers: with),
                Sent(uri: "/api/files/Team/big.bin", method: .head, headers: with),
                Sent(uri: "/api/files/Team", headers: with),
                Sent(uri: "/api/files/Team/missing.txt", headers: with),
                Sent(uri: "/api/files/.fileshare/audit/audit.jsonl", headers: with),
                Sent(uri: "/api/files/Team/../Private/diary.txt", headers: with),
                Sent(uri: "/api/files/Team%2fs.txt", headers: with),
                Sent(uri: "/api/files/Team/Secret/code.txt", headers: with),
                Sent(uri: "/api/files/Private/diary.txt", headers: with),
                Sent(uri: "/api/files/Team/s.txt"),
                Sent(
                    uri: "/api/files/Team/s.txt",
                    headers: [.authorization: "Basic " + Data("x:y".utf8).base64EncodedString()]),
                Sent(uri: "/dav/Team/s.txt", headers: with),
                Sent(uri: "/dav/Team/s.txt", method: .head, headers: with),
                Sent(uri: "/dav/Team/s.txt", headers: fields([.ifNoneMatch: etag])),
                Sent(uri: "/dav/Team/._s.txt", headers: with),
                Sent(uri: "/dav/Team/missing.txt", headers: with),
                Sent(uri: "/dav/Private/diary.txt", headers: with),
                Sent(uri: "/dav/.fileshare/audit/audit.jsonl", headers: with),
            ]
        }
    }

    @Test("with the share's one user (Basic)")
    func basic() async throws {
        try await MachineSettings.shared {
            try await compare(
                credentials: true, files: Self.files, requests: Self.basicRequests(ShareFixture.authorization))
        }
    }

    @Test("with a users file: rights per folder, a password verified a moment ago, a wrong one")
    func users() async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let usersFile = folder("users.json")
            try UsersFile.write(try AccessFixture.directory(), to: usersFile)
            let reader = "Basic " + Data("reader:reader-pw".utf8).base64EncodedString()
            let wrong = "Basic " + Data("reader:wrong".utf8).base64EncodedString()
            let requests = Self.basicRequests(reader)
            try await compare(credentials: false, users: usersFile, files: Self.files) { etag in
                requests(etag) + [
                    Sent(uri: "/api/files/Team/s.txt", headers: [.authorization: wrong]),
                    Sent(uri: "/dav/Team/Secret/code.txt", headers: [.authorization: reader]),
                    Sent(
                        uri: "/api/files/Team/s.txt",
                        headers: [.authorization: "Basic " + Data("admin:admin-pw".utf8).base64EncodedString()]),
                    Sent(
                        uri: "/api/files/Private/diary.txt",
                        headers: [.authorization: "Basic " + Data("admin:admin-pw".utf8).base64EncodedString()]),
                ]
            }
        }
    }

    @Test("without credentials (--no-auth)")
    func open() async throws {
        try await MachineSettings.shared {
            try await compare(credentials: false, files: Self.files, requests: Self.basicRequests("Basic Og=="))
        }
    }
}
