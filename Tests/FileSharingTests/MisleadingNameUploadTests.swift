import DocumentTypes
import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FileSharing

/// Uploads whose names lie about their content, through the router: refused
/// by default, with the reason; put in place under the corrected name when
/// names are corrected.
@Suite("Uploads with misleading names")
struct MisleadingNameUploadTests {
    static let pdf = AcceptedUploadTests.pdf()
    static let text = Array("Shopping list\n- bread\n".utf8)

    static func reason(_ name: String, says nameType: String, is content: String, rename corrected: String) -> String {
        "the name of '\(name)' says \(nameType), but the content is \(content): "
            + "rename it '\(corrected)', or have such names corrected (--fix-extensions)"
    }

    @Test(
        "a lying name is refused with both types and the fix, through the API, resumable uploads and WebDAV; nothing is left"
    )
    func refused() async throws {
        try await MachineSettings.shared {
            // The issue's share: PDF, PNG and text accepted.
            let accepted = try AcceptedTypes(["com.adobe.pdf", "public.png", .plainText])
            let share = try ShareFixture(acceptedTypes: accepted)
            try share.write("notes.txt", "the old notes")
            let pdfAsText = Self.reason(
                "notes.txt", says: "plain text document", is: "a PDF document", rename: "notes.pdf")
            try await share.test { (client: any TestClientProtocol) async throws in
                await share.server.observer.sync()
                let api = try await client.send("/api/files/notes.txt", .put, Self.pdf)
                #expect(api.status == .unsupportedMediaType)
                #expect(api.json["error"] as? String == pdfAsText)
                let dav = try await client.send("/dav/photo.png", .put, Self.text)
                #expect(dav.status == .unsupportedMediaType)
                #expect(
                    dav.text
                        == Self.reason(
                            "photo.png", says: "PNG image", is: "a plain text document", rename: "photo.txt") + "\n")
                // Large: refused once the first bytes tell, before the rest is written.
                let large = try await client.send(
                    "/api/files/big.TXT", .put, AcceptedUploadTests.pdf(size: 3 << 20))
                #expect(large.status == .unsupportedMediaType)
                #expect((large.json["error"] as? String)?.contains("rename it 'big.pdf'") == true)
                // Resumable: refused when complete, and the upload ends.
                let start = try await client.request(
                    "/api/uploads?path=notes.txt", .post,
                    headers: [AcceptedUploadTests.uploadLength: String(Self.pdf.count)])
                let token = try #require(start.json["upload"] as? String)
                let last = try await client.send(
                    "/api/uploads/\(token)", .patch, Self.pdf, headers: [AcceptedUploadTests.uploadOffset: "0"])
                #expect(last.status == .unsupportedMediaType && last.json["error"] as? String == pdfAsText)
                #expect(try await client.request("/api/uploads/\(token)", .head).status == .notFound)
                // Names that do not lie pass: CSV and Markdown are text, an empty file shows nothing,
                // a name without an extension says nothing.
                #expect(try await client.request("/api/files/sizes.txt", .put, body: "a,b\n1,2\n").status == .created)
                #expect(try await client.request("/api/files/empty.png", .put, body: "").status == .created)
                #expect(try await client.send("/api/files/report.pdf", .put, Self.pdf).status == .created)
                await share.server.observer.sync()
            }
            #expect(share.read("notes.txt") == "the old notes")
            #expect(share.visibleTree() == ["empty.png", "notes.txt", "report.pdf", "sizes.txt"])
            #expect(share.stagingContent().isEmpty)
            #expect(!share.printed.all.contains { $0.contains("photo") || $0.contains("big") })
        }
    }

    @Test(
        "with names corrected, the file lands under the corrected name, never replacing one; the answer says where"
    )
    func corrected() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(misleadingNames: .correct)
            try share.write("notes.pdf", "another file, kept")
            try share.write("notes.txt", "the old notes, kept")
            try await share.test { (client: any TestClientProtocol) async throws in
                await share.server.observer.sync()
                // The corrected name is taken: the next free one.
                let api = try await client.send("/api/files/notes.txt", .put, Self.pdf)
                #expect(api.status == .created)
                #expect(api.json["path"] as? String == "notes 2.pdf")
                #expect(api.json["requestedPath"] as? String == "notes.txt")
                #expect(api.headers[.location] == "/api/files/notes%202.pdf")
                // Into a folder made on the way, in any case of extension.
                let text = try await client.send("/api/files/Pictures/photo.PNG", .put, Self.text)
                #expect(text.status == .created && text.json["path"] as? String == "Pictures/photo.txt")
                // WebDAV: 201 and where, in Location.
                let dav = try await client.send("/dav/scan.txt", .put, Self.pdf)
                #expect(dav.status == .created)
                #expect(dav.headers[.location] == "/dav/scan.pdf")
                // A resumable upload, on its last chunk.
                let start = try await client.request(
                    "/api/uploads?path=report.txt", .post,
                    headers: [AcceptedUploadTests.uploadLength: String(Self.pdf.count)])
                let token = try #require(start.json["upload"] as? String)
                let last = try await client.send(
                    "/api/uploads/\(token)", .patch, Self.pdf, headers: [AcceptedUploadTests.uploadOffset: "0"])
                #expect(last.status == .created)
                #expect(last.json["path"] as? String == "report.pdf")
                #expect(last.json["requestedPath"] as? String == "report.txt")
                // A name that does not lie is answered as always.
                let honest = try await client.send("/api/files/notes.pdf", .put, Self.pdf)
                #expect(honest.status == .ok && honest.json["requestedPath"] == nil)
                #expect(honest.headers[.location] == nil)
                await share.server.observer.sync()
            }
            #expect(share.read("notes.txt") == "the old notes, kept")
            #expect(FileManager.default.contents(atPath: share.path("notes 2.pdf")) == Data(Self.pdf))
            #expect(FileManager.default.contents(atPath: share.path("notes.pdf")) == Data(Self.pdf))
            #expect(FileManager.default.contents(atPath: share.path("Pictures/photo.txt")) == Data(Self.text))
            #expect(
                share.visibleTree() == [
                    "Pictures", "Pictures/photo.txt", "notes 2.pdf", "notes.pdf", "notes.txt", "report.pdf",
                    "scan.pdf",
                ])
            #expect(share.stagingContent().isEmpty)
            // The change is the server's, at the corrected name.
            let added = share.printed.all.first { $0.contains(#""path":"notes 2.pdf""#) }
            #expect(added?.contains(#""face":"api""#) == true, "\(share.printed.all)")
        }
    }

    @Test("WebDAV: a corrected upload does not take the properties of the file at the name it was sent to")
    func correctedTakesNoProperties() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(misleadingNames: .correct)
            try share.write("notes.txt", "the old notes")
            try await share.test { (client: any TestClientProtocol) async throws in
                await share.server.observer.sync()
                let set = try await client.request(
                    "/dav/notes.txt", .proppatch,
                    body: WebDAVRouterTests.setProperty("Win32FileAttributes", "00000020"))
                #expect(set.status.code == 207)
                let put = try await client.send("/dav/notes.txt", .put, Self.pdf)
                #expect(put.status == .created && put.headers[.location] == "/dav/notes.pdf")
                for (name, kept) in [("notes.txt", true), ("notes.pdf", false)] {
                    let got = try await client.request(
                        "/dav/\(name)", .propfind, headers: [.depth: "0"],
                        body: WebDAVRouterTests.getProperty)
                    #expect(got.text.contains("00000020") == kept, "\(name): \(got.text)")
                }
            }
            #expect(share.read("notes.txt") == "the old notes")
        }
    }

    @Test("a type that is not accepted is refused for that, even with names corrected")
    func notAccepted() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(acceptedTypes: try AcceptedTypes([.image]), misleadingNames: .correct)
            try await share.test { (client: any TestClientProtocol) async throws in
                let api = try await client.send("/api/files/scan.png", .put, Self.pdf)
                #expect(api.status == .unsupportedMediaType)
                #expect(
                    api.json["error"] as? String
                        == "the name of 'scan.png' says PNG image, but the content is a PDF document, which this folder does not accept"
                )
                // An image under another image's name is corrected.
                let jpeg = try await client.send("/api/files/photo.png", .put, AcceptedUploadTests.jpeg)
                #expect(jpeg.status == .created && jpeg.json["path"] as? String == "photo.jpg")
            }
            #expect(share.visibleTree() == ["photo.jpg"])
        }
    }
}
