import FileshareTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve` given images made to cost a decoder: each is refused
/// from its headers (its icon, 415), the server's memory and CPU barely
/// move, a file that fails is not decoded again, and decodes never hold up
/// another client's listing.
@Suite("fileshare serve and hostile images", .serialized)
struct ServeHostileImageTests {
    /// A server of `dir` with its URL and its usage, once it serves image
    /// thumbnails (skipped where the image libraries are missing; CI has them).
    /// - Parameter environment: Settings beyond the defaults (`FILESHARE_…`).
    static func serve(
        _ dir: TemporaryFolder, environment: [String: String] = [:]
    ) async throws -> (CommandProcess, String, ProcessUsage) {
        let serve = try CommandProcess(["serve", dir.path, "--port", "0", "--no-auth"], environment: environment)
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
    static func comic(_ dir: TemporaryFolder, _ name: String, page: String) async throws {
        try await Samples.make(["zip", dir.path + "/" + name, "p1.jpg=" + page, "--deflate"])
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
        try await Self.comic(dir, "Drop/huge.cbz", page: dir.path + "/Drop/huge.jpg")
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

    /// The server's thumbnail counts, from `/metrics`: started since it
    /// started, running now, and failures remembered.
    static func thumbnailCounts(_ url: String) async throws -> (started: Int, running: Int, remembered: Int)? {
        let (status, text) = try await curl([url + "metrics"])
        guard status == 200 else { return nil }
        func value(_ name: String) -> Int? {
            for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix(name + " ") {
                return Double(line.dropFirst(name.count + 1)).map { Int($0) }
            }
            return nil
        }
        guard let started = value("fileshare_thumbnails_started"), let running = value("fileshare_thumbnails_running"),
            let remembered = value("fileshare_thumbnail_failures_remembered")
        else { return nil }
        return (started, running, remembered)
    }

    @Test(
        "a JPEG that fails after most of a second of decoding is decoded once per version: asked for again and listed, at no cost; a new version is tried"
    )
    func failureRemembered() async throws {
        let dir = try TemporaryFolder()
        // Within the budgets (6000×6000 in 29 scans: 70 MiB, 0.83 of the
        // work allowed), refused by libjpeg at its last scan, after the others.
        let failing = HostileJPEG.successive(width: 6_000, height: 6_000, failingLast: true)
        try dir.write(failing, to: "failing.jpg")
        let (serve, url, usage) = try await Self.serve(dir)
        let nothing = try #require(try await Self.thumbnailCounts(url), "/metrics has the thumbnail counts")
        #expect(nothing.started == 0 && nothing.remembered == 0, "\(nothing)")
        let start = try #require(usage.cpuSeconds)
        // Listed: its thumbnail is made ahead, and fails; that is the one decode.
        #expect(await waitFor { (try? await curl([url + "api/list"]).1.contains("failing.jpg")) == true })
        // Counted by the server, not judged from its CPU time: on a loaded
        // machine a decode starved of CPU looked like a quiet server.
        #expect(
            await waitFor(timeout: .seconds(120)) {
                guard let counts = try? await Self.thumbnailCounts(url) else { return false }
                return counts.started == 1 && counts.running == 0
            }, "the thumbnail made ahead has ended")
        let failed = try #require(try await Self.thumbnailCounts(url))
        #expect(failed.started == 1 && failed.remembered == 1, "the one decode failed and is remembered: \(failed)")
        let decode = try #require(usage.cpuSeconds) - start
        for _ in 0..<5 {
            let response = try await curlResponse(["--max-time", "120", url + "api/thumbnail/failing.jpg"])
            #expect(response.status == 415, "\(response.body)")
            #expect(try await curl([url + "api/list"]).0 == 200)
        }
        // Without the memory each request and each listing decoded it again: ten times the decode.
        let after = try #require(try await Self.thumbnailCounts(url))
        #expect(after.started == 1 && after.running == 0, "asked for and listed 5 times, decoded again: \(after)")
        let spent = try #require(usage.cpuSeconds) - start - decode
        print("failing JPEG: decoded ahead once in \(decode) s of CPU; then asked for and listed 5 times: +\(spent) s")
        // A new version (another size) is tried afresh: a good photo now.
        let photo = try Self.photo()
        try dir.write(photo, to: "failing.jpg")
        #expect(
            await waitFor(timeout: .seconds(30)) {
                (try? await curlResponse(["--max-time", "60", url + "api/thumbnail/failing.jpg"]).status) == 200
            }, "the new version's thumbnail")
        let retried = try #require(try await Self.thumbnailCounts(url))
        #expect(retried.started >= 2, "the new version was decoded: \(retried)")
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }

    @Test(
        "another client's listing is answered while two slow decodes run: decodes have threads of their own, the disk work its own"
    )
    func listingWhileDecoding() async throws {
        let dir = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: dir.path + "/Photos", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.path + "/Other", withIntermediateDirectories: true)
        // Two of the largest PNGs allowed, 16384×16384, 3.4 s of CPU each here (read row by row).
        for name in ["a.png", "b.png"] {
            try await Samples.make(["png", dir.path + "/Photos/" + name, "16384", "16384"])
        }
        for index in 0..<20 { try dir.write(Array("note \(index)".utf8), to: "Other/note\(index).txt") }
        // Each decode may take 6 times its CPU limit on the clock: 6 minutes
        // here, as a loaded machine (the whole suite) may need for these two.
        let (serve, url, usage) = try await Self.serve(dir, environment: ["FILESHARE_THUMBNAILS_TIME_LIMIT": "60s"])
        #expect(await waitFor { (try? await curl([url + "api/list?path=Other"]).1.contains("note19.txt")) == true })
        #expect(await usage.waitUntilQuiet(), "the server has started")
        let cpu = try #require(usage.cpuSeconds)
        // The two decodes, asked for by one client (not listed: nothing is made ahead).
        let answered = AnswerCount()
        let decodes = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for name in ["a.png", "b.png"] {
                    group.addTask {
                        let response = try await curlResponse([
                            "--max-time", "400", url + "api/thumbnail/Photos/" + name,
                        ])
                        answered.count.add(1, ordering: .sequentiallyConsistent)
                        return response.status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        // Under way: the server has spent a second of CPU on them (both run at once).
        #expect(await waitFor(timeout: .seconds(120)) { (usage.cpuSeconds ?? 0) - cpu > 1 }, "the decodes run")
        let clock = ContinuousClock()
        let start = clock.now
        let listing = try await curlResponse([url + "api/list?path=Other"])
        let waited = clock.now - start
        let spent = (usage.cpuSeconds ?? 0) - cpu
        print("listing answered in \(waited) while two 16384×16384 PNGs decode (server CPU +\(spent) s so far)")
        #expect(listing.status == 200 && listing.body.contains("note19.txt"))
        // Still decoding when the listing came back: the listing did not wait for one to end.
        #expect(
            answered.count.load(ordering: .sequentiallyConsistent) == 0,
            "a decode had ended: the listing was not answered while both ran")
        // A listing takes milliseconds; with the decodes on the disk work's
        // threads (Dispatch's global queue, one a core) it waited for one
        // to end: 3.4 s of CPU at least, 12 to 26 s in the review.
        #expect(waited < .seconds(2), "the listing took \(waited)")
        let statuses = try await decodes.value
        #expect(statuses == [200, 200], "the thumbnails are made")
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }

    @Test("a comic's 60 MiB page is held once while its cover is made, not read into one buffer and copied to another")
    func comicPageHeldOnce() async throws {
        let dir = try TemporaryFolder()
        // A JPEG of 60 MiB: 960 comment segments of 64 KiB before a small
        // picture; deflated in the comic to a few hundred KiB.
        var page: [UInt8] = [0xFF, 0xD8]
        let comment: [UInt8] = [0xFF, 0xFE, 0xFF, 0xFF] + [UInt8](repeating: 0x20, count: 65_533)
        for _ in 0..<960 { page += comment }
        page += try Self.photo().dropFirst(2)
        let pageMiB = Double(page.count) / 1_048_576
        try dir.write(page, to: "page.jpg")
        try await Self.comic(dir, "big.cbz", page: dir.path + "/page.jpg")
        try FileManager.default.removeItem(atPath: dir.path + "/page.jpg")
        let (serve, url, usage) = try await Self.serve(dir)
        #expect(await waitFor { (try? await curl([url + "api/list"]).1.contains("big.cbz")) == true })
        // Listed: its cover was made ahead; asked for, it is read from the cache.
        #expect(await usage.waitUntilQuiet(), "the thumbnails made ahead are done")
        try FileManager.default.removeItem(atPath: dir.path + "/.fileshare/thumbnails")
        try FileManager.default.createDirectory(
            atPath: dir.path + "/.fileshare/thumbnails", withIntermediateDirectories: true)
        // Made again, measured: the cache is empty.
        let before = try #require(usage.residentMiB)
        try usage.resetPeak()
        let response = try await curlResponse(["--max-time", "120", url + "api/thumbnail/big.cbz"])
        #expect(response.status == 200, "\(response.body.prefix(200))")
        let peak = try #require(usage.peakMiB)
        print("a comic's \(pageMiB) MiB page: server RSS \(before) MiB, peak \(peak) MiB (+\(peak - before))")
        // The page once (60 MiB), with a few MiB for the decode of its
        // 640×480 picture; read into one buffer and copied it was twice that.
        #expect(peak - before < pageMiB * 1.4, "the server's peak rose by \(peak - before) MiB")
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }

    /// A 640×480 grey JPEG with no embedded thumbnail, made by hand: a
    /// baseline frame of one component, every block an end of block (it
    /// decodes to mid-grey).
    static func photo() throws -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        bytes += segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
        bytes += segment(0xC0, [8, 0x01, 0xE0, 0x02, 0x80, 1, 1, 0x11, 0])
        bytes += segment(0xC4, [0x00, 1] + [UInt8](repeating: 0, count: 15) + [0])
        bytes += segment(0xC4, [0x10, 1] + [UInt8](repeating: 0, count: 15) + [0])
        bytes += segment(0xDA, [1, 1, 0x00, 0, 63, 0])
        // Two bits a block (DC category 0, end of block), 80×60 blocks.
        bytes += [UInt8](repeating: 0, count: 80 * 60 * 2 / 8)
        return bytes + [0xFF, 0xD9]
    }
}

/// How many thumbnail requests have been answered.
private final class AnswerCount: Sendable {
    let count = Atomic<Int>(0)
}
