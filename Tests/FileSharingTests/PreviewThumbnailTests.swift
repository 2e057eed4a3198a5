import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Previews
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// `/api/thumbnail/P` for PDFs (and, the same way, videos and audio) through
/// the server: made once the file is finished, kept by id and version.
@Suite("thumbnails made by programs, through the server")
struct PreviewThumbnailTests {
    @Test(
        "a PDF's thumbnail is a PNG, kept for the next ask and renames; 415 while the file is written; /api/info says the kinds"
    )
    func pdf() async throws {
        let thumbnailer = ExternalThumbnailer()
        try Requirement.require(
            thumbnailer.programs[.pdf] != nil, "pdftoppm is missing (Debian package poppler-utils; .ci/run installs it)"
        )
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try writeFile(Data(TestPDF.bytes()), to: share.path("doc.pdf"))
            // A file still open for writing.
            let writer = try #require(FileHandle(forUpdatingAtPath: share.path("doc.pdf")))
            try writer.seekToEnd()
            try writer.write(contentsOf: Data("\n".utf8))
            try await share.test { client in
                let info = try await client.request("/api/info")
                #expect((info.json["thumbnailKinds"] as? [String])?.contains("pdf") == true)
                #expect(await eventually { share.server.observer.item(at: ItemPath("doc.pdf"))?.isWriting == true })
                let early = try await client.request("/api/thumbnail/doc.pdf")
                #expect(
                    early.status == .unsupportedMediaType && early.text.contains("still being written"), "\(early.text)"
                )
                try writer.close()
                #expect(await eventually { share.server.observer.item(at: ItemPath("doc.pdf"))?.isWriting == false })
                let made = try await client.request("/api/thumbnail/doc.pdf")
                #expect(made.status == .ok && made.headers[.contentType] == "image/png", "\(made.text)")
                #expect(Array(made.body.readableBytesView.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
                let kept = try FileManager.default.contentsOfDirectory(atPath: share.path(".fileshare/thumbnails"))
                #expect(kept.count == 1 && kept[0].hasSuffix(".png"), "\(kept)")
                // Renamed: the same id, the same thumbnail, not made again.
                #expect(
                    try await client.request("/api/move", .post, body: #"{"from":"doc.pdf","to":"renamed.pdf"}"#).status
                        == .ok)
                let again = try await client.request("/api/thumbnail/renamed.pdf")
                #expect(again.status == .ok && again.body == made.body)
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: share.path(".fileshare/thumbnails")) == kept)
                // A corrupt PDF gets its icon; the server goes on.
                try share.write("junk.pdf", "%PDF-1.4 not really")
                #expect(await eventually { share.server.observer.item(at: ItemPath("junk.pdf"))?.isWriting == false })
                #expect(try await client.request("/api/thumbnail/junk.pdf").status == .unsupportedMediaType)
                #expect(try await client.request("/api/thumbnail/renamed.pdf").status == .ok)
            }
        }
    }
}
