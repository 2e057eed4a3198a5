import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// Lost updates: every write of the JSON API honours `If-Match`,
/// `If-None-Match` and `If-Unmodified-Since` (412, nothing changed, nothing
/// logged), and one resumable upload takes one request at a time.
@Suite("JSON API, preconditions")
struct PreconditionAPITests {
    static let ifMatch = HTTPField.Name.ifMatch
    static let ifNoneMatch = HTTPField.Name.ifNoneMatch
    static let ifUnmodifiedSince = HTTPField.Name.ifUnmodifiedSince
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!

    /// The `seq` of the newest change log record.
    static func latest(_ client: any TestClientProtocol) async throws -> Int {
        let records = try await client.request("/api/changes").json["changes"] as? [[String: Any]] ?? []
        return records.last?["seq"] as? Int ?? 0
    }

    /// The records after `since`.
    static func records(after since: Int, _ client: any TestClientProtocol) async throws -> [[String: Any]] {
        try await client.request("/api/changes?since=\(since)").json["changes"] as? [[String: Any]] ?? []
    }

    /// Expects a 412 with a JSON error, and that the change log gained no record for it.
    static func expectRefused(
        _ response: TestResponse, logSince since: Int, _ client: any TestClientProtocol,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(response.status == .preconditionFailed, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"] is String, sourceLocation: sourceLocation)
        #expect(
            try await records(after: since, client).isEmpty, "a refused change logged", sourceLocation: sourceLocation)
    }

    @Test(
        "PUT: a stale or weak If-Match, If-None-Match: * on a file, an old If-Unmodified-Since are 412 and change nothing"
    )
    func put() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/a.txt", .put, body: "mine").status == .created)
                let read = try await client.request("/api/files/a.txt")
                let tag = try #require(read.headers[.eTag])
                // Someone else saves it first.
                #expect(try await client.request("/api/files/a.txt", .put, body: "theirs").status == .ok)
                let since = try await Self.latest(client)
                try await Self.expectRefused(
                    try await client.request("/api/files/a.txt", .put, headers: [Self.ifMatch: tag], body: "lost?"),
                    logSince: since, client)
                #expect(share.read("a.txt") == "theirs")
                let current = try #require(try await client.request("/api/files/a.txt", .head).headers[.eTag])
                try await Self.expectRefused(
                    try await client.request(
                        "/api/files/a.txt", .put, headers: [Self.ifMatch: "W/" + current], body: "weak"),
                    logSince: since, client)
                try await Self.expectRefused(
                    try await client.request("/api/files/a.txt", .put, headers: [Self.ifNoneMatch: "*"], body: "new"),
                    logSince: since, client)
                try await Self.expectRefused(
                    try await client.request(
                        "/api/files/a.txt", .put, headers: [Self.ifUnmodifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT"],
                        body: "old"),
                    logSince: since, client)
                try await Self.expectRefused(
                    try await client.request("/api/files/gone.txt", .put, headers: [Self.ifMatch: "*"], body: "x"),
                    logSince: since, client)
                #expect(share.read("a.txt") == "theirs")
                #expect(share.visibleTree() == ["a.txt"])
                #expect(share.stagingContent().isEmpty)
                // The tags it hands out pass; one of several is enough.
                let replaced = try await client.request(
                    "/api/files/a.txt", .put, headers: [Self.ifMatch: "\"nope\", \(current)"], body: "edited")
                #expect(replaced.status == .ok)
                #expect(share.read("a.txt") == "edited")
                let records = try await Self.records(after: since, client)
                #expect(records.count == 1 && records.first?["type"] as? String == "modified", "\(records)")
                #expect(
                    try await client.request("/api/files/b.txt", .put, headers: [Self.ifNoneMatch: "*"], body: "b")
                        .status == .created)
                #expect(
                    try await client.request(
                        "/api/files/b.txt", .put, headers: [Self.ifUnmodifiedSince: "Fri, 01 Jan 2100 00:00:00 GMT"],
                        body: "b2"
                    ).status == .ok)
            }
        }
    }

    @Test("dates no clock can hold in If-Unmodified-Since and If-Modified-Since are ignored, as RFC 9110 says")
    func farDates() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("a.txt", "a")
            try await share.test { (client: any TestClientProtocol) async throws in
                let far = "Tue, 22 Aug 0209 00:35:49 GMT"
                #expect(
                    try await client.request("/api/files/a.txt", headers: [.ifModifiedSince: far]).status == .ok)
                #expect(
                    try await client.request(
                        "/api/files/a.txt", .put, headers: [Self.ifUnmodifiedSince: far], body: "b"
                    )
                    .status == .ok)
                #expect(share.read("a.txt") == "b")
            }
        }
    }

    @Test("the listing hands out each file's ETag, the download's, and If-Match takes it")
    func listedTags() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("docs/one.txt", "1")
            try share.write("docs/two.txt", "22")
            try FileManager.default.createDirectory(atPath: share.path("docs/sub"), withIntermediateDirectories: true)
            try await share.test { (client: any TestClientProtocol) async throws in
                let items = try await eventuallyItems(client, "docs", count: 3)
                for item in items {
                    let name = try #require(item["name"] as? String)
                    if item["kind"] as? String == "file" {
                        let download = try await client.request("/api/files/docs/\(name)", .head)
                        #expect(item["etag"] as? String == download.headers[.eTag], "\(name)")
                    } else {
                        #expect(item["etag"] == nil)
                    }
                }
                let one = try #require(items.first { $0["name"] as? String == "one.txt" }?["etag"] as? String)
                #expect(
                    try await client.request("/api/files/docs/one.txt", .put, headers: [Self.ifMatch: one], body: "1!")
                        .status == .ok)
                #expect(share.read("docs/one.txt") == "1!")
            }
        }
    }

    @Test("DELETE, mkdir and move: 412 on their conditions, nothing changed")
    func deleteMakeMove() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            // After the first scan: what it finds starts the log unnumbered,
            // so files it raced with would never be records.
            await share.server.observer.sync()
            try share.write("a.txt", "a")
            try share.write("b.txt", "b")
            try FileManager.default.createDirectory(atPath: share.path("folder"), withIntermediateDirectories: true)
            try await share.test { (client: any TestClientProtocol) async throws in
                // What was made on disk is in the change log, the files
                // finished too, before the refusals are counted.
                #expect(
                    await eventuallyTrue {
                        let finished = try await Self.records(after: 0, client).filter {
                            $0["type"] as? String == "finished"
                        }.compactMap { $0["path"] as? String }
                        return Set(finished).isSuperset(of: ["a.txt", "b.txt"])
                    })
                let a = try #require(try await client.request("/api/files/a.txt", .head).headers[.eTag])
                let b = try #require(try await client.request("/api/files/b.txt", .head).headers[.eTag])
                let since = try await Self.latest(client)
                try await Self.expectRefused(
                    try await client.request("/api/files/a.txt", .delete, headers: [Self.ifMatch: b]), logSince: since,
                    client)
                try await Self.expectRefused(
                    try await client.request("/api/files/missing.txt", .delete, headers: [Self.ifMatch: "*"]),
                    logSince: since, client)
                try await Self.expectRefused(
                    try await client.request(
                        "/api/mkdir", .post, headers: [Self.ifNoneMatch: "*"], body: #"{"path":"folder"}"#),
                    logSince: since, client)
                // If-Match is about the item moved; If-None-Match about the destination.
                try await Self.expectRefused(
                    try await client.request(
                        "/api/move", .post, headers: [Self.ifMatch: b],
                        body: #"{"from":"a.txt","to":"c.txt"}"#),
                    logSince: since, client)
                try await Self.expectRefused(
                    try await client.request(
                        "/api/move", .post, headers: [Self.ifMatch: a, Self.ifNoneMatch: "*"],
                        body: #"{"from":"a.txt","to":"b.txt","overwrite":true}"#),
                    logSince: since, client)
                #expect(share.visibleTree() == ["a.txt", "b.txt", "folder"])
                #expect(share.read("b.txt") == "b")
                #expect(
                    try await client.request(
                        "/api/move", .post, headers: [Self.ifMatch: a, Self.ifNoneMatch: "*"],
                        body: #"{"from":"a.txt","to":"c.txt"}"#
                    ).status == .ok)
                #expect(
                    try await client.request("/api/files/b.txt", .delete, headers: [Self.ifMatch: b]).status
                        == .noContent)
                #expect(
                    try await client.request(
                        "/api/mkdir", .post, headers: [Self.ifNoneMatch: "*"], body: #"{"path":"new"}"#
                    ).status == .created)
                #expect(share.visibleTree() == ["c.txt", "folder", "new"])
            }
        }
    }

    @Test("a resumable upload: its conditions are checked when it starts and again when its last chunk lands")
    func resumable() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("doc.txt", "version 1")
            try await share.test { (client: any TestClientProtocol) async throws in
                let first = try #require(try await client.request("/api/files/doc.txt", .head).headers[.eTag])
                #expect(
                    try await client.request(
                        "/api/uploads?path=doc.txt", .post, headers: [Self.uploadLength: "4", Self.ifMatch: "\"old\""]
                    ).status == .preconditionFailed)
                #expect(share.stagingContent().isEmpty, "no upload made")
                let start = try await client.request(
                    "/api/uploads?path=doc.txt", .post, headers: [Self.uploadLength: "10", Self.ifMatch: first])
                #expect(start.status == .created)
                let token = try #require(start.json["upload"] as? String)
                let created = try await client.request(
                    "/api/uploads?path=new.txt", .post, headers: [Self.uploadLength: "3", Self.ifNoneMatch: "*"])
                let createToken = try #require(created.json["upload"] as? String)
                #expect(
                    try await client.request(
                        "/api/uploads/\(token)", .patch, headers: [Self.uploadOffset: "0"], body: "mine "
                    )
                    .status == .noContent)
                // Meanwhile someone else saves both.
                #expect(try await client.request("/api/files/doc.txt", .put, body: "version 2").status == .ok)
                #expect(try await client.request("/api/files/new.txt", .put, body: "not mine").status == .created)
                let since = try await Self.latest(client)
                try await Self.expectRefused(
                    try await client.request(
                        "/api/uploads/\(token)", .patch, headers: [Self.uploadOffset: "5"], body: "edit!"),
                    logSince: since, client)
                try await Self.expectRefused(
                    try await client.request(
                        "/api/uploads/\(createToken)", .patch, headers: [Self.uploadOffset: "0"], body: "new"),
                    logSince: since, client)
                #expect(share.read("doc.txt") == "version 2")
                #expect(share.read("new.txt") == "not mine")
                // Such an upload is over: nothing of it is left.
                #expect(try await client.request("/api/uploads/\(token)", .head).status == .notFound)
                #expect(share.stagingContent().isEmpty)
                // With the tag of what is there now, it goes through.
                let second = try #require(try await client.request("/api/files/doc.txt", .head).headers[.eTag])
                let again = try await client.request(
                    "/api/uploads?path=doc.txt", .post, headers: [Self.uploadLength: "5", Self.ifMatch: second])
                let againToken = try #require(again.json["upload"] as? String)
                #expect(
                    try await client.request(
                        "/api/uploads/\(againToken)", .patch, headers: [Self.uploadOffset: "0"], body: "third"
                    ).status == .ok)
                #expect(share.read("doc.txt") == "third")
            }
        }
    }

    @Test("many clients replace one file with the ETag they read: exactly one wins, the others get 412")
    func oneWinner() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("shared.txt", "original")
            try await share.test(.live) { client in
                for round in 0..<5 {
                    let tag = try #require(try await client.request("/api/files/shared.txt", .head).headers[.eTag])
                    let statuses = try await withThrowingTaskGroup(of: (Int, HTTPResponse.Status).self) { group in
                        for writer in 0..<6 {
                            group.addTask {
                                let body = "round \(round) by \(writer) " + String(repeating: "x", count: 200_000)
                                let response = try await client.request(
                                    "/api/files/shared.txt", .put, headers: [Self.ifMatch: tag], body: body)
                                return (writer, response.status)
                            }
                        }
                        return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                    }
                    let winners = statuses.filter { $0.value == .ok }.map(\.key)
                    #expect(winners.count == 1, "round \(round): \(statuses)")
                    #expect(statuses.values.allSatisfy { $0 == .ok || $0 == .preconditionFailed })
                    if let winner = winners.first {
                        #expect(share.read("shared.txt")?.hasPrefix("round \(round) by \(winner) ") == true)
                    }
                }
            }
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test(
        "two clients send one resumable upload's chunk at once: the second gets 409, the upload ends with the right bytes"
    )
    func concurrentChunks() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let length = 3 << 20
            let content = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
            try await share.test(.live) { client in
                let start = try await client.request(
                    "/api/uploads?path=big.bin", .post, headers: [Self.uploadLength: String(length)])
                let token = try #require(start.json["upload"] as? String)
                // The first client sends 1 MiB of its chunk and stops: the server writes
                // those bytes (it writes in parts of 1 MiB) and waits for the rest.
                let first = try RawConnection(port: try #require(client.port))
                await first.send(
                    "PATCH /api/uploads/\(token) HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\n"
                        + "Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
                        + "Content-Length: \(length)\r\n\r\n")
                let part = 1 << 20
                await first.send(Array(content[..<part]))
                let staged = share.path(".fileshare/staging/resumable-\(token)")
                #expect(
                    await eventually {
                        (try? FileManager.default.attributesOfItem(atPath: staged)[.size] as? Int) == part
                    })
                // The second client continues from what the server shows: it must not write beside the first.
                let second = try await client.execute(
                    uri: "/api/uploads/\(token)", method: .patch,
                    headers: [
                        .authorization: ShareFixture.authorization, Self.uploadOffset: String(part),
                        .contentType: "application/offset+octet-stream",
                    ],
                    body: ByteBuffer(bytes: [UInt8](repeating: 0xEE, count: length - part)))
                #expect(second.status == .conflict, "\(String(buffer: second.body))")
                #expect(share.read("big.bin") == nil)
                await first.send(Array(content[part...]))
                let answer = await first.receive(until: "}")
                #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(80))")
            }
            let stored = try #require(FileManager.default.contents(atPath: share.path("big.bin")))
            #expect(stored.count == length)
            #expect(Array(stored) == content)
            #expect(share.stagingContent().isEmpty)
        }
    }
}

/// The listing of `path` once it shows `count` items (the observer may be a moment behind the disk).
func eventuallyItems(_ client: any TestClientProtocol, _ path: String, count: Int) async throws -> [[String: Any]] {
    for _ in 0..<1000 {
        let items = try await client.request("/api/list?path=\(path)").json["items"] as? [[String: Any]] ?? []
        if items.count == count { return items }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("the listing of '\(path)' never showed \(count) items")
    return []
}

/// Waits (up to ten seconds) for an asynchronous condition.
func eventuallyTrue(_ condition: () async throws -> Bool) async -> Bool {
    for _ in 0..<1000 {
        if (try? await condition()) == true { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return (try? await condition()) == true
}

extension PreconditionAPITests {
    @Test("PUT answers the stored file's ETag: the download's, and good for the next save's If-Match")
    func putAnswersEntityTag() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let made = try await client.request("/api/files/e.txt", .put, body: "one")
                #expect(made.status == .created)
                let tag = try #require(made.headers[.eTag])
                #expect(try await client.request("/api/files/e.txt").headers[.eTag] == tag)
                // The editor's next save, chained on the answer alone.
                let next = try await client.request(
                    "/api/files/e.txt", .put, headers: [Self.ifMatch: tag], body: "one, two")
                #expect(next.status == .ok)
                let nextTag = try #require(next.headers[.eTag])
                #expect(nextTag != tag)
                // Someone else writes: the chained tag is stale now.
                try share.write("e.txt", "theirs")
                let stale = try await client.request(
                    "/api/files/e.txt", .put, headers: [Self.ifMatch: nextTag], body: "lost?")
                #expect(stale.status == .preconditionFailed)
                #expect(share.read("e.txt") == "theirs")
            }
        }
    }
}
