import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve` on a machine without libturbojpeg (the library name
/// pointed at a file that does not exist): nothing fails but made thumbnails.
@Suite("fileshare serve without libturbojpeg")
struct ServeThumbnailTests {
    @Test(
        "embedded thumbnails still served, small JPEGs sent as they are, large ones 415; one warning naming the package"
    )
    func withoutLibrary() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let embedded: [UInt8] = [0xFF, 0xD8] + [UInt8](repeating: 0x42, count: 200) + [0xFF, 0xD9]
            try dir.write(TestJPEG.bytes(thumbnail: embedded, padding: 5_000_000), to: "camera.jpg")
            let small = TestJPEG.bytes(thumbnail: nil, padding: 10_000)
            try dir.write(small, to: "small.jpg")
            try dir.write(TestJPEG.bytes(thumbnail: nil, padding: 5_000_000), to: "large.jpg")
            let serve = try CommandProcess(
                ["serve", dir.path, "--port", "0", "--no-auth"],
                environment: ["FILESHARE_LIBTURBOJPEG": dir.path + "/no/libturbojpeg.so.0"])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            let camera = try curlResponse([url + "api/thumbnail/camera.jpg"])
            #expect(camera.status == 200 && camera.header("Content-Type") == "image/jpeg")
            #expect(camera.header("Content-Length") == String(embedded.count))
            let sent = try curlResponse([url + "api/thumbnail/small.jpg"])
            #expect(sent.status == 200 && sent.header("Content-Length") == String(small.count))
            #expect(try curl([url + "api/thumbnail/large.jpg"]).0 == 415)
            #expect(try curl([url + "api/thumbnail/large.jpg"]).0 == 415)
            #expect(try curl([url + "api/info"]).0 == 200)
            let warnings = serve.errorOutput.components(separatedBy: "libturbojpeg0").count - 1
            #expect(warnings == 1, "\(serve.errorOutput)")
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }
}
