import DocumentTypes
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// tus 1.0 at `/api/tus/` (core, creation, creation-with-upload,
/// termination), request by request; Tests/Clients/tus_client.py drives it
/// with a real tus client (FileshareCLITests).
@Suite("tus 1.0 resumable uploads")
struct TusTests {
    static let tus: HTTPFields = [.init("Tus-Resumable")!: "1.0.0"]
    static let offset = HTTPField.Name("Upload-Offset")!
    static let length = HTTPField.Name("Upload-Length")!
    static let metadata = HTTPField.Name("Upload-Metadata")!

    static func headers(_ fields: [HTTPField.Name: String]) -> HTTPFields {
        var headers = tus
        for (name, value) in fields { headers[name] = value }
        return headers
    }

    static func meta(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
    }

    static let chunk: [HTTPField.Name: String] = [.contentType: "application/offset+octet-stream"]

    @Test("OPTIONS tells the version, extensions and size limit; another Tus-Resumable is 412, none 400")
    func discovery() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(maxUpload: 1000)
            try await share.test { (client: any TestClientProtocol) async throws in
                let options = try await client.request("/api/tus/", .options)
                #expect(options.status == .noContent)
                #expect(options.headers[.init("Tus-Version")!] == "1.0.0")
                #expect(
                    options.headers[.init("Tus-Extension")!] == "creation,creation-with-upload,termination,expiration")
                #expect(options.headers[.init("Tus-Max-Size")!] == "1000")
                let old = try await client.request(
                    "/api/tus/", .post,
                    headers: [
                        .init("Tus-Resumable")!: "0.2.2", Self.length: "3", Self.metadata: Self.meta([("path", "a")]),
                    ])
                #expect(old.status == .preconditionFailed)
                #expect(old.headers[.init("Tus-Version")!] == "1.0.0")
                #expect(old.headers[.init("Tus-Resumable")!] == "1.0.0")
                let none = try await client.request("/api/tus/", .post, headers: [Self.length: "3"])
                #expect(none.status == .badRequest)
                let large = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers([Self.length: "1001", Self.metadata: Self.meta([("path", "a")])]))
                #expect(large.status == .contentTooLarge)
                let anonymous = try await client.request("/api/tus/", .options, authorized: false)
                #expect(anonymous.status == .unauthorized)
            }
            #expect(share.visibleTree().isEmpty && share.stagingContent().isEmpty)
        }
    }

    @Test("create, HEAD, PATCH in parts: 415 for another body type, 409 with the server's offset, in place at the end")
    func upload() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let created = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers([
                        Self.length: "10", Self.metadata: Self.meta([("path", "Scans/ü.bin"), ("filetype", "x")]),
                    ]))
                #expect(created.status == .created, "\(created.text)")
                let location = try #require(created.headers[.location])
                #expect(location.hasPrefix("/api/tus/") && location.count == "/api/tus/".count + 32)
                #expect(created.headers[Self.offset] == "0")
                let head = try await client.request(location, .head, headers: Self.tus)
                #expect(head.status == .ok)
                #expect(head.headers[Self.offset] == "0" && head.headers[Self.length] == "10")
                #expect(head.headers[.cacheControl] == "no-store")
                let plain = try await client.request(
                    location, .patch, headers: Self.headers([Self.offset: "0", .contentType: "text/plain"]),
                    body: "01234")
                #expect(plain.status == .unsupportedMediaType)
                let first = try await client.request(
                    location, .patch, headers: Self.headers(Self.chunk.merging([Self.offset: "0"]) { $1 }),
                    body: "01234")
                #expect(first.status == .noContent && first.headers[Self.offset] == "5")
                #expect(first.headers[.init("Tus-Resumable")!] == "1.0.0")
                #expect(share.visibleTree().isEmpty, "nothing visible before the last byte")
                let wrong = try await client.request(
                    location, .patch, headers: Self.headers(Self.chunk.merging([Self.offset: "3"]) { $1 }),
                    body: "34")
                #expect(wrong.status == .conflict && wrong.headers[Self.offset] == "5")
                let overlong = try await client.request(
                    location, .patch, headers: Self.headers(Self.chunk.merging([Self.offset: "5"]) { $1 }),
                    body: "567890")
                #expect(overlong.status == .contentTooLarge)
                let last = try await client.request(
                    location, .patch, headers: Self.headers(Self.chunk.merging([Self.offset: "5"]) { $1 }),
                    body: "56789")
                #expect(last.status == .noContent && last.headers[Self.offset] == "10")
                #expect(share.read("Scans/ü.bin") == "0123456789")
                #expect(try await client.request(location, .head, headers: Self.tus).status == .notFound)
            }
            #expect(share.stagingContent().isEmpty)
            let added = share.printed.all.first { $0.contains(#""path":"Scans/ü.bin""#) } ?? ""
            #expect(added.contains(#""face":"tus""#) && added.contains(#""method":"PATCH""#), "\(share.printed.all)")
        }
    }

    @Test("creation-with-upload, an empty file, termination; bad metadata and lengths are 400")
    func creation() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let whole = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers(
                        Self.chunk.merging([Self.length: "5", Self.metadata: Self.meta([("filename", "hello.txt")])]) {
                            $1
                        }),
                    body: "hello")
                #expect(whole.status == .created && whole.headers[Self.offset] == "5")
                #expect(share.read("hello.txt") == "hello")
                let empty = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers([Self.length: "0", Self.metadata: Self.meta([("path", "e.txt")])]))
                #expect(empty.status == .created && empty.headers[Self.offset] == "0")
                #expect(share.read("e.txt") == "")
                let kept = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers([Self.length: "4", Self.metadata: Self.meta([("path", "k.bin")])]))
                let location = try #require(kept.headers[.location])
                _ = try await client.request(
                    location, .patch, headers: Self.headers(Self.chunk.merging([Self.offset: "0"]) { $1 }), body: "ab")
                let ended = try await client.request(location, .delete, headers: Self.tus)
                #expect(ended.status == .noContent && ended.headers[.init("Tus-Resumable")!] == "1.0.0")
                #expect(try await client.request(location, .head, headers: Self.tus).status == .notFound)
                #expect(try await client.request(location, .delete, headers: Self.tus).status == .notFound)
                for (fields, reason) in [
                    ([Self.length: "3"], "no path"),
                    ([Self.length: "3", Self.metadata: "path !!!"], "not base64"),
                    ([Self.length: "3", Self.metadata: Self.meta([("path", "../x")])], "outside"),
                    ([Self.length: "-1", Self.metadata: Self.meta([("path", "x")])], "negative length"),
                    ([Self.metadata: Self.meta([("path", "x")])], "no length"),
                    (
                        [.init("Upload-Defer-Length")!: "1", Self.metadata: Self.meta([("path", "x")])],
                        "deferred length"
                    ),
                ] {
                    let refused = try await client.request("/api/tus/", .post, headers: Self.headers(fields))
                    #expect(refused.status == .badRequest, "\(reason): \(refused.status) \(refused.text)")
                    #expect(refused.json["error"] is String, "\(reason): a reason is given")
                }
                #expect(try await client.request("/api/tus/not-a-token", .head, headers: Self.tus).status == .notFound)
            }
            #expect(share.visibleTree() == ["e.txt", "hello.txt"])
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("a refused type ends the upload with 415; a WebDAV lock on the target is 423")
    func refusals() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try AcceptedUploadTests.accepting(["com.adobe.pdf"]))
            try await share.test { (client: any TestClientProtocol) async throws in
                let text = String(repeating: "plain text, not a PDF. ", count: 200)
                let created = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers([
                        Self.length: String(text.utf8.count), Self.metadata: Self.meta([("path", "a.pdf")]),
                    ]))
                let location = try #require(created.headers[.location])
                let refused = try await client.request(
                    location, .patch, headers: Self.headers(Self.chunk.merging([Self.offset: "0"]) { $1 }), body: text)
                #expect(refused.status == .unsupportedMediaType, "\(refused.text)")
                #expect(try await client.request(location, .head, headers: Self.tus).status == .notFound)
                let lock = try await client.request(
                    "/dav/locked.pdf", .init("LOCK")!, headers: [.init("Timeout")!: "Second-60"],
                    body:
                        #"<?xml version="1.0"?><lockinfo xmlns="DAV:"><lockscope><exclusive/></lockscope><locktype><write/></locktype></lockinfo>"#
                )
                #expect(lock.status == .created || lock.status == .ok, "\(lock.text)")
                let locked = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers([Self.length: "4", Self.metadata: Self.meta([("path", "locked.pdf")])]))
                #expect(locked.status.code == 423)
            }
            #expect(share.stagingContent().filter { !$0.hasPrefix("dav-empty-") }.isEmpty)
        }
    }

    @Test("two PATCH requests for one upload at once: the second gets 409, the upload ends with the right bytes")
    func concurrentPatches() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test(.live) { client in
                let port = try #require(client.port)
                let created = try await client.request(
                    "/api/tus/", .post,
                    headers: Self.headers([Self.length: "10", Self.metadata: Self.meta([("path", "c.txt")])]))
                let location = try #require(created.headers[.location])
                // The first request sends half its body and waits.
                let slow = try RawConnection(port: port)
                await slow.send(
                    "PATCH \(location) HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\n"
                        + "Tus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n"
                        + "Content-Length: 10\r\n\r\n01234")
                let token = String(location.dropFirst("/api/tus/".count))
                #expect(await eventually { share.server.core.uploads.isBeingWritten(token) })
                // Meanwhile another at the same offset is refused, and writes nothing.
                var second = try await client.request(
                    location, .patch, headers: Self.headers(Self.chunk.merging([Self.offset: "0"]) { $1 }),
                    body: "abcdefghij")
                #expect(second.status == .conflict, "\(second.status) \(second.text)")
                await slow.send("56789")
                let answer = await slow.receive(until: "\r\n\r\n")
                #expect(answer.hasPrefix("HTTP/1.1 204"), "\(answer)")
                #expect(answer.contains("Upload-Offset: 10") || answer.contains("upload-offset: 10"), "\(answer)")
                #expect(await eventually { share.read("c.txt") == "0123456789" })
                second = try await client.request(location, .head, headers: Self.tus)
                #expect(second.status == .notFound)
            }
        }
    }
}
