import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Previews
import Testing

@testable import FileSharing

/// `/api/thumbnail/P` for images decoded in the server: a JPEG of the
/// asked size, kept by id and version; a hostile image is 415 and the
/// server goes on.
@Suite("image thumbnails, through the server")
struct ImageThumbnailRouteTests {
    /// A PNG of `width`×`height` in one colour, made by ffmpeg.
    static func png(_ path: String, width: Int, height: Int) async throws {
        let ffmpeg = try await ProgramRun.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=\(width)x\(height)", "-frames:v",
                "1", path,
            ])
        try #require(ffmpeg.status == 0, "ffmpeg could not make \(path): \(ffmpeg.errorOutput)")
    }

    @Test("a PNG's thumbnail is a 256-pixel JPEG, kept for the next ask; a corrupt one and a bomb are 415")
    func png() async throws {
        let kinds = ImageThumbnailer().kinds
        try Requirement.require(
            kinds.contains(.png), "libpng16 or libturbojpeg is missing (Debian packages libpng16-16, libturbojpeg0)")
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await Self.png(share.path("wide.png"), width: 1000, height: 500)
            try share.write("broken.png", "\u{89}PNG\r\n\u{1A}\n and then nothing an image needs")
            // An IHDR declaring 60000×60000, and no data.
            var bomb: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            bomb += [0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60, 8, 2, 0, 0, 0] + [0x12, 0x34, 0x56, 0x78]
            try writeFile(Data(bomb), to: share.path("bomb.png"))
            for name in ["wide.png", "broken.png", "bomb.png"] {
                #expect(await eventually { share.server.observer.item(at: ItemPath(name))?.isWriting == false })
            }
            try await share.test { client in
                let info = try await client.request("/api/info")
                let listed = try #require(info.json["thumbnailKinds"] as? [String])
                #expect(Set(kinds.map(\.rawValue)).isSubset(of: Set(listed)), "\(listed)")
                let made = try await client.request("/api/thumbnail/wide.png")
                #expect(made.status == .ok && made.headers[.contentType] == "image/jpeg", "\(made.text)")
                let bytes = Array(made.body.readableBytesView)
                #expect(TestJPEG.size(of: bytes).map { [$0.width, $0.height] } == [256, 128])
                let kept = try FileManager.default.contentsOfDirectory(atPath: share.path(".fileshare/thumbnails"))
                #expect(kept.count == 1 && kept[0].hasSuffix(".jpg"), "\(kept)")
                #expect(Array(try await client.request("/api/thumbnail/wide.png").body.readableBytesView) == bytes)
                #expect(try await client.request("/api/thumbnail/broken.png").status == .unsupportedMediaType)
                #expect(try await client.request("/api/thumbnail/bomb.png").status == .unsupportedMediaType)
                #expect(try await client.request("/api/info").status == .ok, "the server is up")
            }
        }
    }
}
