import DocumentTypes
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

/// Uploads limited to accepted types, through the router: the JSON API,
/// resumable uploads and WebDAV; and the policy that decides on a prefix.
@Suite("Uploads of accepted types")
struct AcceptedUploadTests {
    // MARK: Content

    /// A PNG image of one pixel: the signature and its header chunk.
    static let png: [UInt8] =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        + [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xDE]
    /// The start and end of a JPEG image.
    static let jpeg: [UInt8] =
        [0xFF, 0xD8, 0xFF, 0xE0, 0, 16] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xFF, 0xD9]

    /// A PDF of about `size` bytes.
    static func pdf(size: Int = 0) -> [UInt8] {
        let head = Array("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n".utf8)
        let tail = Array("\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)
        return head + [UInt8](repeating: 0x20, count: max(0, size - head.count - tail.count)) + tail
    }

    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!

    static func accepting(_ identifiers: [TypeIdentifier]) throws -> AcceptedTypes { try AcceptedTypes(identifiers) }

    /// A new temporary folder holding `files` (name: text).
    static func folder(with files: [String: String]) throws -> String {
        var template = Array("/tmp/fileshare-share-XXXXXX".utf8CString)
        let made = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        let root = String(cString: made)
        for (name, text) in files { try writeFile(text.utf8, to: root + "/" + name) }
        return root
    }

    // MARK: The JSON API and WebDAV

    @Test("accepted PNG and PDF arrive through the API and WebDAV; /api/info lists the accepted types")
    func accepted() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try Self.accepting(["public.image", "com.adobe.pdf"]))
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.send("/api/files/Pictures/dot.png", .put, Self.png).status == .created)
                #expect(try await client.send("/dav/report.pdf", .put, Self.pdf()).status == .created)
                // Content decides: a PNG named .bin (no type's extension) is a PNG.
                #expect(try await client.send("/api/files/dot.bin", .put, Self.png).status == .created)
                #expect(try await client.send("/dav/dot.jpg", .put, Self.jpeg).status == .created)
                let info = try await client.request("/api/info")
                #expect(info.json["acceptedTypes"] as? [String] == ["public.image", "com.adobe.pdf"])
            }
            #expect(share.visibleTree() == ["Pictures", "Pictures/dot.png", "dot.bin", "dot.jpg", "report.pdf"])
            #expect(FileManager.default.contents(atPath: share.path("Pictures/dot.png")) == Data(Self.png))
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test(
        "every type accepted (no accepted types, or public.item): only lying names are refused, /api/info has no acceptedTypes",
        arguments: [false, true])
    func everything(item: Bool) async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: item ? try Self.accepting([.item]) : nil)
            #expect(share.server.core.uploadTypes.identifiers == nil)
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.send("/api/files/report.pdf", .put, Self.pdf()).status == .created)
                #expect(try await client.send("/api/files/report", .put, Self.pdf()).status == .created)
                #expect(try await client.send("/dav/blob.jpg", .put, [0, 0x13, 0x37, 0]).status == .created)
                #expect(try await client.request("/dav/empty", .put, body: "").status == .created)
                #expect(try await client.request("/api/files/empty.png", .put, body: "").status == .created)
                #expect(try await client.send("/api/files/photo.jpg", .put, Self.pdf()).status == .unsupportedMediaType)
                #expect(try await client.request("/api/info").json["acceptedTypes"] == nil)
            }
            #expect(share.visibleTree().filter { $0 != "empty" } == ["blob.jpg", "empty.png", "report", "report.pdf"])
        }
    }

    @Test(
        "a PDF named .txt is refused when only text is accepted: 415 with the reason, the old file kept, nothing left, no event"
    )
    func pdfNamedText() async throws {
        try await MachineSettings.shared {
            // Already there when the server starts: no event of its own.
            let root = try Self.folder(with: ["report.txt": "the old notes"])
            let share = try ShareFixture(root: root, acceptedTypes: try Self.accepting(["public.text"]))
            try await share.test { (client: any TestClientProtocol) async throws in
                await share.server.observer.sync()
                let api = try await client.send("/api/files/report.txt", .put, Self.pdf())
                #expect(api.status == .unsupportedMediaType)
                let reason = try #require(api.json["error"] as? String)
                #expect(reason.contains("'report.txt'") && reason.contains("a PDF document"), "\(reason)")
                #expect(api.headers[.contentType]?.hasPrefix("application/json") == true)
                let dav = try await client.send("/dav/report.txt", .put, Self.pdf())
                #expect(dav.status == .unsupportedMediaType)
                #expect(dav.headers[.contentType]?.hasPrefix("text/plain") == true)
                #expect(dav.text == reason + "\n")
                // A new name too, through WebDAV.
                #expect(try await client.send("/dav/new.txt", .put, Self.pdf()).status == .unsupportedMediaType)
                // Text is welcome; a later change shows the refused ones made no event.
                #expect(try await client.request("/api/files/notes.md", .put, body: "# Notes\n").status == .created)
                await share.server.observer.sync()
            }
            #expect(share.read("report.txt") == "the old notes")
            #expect(share.visibleTree() == ["notes.md", "report.txt"])
            #expect(share.stagingContent().isEmpty)
            let events = share.printed.all
            #expect(events.contains { $0.contains(#""path":"notes.md""#) })
            #expect(!events.contains { $0.contains("report.txt") || $0.contains("new.txt") }, "\(events)")
        }
    }

    @Test("a PDF named .jpg is refused with the reason, whatever way it comes; the old photo is kept")
    func pdfNamedJPEG() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try Self.accepting(["public.image"]))
            try writeFile(Data(Self.jpeg), to: share.path("photo.jpg"))
            let reason =
                "the name of 'photo.jpg' says JPEG image, but the content is a PDF document, which this folder does not accept"
            try await share.test { (client: any TestClientProtocol) async throws in
                let api = try await client.send("/api/files/photo.jpg", .put, Self.pdf())
                #expect(api.status == .unsupportedMediaType)
                #expect(api.json["error"] as? String == reason)
                let dav = try await client.send("/dav/photo.jpg", .put, Self.pdf())
                #expect(dav.status == .unsupportedMediaType && dav.text == reason + "\n")
                // Large: refused once the first bytes have arrived, before the rest is written.
                let large = try await client.send("/api/files/photo.jpg", .put, Self.pdf(size: 3 << 20))
                #expect(large.status == .unsupportedMediaType && large.json["error"] as? String == reason)
                let largeDAV = try await client.send("/dav/photo.jpg", .put, Self.pdf(size: 3 << 20))
                #expect(largeDAV.status == .unsupportedMediaType)
                // Text named .jpg is not a JPEG either.
                let text = try await client.request("/api/files/fake.jpg", .put, body: "just words")
                #expect(text.status == .unsupportedMediaType)
                #expect((text.json["error"] as? String)?.contains("'fake.jpg'") == true)
            }
            #expect(FileManager.default.contents(atPath: share.path("photo.jpg")) == Data(Self.jpeg))
            #expect(share.visibleTree() == ["photo.jpg"])
            #expect(share.stagingContent().isEmpty)
        }
    }

    // MARK: Resumable uploads

    @Test("a resumable upload is checked when complete: 415, the upload ended, nothing left")
    func resumableRefusedAtTheEnd() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try Self.accepting(["public.image"]))
            let content = Self.pdf(size: 40_000)
            try await share.test { (client: any TestClientProtocol) async throws in
                let start = try await client.request(
                    "/api/uploads?path=scans/page.png", .post, headers: [Self.uploadLength: String(content.count)])
                #expect(start.status == .created)
                let token = try #require(start.json["upload"] as? String)
                // A short first chunk does not tell yet: the rest could change what the file is.
                let first = try await client.send(
                    "/api/uploads/\(token)", .patch, Array(content[..<1000]), headers: [Self.uploadOffset: "0"])
                #expect(first.status == .noContent && first.headers[Self.uploadOffset] == "1000")
                let last = try await client.send(
                    "/api/uploads/\(token)", .patch, Array(content[1000...]), headers: [Self.uploadOffset: "1000"])
                #expect(last.status == .unsupportedMediaType)
                #expect(
                    last.json["error"] as? String
                        == "the name of 'page.png' says PNG image, but the content is a PDF document, which this folder does not accept"
                )
                #expect(try await client.request("/api/uploads/\(token)", .head).status == .notFound)
                // An accepted one completes.
                let png = try await client.request(
                    "/api/uploads?path=scans/dot.png", .post, headers: [Self.uploadLength: String(Self.png.count)])
                let pngToken = try #require(png.json["upload"] as? String)
                #expect(
                    try await client.send(
                        "/api/uploads/\(pngToken)", .patch, Self.png, headers: [Self.uploadOffset: "0"]
                    ).status == .created)
            }
            #expect(share.visibleTree() == ["scans", "scans/dot.png"])
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("a resumable upload whose first chunk already shows a refused type ends with that chunk")
    func resumableRefusedEarly() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try Self.accepting(["public.image"]))
            let content = Self.pdf(size: 5 << 20)
            try await share.test { (client: any TestClientProtocol) async throws in
                let start = try await client.request(
                    "/api/uploads?path=big.jpg", .post, headers: [Self.uploadLength: String(content.count)])
                let token = try #require(start.json["upload"] as? String)
                let first = try await client.send(
                    "/api/uploads/\(token)", .patch, Array(content[..<(128 << 10)]), headers: [Self.uploadOffset: "0"])
                #expect(first.status == .unsupportedMediaType)
                #expect((first.json["error"] as? String)?.contains("a PDF document") == true)
                #expect(try await client.request("/api/uploads/\(token)", .head).status == .notFound)
                let next = try await client.send(
                    "/api/uploads/\(token)", .patch, Array(content[(128 << 10)..<(256 << 10)]),
                    headers: [Self.uploadOffset: String(128 << 10)])
                #expect(next.status == .notFound)
                // An empty file is judged by its name at once.
                let empty = try await client.request(
                    "/api/uploads?path=notes.txt", .post, headers: [Self.uploadLength: "0"])
                #expect(empty.status == .unsupportedMediaType)
            }
            #expect(share.visibleTree().isEmpty)
            #expect(share.stagingContent().isEmpty)
        }
    }

    // MARK: WebDAV's empty files

    @Test(
        "WebDAV: an empty PUT is judged by its name; refused content ends a held-back empty file; a LOCK on a refused name holds no file"
    )
    func davEmptyFiles() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try Self.accepting(["public.image"]))
            try await share.test { (client: any TestClientProtocol) async throws in
                // Finder: an empty file first, then its content.
                #expect(try await client.request("/dav/good.png", .put, body: "").status == .created)
                #expect(try await client.send("/dav/good.png", .put, Self.png).status == .noContent)
                // The content is refused: the held-back empty file goes too.
                #expect(try await client.request("/dav/fake.png", .put, body: "").status == .created)
                let refused = try await client.send("/dav/fake.png", .put, Self.pdf())
                #expect(refused.status == .unsupportedMediaType)
                #expect(
                    try await client.request("/dav/fake.png", .propfind, headers: [.depth: "0"]).status == .notFound)
                // A name that says a type not accepted, or none.
                let text = try await client.request("/dav/notes.txt", .put, body: "")
                #expect(text.status == .unsupportedMediaType)
                #expect(text.text.contains("'notes.txt'"))
                #expect(try await client.request("/dav/untitled", .put, body: "").status == .unsupportedMediaType)
                // Windows: a LOCK on a new name without an extension holds the name, not an empty file;
                // the content that follows is judged by itself.
                let locked = try await client.request("/dav/scan", .lock, body: WebDAVRouterTests.lockBody)
                #expect(locked.status == .ok)
                let token = try #require(locked.headers[.lockToken])
                #expect(try await client.request("/dav/scan", .propfind, headers: [.depth: "0"]).status == .notFound)
                #expect(
                    try await client.send("/dav/scan", .put, Self.jpeg, headers: [.davIf: "(\(token))"]).status
                        == .created)
                #expect(
                    try await client.request("/dav/scan", .unlock, headers: [.lockToken: token]).status == .noContent)
                // A LOCK on an accepted name still holds an empty file back until the lock ends.
                let held = try await client.request("/dav/later.jpg", .lock, body: WebDAVRouterTests.lockBody)
                #expect(held.status == .created)
                let heldToken = try #require(held.headers[.lockToken])
                #expect(
                    try await client.request("/dav/later.jpg", .unlock, headers: [.lockToken: heldToken]).status
                        == .noContent)
            }
            #expect(share.visibleTree() == ["good.png", "later.jpg", "scan"])
            #expect(share.read("later.jpg") == "")
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("MOVE and COPY are not checked again: a file already in the folder keeps its way")
    func moveAndCopyNotChecked() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try Self.accepting(["public.image"]))
            try share.write("notes.txt", "put here by other means")
            try await share.test { (client: any TestClientProtocol) async throws in
                await share.server.observer.sync()
                #expect(
                    try await client.request("/api/move", .post, body: #"{"from":"notes.txt","to":"renamed.txt"}"#)
                        .status == .ok)
                let copied = try await client.request(
                    "/dav/renamed.txt", .copy, headers: [.destination: "/dav/copy.txt"])
                #expect(copied.status == .created)
            }
            #expect(share.visibleTree() == ["copy.txt", "renamed.txt"])
        }
    }

    // MARK: The policy

    @Test("a prefix refuses only when it tells as much as the whole file would")
    func certainRefusal() throws {
        let images = UploadTypePolicy(try Self.accepting(["public.image"]))
        #expect(UploadTypePolicy(nil).identifiers == nil)
        #expect(UploadTypePolicy(AcceptedTypes.all()).identifiers == nil)
        #expect(images.prefixLength == 64 << 10)
        let pdf = Self.pdf(size: 1 << 20)
        // Long enough, or the whole file: certain.
        #expect(images.certainRefusal(prefix: Array(pdf[..<(64 << 10)]), name: "a.jpg", totalSize: pdf.count) != nil)
        #expect(images.certainRefusal(prefix: Self.pdf(), name: "a.jpg", totalSize: Self.pdf().count) != nil)
        // Too short to tell.
        #expect(images.certainRefusal(prefix: Array(pdf[..<1000]), name: "a.jpg", totalSize: pdf.count) == nil)
        // Accepted.
        let png = Self.png + [UInt8](repeating: 0, count: 64 << 10)
        #expect(images.certainRefusal(prefix: png, name: "a.png", totalSize: png.count + 1000) == nil)
        // An ID3 tag: what follows it decides.
        let tagged = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0x7F, 0x7F] + [UInt8](repeating: 0, count: 64 << 10)
        let flac = UploadTypePolicy(try Self.accepting(["org.xiph.flac"]))
        #expect(flac.certainRefusal(prefix: tagged, name: "song.flac", totalSize: 10 << 20) == nil)
        #expect(flac.certainRefusal(prefix: tagged, name: "song.flac", totalSize: tagged.count) != nil)
        // A ZIP archive: certain only when no accepted type is told by ZIP entries.
        let zip: [UInt8] = [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 64 << 10)
        #expect(images.certainRefusal(prefix: zip, name: "a.zip", totalSize: 10 << 20) != nil)
        let books = UploadTypePolicy(try Self.accepting(["org.idpf.epub-container"]))
        #expect(books.certainRefusal(prefix: zip, name: "a.epub", totalSize: 10 << 20) == nil)
        // Empty files are judged by their names.
        #expect(images.acceptsEmptyFile(at: try SharePath(plain: "a/b.png")))
        #expect(!images.acceptsEmptyFile(at: try SharePath(plain: "b.txt")))
        #expect(images.identifiers == ["public.image"])
    }
}

extension TestClientProtocol {
    /// A request with the fixture's credentials and a binary body.
    func send(
        _ uri: String, _ method: HTTPRequest.Method, _ bytes: [UInt8], headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers
        headers[.authorization] = ShareFixture.authorization
        return try await execute(uri: uri, method: method, headers: headers, body: ByteBuffer(bytes: bytes))
    }
}
