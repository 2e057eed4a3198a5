import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve` given images made to cost a decoder: each is refused
/// from its headers (its icon, 415), and the server's memory and CPU barely move.
@Suite("fileshare serve and hostile images", .serialized)
struct ServeHostileImageTests {
    /// A server of `dir` with its URL and its usage, once it serves image
    /// thumbnails (skipped where the image libraries are missing; CI has them).
    static func serve(_ dir: TemporaryFolder) async throws -> (CommandProcess, String, ProcessUsage) {
        let serve = try CommandProcess(["serve", dir.path, "--port", "0", "--no-auth"])
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        let info = try await curl([url + "api/info"]).1
        guard info.contains("\"jpeg\""), info.contains("\"png\""), info.contains("\"cbz\"") else {
            let message = "libturbojpeg, libpng16 or zlib is missing (.ci/run installs them)"
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record(Comment(rawValue: message)) }
            serve.send(SIGTERM)
            _ = await serve.exitStatus()
            try Test.cancel("skipped: \(message)")
        }
        return (serve, url, ProcessUsage(pid: serve.processIdentifier))
    }

    /// Writes a comic holding `page` as its only page.
    static func comic(_ dir: TemporaryFolder, _ name: String, page: String) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Samples/make_sample.py").path
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", script, "zip", dir.path + "/" + name, "p1.jpg=" + page, "--deflate"]
        try python.run()
        python.waitUntilExit()
        try #require(python.terminationStatus == 0, "make_sample.py could not write \(name)")
    }

    @Test(
        "a 12000×12000 progressive JPEG of 231 bytes, the same in a comic, a JPEG of 3,000 scans: 415 at once, asked for and listed, and the server's memory and CPU barely move"
    )
    func refusedFromHeaders() async throws {
        let dir = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: dir.path + "/Drop", withIntermediateDirectories: true)
        // Before these budgets: +281 MiB of resident memory for each of the
        // first two (2 bytes a pixel of coefficients), 13 s of CPU for the third.
        let huge = HostileJPEG.progressive(width: 12_000, height: 12_000, scans: 10)
        try dir.write(huge, to: "Drop/huge.jpg")
        try Self.comic(dir, "Drop/huge.cbz", page: dir.path + "/Drop/huge.jpg")
        try dir.write(
            HostileJPEG.progressive(width: 2_000, height: 2_000, scans: 3_000, withData: true), to: "Drop/scans.jpg")
        let (serve, url, usage) = try await Self.serve(dir)
        #expect(await usage.waitUntilQuiet(), "the server has started")
        let before = try #require(usage.residentMiB)
        try usage.resetPeak()
        let cpu = try #require(usage.cpuSeconds)
        // Listed: the samples' thumbnails are made ahead, nobody asking.
        #expect(
            await waitFor { (try? await curl([url + "api/list?path=Drop"]).1.contains("scans.jpg")) == true },
            "listed: the samples")
        #expect(await usage.waitUntilQuiet(), "the thumbnails made ahead are done")
        for round in 0..<2 {
            for name in ["huge.jpg", "huge.cbz", "scans.jpg"] {
                // (A decode of the scans took 13 s of CPU before: curl waits longer than its usual 10 s.)
                let response = try await curlResponse(["--max-time", "120", url + "api/thumbnail/Drop/" + name])
                #expect(response.status == 415, "\(name), round \(round): \(response.status) \(response.body)")
                #expect(response.body.contains("more than"), "\(name): \(response.body)")
            }
            // Listed again: made ahead again, or not, but never decoded.
            #expect(try await curl([url + "api/list?path=Drop"]).0 == 200)
        }
        #expect(await usage.waitUntilQuiet(), "the thumbnails made ahead are done")
        let peak = try #require(usage.peakMiB)
        let spent = try #require(usage.cpuSeconds) - cpu
        print("hostile JPEGs: RSS \(before) MiB, peak \(peak) MiB (+\(peak - before)), CPU +\(spent) s")
        // Nine refusals and three listings allocate a few KiB each; one
        // decode of the 12000×12000 file alone raised the peak by 281 MiB.
        #expect(peak - before < 32, "the server's peak rose by \(peak - before) MiB")
        // Milliseconds of work; one decode of the 3,000 scans took 13 s.
        #expect(spent < 3, "the server spent \(spent) s of CPU")
        #expect(try await curl([url + "api/info"]).0 == 200, "the server is up")
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }
}
