import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve` on a machine without libturbojpeg (the library name
/// pointed at a file that does not exist): nothing fails but made
/// thumbnails; and the server's memory while it makes a large one.
@Suite("fileshare serve and image thumbnails")
struct ServeThumbnailTests {
    @Test(
        "without libturbojpeg: embedded thumbnails still served, other JPEGs 415 (their icon); one warning naming the package"
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
            let camera = try await curlResponse([url + "api/thumbnail/camera.jpg"])
            #expect(camera.status == 200 && camera.header("Content-Type") == "image/jpeg")
            #expect(camera.header("Content-Length") == String(embedded.count))
            #expect(try await curl([url + "api/thumbnail/small.jpg"]).0 == 415)
            #expect(try await curl([url + "api/thumbnail/large.jpg"]).0 == 415)
            #expect(try await curl([url + "api/thumbnail/large.jpg"]).0 == 415)
            #expect(try await curl([url + "api/info"]).0 == 200)
            let warnings = serve.errorOutput.components(separatedBy: "libturbojpeg0").count - 1
            #expect(warnings == 1, "\(serve.errorOutput)")
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "a 100-megapixel PNG's thumbnail raises the server's peak memory by a bounded amount; a 60000×60000 bomb, a zip bomb and a 10 GiB claim are 415"
    )
    func largeImageMemory() async throws {
        let dir = try TemporaryFolder()
        let samples: [(String, [String])] = [
            ("large.png", ["png", dir.path + "/large.png", "10000", "10000"]),
            ("bomb.png", ["png", dir.path + "/bomb.png", "64", "64", "--declare", "60000x60000"]),
            // 256 MiB of zeros in a comic whose directory says 1,000 bytes; a page claiming 10 GiB.
            ("bomb.cbz", ["zip", dir.path + "/bomb.cbz", "--bomb", "p1.png=268435456"]),
            (
                "claim.cbz",
                ["zip", dir.path + "/claim.cbz", "p1.png=" + dir.path + "/bomb.png", "--claim", "p1.png=10737418240"]
            ),
        ]
        for (_, arguments) in samples { try await Samples.make(arguments) }
        // The decode (3 s of CPU here) may take 6 times its CPU limit on the
        // clock: under the whole suite 10 s (a minute on the clock) was not
        // enough; what is measured here is memory.
        let serve = try CommandProcess(
            ["serve", dir.path, "--port", "0", "--no-auth"], environment: ["FILESHARE_THUMBNAILS_TIME_LIMIT": "60s"])
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        guard try await curl([url + "api/info"]).1.contains("\"png\"") else {
            let message = "libpng16 or libturbojpeg is missing (.ci/run installs them)"
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record(Comment(rawValue: message)) }
            serve.send(SIGTERM)
            _ = await serve.exitStatus()
            try Test.cancel("skipped: \(message)")
        }
        // Listed: the observer has seen the files whole.
        #expect(
            await waitFor { (try? await curl([url + "api/list?path="]).1.contains("claim.cbz")) == true },
            "listed: the samples")
        let pid = serve.processIdentifier
        func status(_ field: String) -> Int? {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            let line = text.split(whereSeparator: \.isNewline).first { $0.hasPrefix(field + ":") }
            return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }  // kB
        }
        let before = try #require(status("VmRSS"))
        // The peak starts again from the memory in use now (Linux 4.0 and later).
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
        // (Seconds of decoding: a loaded machine may take far longer than curl's usual 10 s limit.)
        let response = try await curlResponse(["--max-time", "400", url + "api/thumbnail/large.png"])
        #expect(
            response.status == 200 && response.header("Content-Type") == "image/jpeg",
            "\(response.status) \(response.header("Content-Type") ?? "") \(response.body.prefix(300))")
        let peak = try #require(status("VmHWM"))
        let raisedMiB = Double(peak - before) / 1024
        print(
            "100-megapixel PNG thumbnail: server RSS \(before / 1024) MiB before, peak \(peak / 1024) MiB (+\(raisedMiB) MiB)"
        )
        // The PNG's pixels alone would be 300 MB; its rows, sums and libpng's state are a few MiB.
        #expect(raisedMiB < 48, "the server's peak rose by \(raisedMiB) MiB")
        for hostile in ["bomb.png", "bomb.cbz", "claim.cbz"] {
            #expect(try await curl([url + "api/thumbnail/" + hostile]).0 == 415, "\(hostile)")
        }
        let hostilePeak = try #require(status("VmHWM"))
        print("hostile files: peak \(hostilePeak / 1024) MiB")
        #expect(Double(hostilePeak - before) / 1024 < 80, "a zip bomb inflates no further than its declared size")
        #expect(try await curl([url + "api/info"]).0 == 200, "the server is up")
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }
}
