import FileWatching
import FileshareTestSupport
import Foundation
import Previews
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Samples made here, with the programs themselves where they are needed.
enum Samples {
    /// Runs ffmpeg to make a sample; `false` when it could not.
    static func ffmpeg(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-nostdin", "-v", "error", "-y"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Width and height of a PNG, from its header.
    static func pngSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count > 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { return nil }
        func number(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }
}

/// Whether a program the test needs is installed: skipped without it, failed on CI (.ci/run installs it).
func requireProgram(_ thumbnailer: ExternalThumbnailer, _ kind: ThumbnailKind) throws {
    try Requirement.require(
        thumbnailer.programs[kind] != nil,
        "\(kind.program) is missing (Debian package \(kind.package); .ci/run installs it)")
}

@Suite("thumbnails made by programs")
struct ExternalThumbnailerTests {
    static func open(_ path: String) throws -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        return fd
    }

    @Test("a PDF's first page, a video frame and an audio file's cover, each a PNG of at most 256 pixels a side")
    func kinds() async throws {
        let folder = try TemporaryFolder()
        // (The programs' time limit raised: a loaded machine runs pdftoppm and ffmpeg slowly.)
        let thumbnailer = ExternalThumbnailer(limits: .init(time: .seconds(60)), scratchFolder: folder.path)
        try requireProgram(thumbnailer, .pdf)
        try requireProgram(thumbnailer, .video)
        try writeFile(Data(TestPDF.bytes()), to: folder.path + "/doc.pdf")
        var fd = try Self.open(folder.path + "/doc.pdf")
        let page = try await thumbnailer.thumbnail(of: fd, kind: .pdf)
        close(fd)
        #expect(Samples.pngSize(page).map { [$0.width, $0.height] } == [192, 256])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["doc.pdf"], "no scratch left")

        #expect(
            Samples.ffmpeg([
                "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=10", "-t", "3", "-pix_fmt", "yuv420p",
                folder.path + "/clip.mp4",
            ]))
        fd = try Self.open(folder.path + "/clip.mp4")
        let frame = try await thumbnailer.thumbnail(of: fd, kind: .video)
        close(fd)
        #expect(Samples.pngSize(frame).map { [$0.width, $0.height] } == [256, 144])

        // A video shorter than the usual second in: its first frame.
        #expect(
            Samples.ffmpeg([
                "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-t", "0.3", "-pix_fmt", "yuv420p",
                folder.path + "/short.mp4",
            ]))
        fd = try Self.open(folder.path + "/short.mp4")
        let short = try await thumbnailer.thumbnail(of: fd, kind: .video)
        close(fd)
        #expect(Samples.pngSize(short).map { [$0.width, $0.height] } == [256, 192])

        // Audio with cover art, and without.
        #expect(
            Samples.ffmpeg([
                "-f", "lavfi", "-i", "testsrc=size=500x500:rate=1", "-frames:v", "1", folder.path + "/cover.png",
            ]))
        #expect(
            Samples.ffmpeg([
                "-f", "lavfi", "-i", "sine=duration=1", "-i", folder.path + "/cover.png", "-map", "0", "-map", "1",
                "-c:a", "libmp3lame", "-c:v", "png", "-disposition:v", "attached_pic", folder.path + "/song.mp3",
            ]))
        fd = try Self.open(folder.path + "/song.mp3")
        let cover = try await thumbnailer.thumbnail(of: fd, kind: .audio)
        close(fd)
        #expect(Samples.pngSize(cover).map { [$0.width, $0.height] } == [256, 256])
        #expect(Samples.ffmpeg(["-f", "lavfi", "-i", "sine=duration=1", folder.path + "/plain.wav"]))
        fd = try Self.open(folder.path + "/plain.wav")
        await #expect(throws: ThumbnailError.self) { try await thumbnailer.thumbnail(of: fd, kind: .audio) }
        close(fd)
    }

    @Test(
        "a corrupt file, a missing program, a program that hangs (killed at the time limit): errors, nothing left running"
    )
    func failures() async throws {
        let folder = try TemporaryFolder()
        let junk = folder.path + "/junk.pdf"
        try writeFile("%PDF-1.4 this is not really a PDF".utf8, to: junk)
        // (A loaded machine runs pdftoppm slowly: the junk must fail, not time out.)
        let found = ExternalThumbnailer(limits: .init(time: .seconds(60)), scratchFolder: folder.path)
        if found.programs[.pdf] != nil {
            let fd = try Self.open(junk)
            do {
                _ = try await found.thumbnail(of: fd, kind: .pdf)
                Issue.record("a thumbnail of junk")
            } catch {
                #expect(error.reason == .noImage || error.reason == .failed, "\(error)")
            }
            close(fd)
        }
        let none = ExternalThumbnailer(programs: [:], scratchFolder: folder.path)
        var fd = try Self.open(junk)
        do {
            _ = try await none.thumbnail(of: fd, kind: .video)
            Issue.record("a thumbnail without a program")
        } catch {
            #expect(error.reason == .programMissing && error.message.contains("apt-get install ffmpeg"))
        }
        close(fd)

        // A stand-in that never ends: killed at the limit.
        let hang = folder.path + "/hang.sh"
        try Data("#!/bin/sh\necho $$ > \(folder.path)/hang.pid\nexec sleep 300\n".utf8).write(
            to: URL(fileURLWithPath: hang))
        chmod(hang, 0o755)
        let slow = ExternalThumbnailer(
            programs: [.video: hang], limits: .init(time: .milliseconds(500)), scratchFolder: folder.path)
        fd = try Self.open(junk)
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try await slow.thumbnail(of: fd, kind: .video)
            Issue.record("a thumbnail from a program that hangs")
        } catch {
            // It slept: stopped on the clock, not for its CPU time.
            #expect(error.reason == .tookTooLong, "\(error)")
        }
        close(fd)
        // Far sooner than the stand-in's 300 s (the bound is loose: a loaded machine starts processes slowly).
        #expect(clock.now - start < .seconds(60), "\(clock.now - start)")
        let pid = try String(contentsOfFile: folder.path + "/hang.pid", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        // The stand-in (exec'd into sleep) is gone, not left behind.
        var gone = false
        for _ in 0..<200 where !gone {
            gone =
                kill(pid_t(pid) ?? 0, 0) != 0
                || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true
            if !gone { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(gone, "process \(pid) still runs")
    }

    /// Whether `prlimit` is on `PATH` (the thumbnailer looks for it the same way).
    static var hasPrlimit: Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: $0 + "/prlimit")
        }
    }

    @Test(
        "with prlimit, a run's limit is CPU time (whole seconds, rounded up); one stopped there (SIGXCPU) has timed out"
    )
    func cpuTime() async throws {
        try Requirement.require(ExternalThumbnailerTests.hasPrlimit, "prlimit is missing (Debian package util-linux)")
        let folder = try TemporaryFolder()
        let input = folder.path + "/input.mp4"
        try writeFile("not a video".utf8, to: input)
        // A stand-in that notes the CPU limit it runs under, then stops as the kernel would stop it.
        let script = folder.path + "/limited.sh"
        try Data("#!/bin/sh\nulimit -t > \(folder.path)/cpu.txt\nkill -XCPU $$\nsleep 300\n".utf8).write(
            to: URL(fileURLWithPath: script))
        chmod(script, 0o755)
        // Ten seconds at least: the clock's backstop (six times it) must outlast a slow start on a loaded
        // machine. With four (a 24 s backstop), CI once saw this trivial script take longer than that, and
        // the two runs after it 4–5 s each. The script stops itself at once, so the limit costs no time.
        for (time, seconds) in [
            (Duration.seconds(10), "10"), (.milliseconds(10_500), "11"), (.milliseconds(19_001), "20"),
        ] {
            let thumbnailer = ExternalThumbnailer(
                programs: [.video: script], limits: .init(time: time), scratchFolder: folder.path)
            let fd = try Self.open(input)
            defer { close(fd) }
            do {
                _ = try await thumbnailer.thumbnail(of: fd, kind: .video)
                Issue.record("a thumbnail from a program stopped at its CPU limit")
            } catch {
                #expect(error.reason == .timedOut && error.message.contains("CPU time"), "\(error)")
            }
            let noted = try String(contentsOfFile: folder.path + "/cpu.txt", encoding: .utf8)
            #expect(noted.trimmingCharacters(in: .whitespacesAndNewlines) == seconds)
        }
    }

    @Test("at most the configured number of runs at once")
    func bounded() async throws {
        let folder = try TemporaryFolder()
        let script = folder.path + "/count.sh"
        // Each run notes how many runs are going on while it runs.
        try writeFile(
            """
            #!/bin/sh
            mkdir "\(folder.path)/running.$$"
            ls -d "\(folder.path)"/running.* | wc -l >> "\(folder.path)/seen"
            sleep 0.3
            rmdir "\(folder.path)/running.$$"
            exit 1

            """.utf8,
            to: script)
        chmod(script, 0o755)
        let thumbnailer = ExternalThumbnailer(
            programs: [.audio: script], limits: .init(concurrent: 2), scratchFolder: folder.path)
        try writeFile("x".utf8, to: folder.path + "/in")
        let fd = try Self.open(folder.path + "/in")
        defer { close(fd) }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { _ = try? await thumbnailer.thumbnail(of: fd, kind: .audio) } }
        }
        let seen = try String(contentsOfFile: folder.path + "/seen", encoding: .utf8).split(whereSeparator: \.isNewline)
            .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        #expect(seen.count == 6 && seen.allSatisfy { $0 <= 2 }, "\(seen)")
    }
}

@Suite("the thumbnail cache")
struct ThumbnailCacheTests {
    @Test("kept by id and version; a new version replaces the old; bounded, the oldest going first")
    func cache() throws {
        let folder = try TemporaryFolder()
        let cache = ThumbnailCache(folder: folder.path + "/thumbnails", maximumBytes: 3000)
        let first = ThumbnailCache.name(id: "a1", modified: 1, size: 10)
        cache.keep([UInt8](repeating: 1, count: 1000), named: first, id: "a1")
        #expect(cache.thumbnail(named: first)?.count == 1000)
        let second = ThumbnailCache.name(id: "a1", modified: 2, size: 10)
        cache.keep([UInt8](repeating: 2, count: 1000), named: second, id: "a1")
        #expect(cache.thumbnail(named: first) == nil && cache.thumbnail(named: second)?.first == 2)
        for id in ["b", "c", "d"] {
            usleep(20_000)  // distinct modification times, so "oldest" is well defined
            cache.keep(
                [UInt8](repeating: 3, count: 1000), named: ThumbnailCache.name(id: id, modified: 1, size: 1), id: id)
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path + "/thumbnails").sorted()
        #expect(left.count == 3 && !left.contains(second), "\(left)")
    }

    @Test("the folder is listed once, not for each thumbnail kept; a new cache counts what an older one left")
    func runningSize() throws {
        let folder = try TemporaryFolder()
        let cache = ThumbnailCache(folder: folder.path + "/thumbnails", maximumBytes: 10_000)
        for number in 0..<50 {
            let id = "item-\(number)"
            cache.keep(
                [UInt8](repeating: 1, count: 500),
                named: ThumbnailCache.name(id: id, modified: 1, size: 1, format: "jpg"),
                id: id)
        }
        #expect(cache.listings == 1)
        #expect(cache.totalBytes == 10_000)
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.path + "/thumbnails")
        #expect(kept.count == 20 && kept.contains("item-49-1-1.jpg") && !kept.contains("item-0-1-1.jpg"), "\(kept)")
        // Another cache over the same folder, with a smaller bound: it
        // counts the 10,000 bytes it finds and trims them on its first keep.
        let smaller = ThumbnailCache(folder: folder.path + "/thumbnails", maximumBytes: 2000)
        smaller.keep([UInt8](repeating: 2, count: 500), named: "new-1-1.jpg", id: "new")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path + "/thumbnails")
        #expect(left.count == 4 && left.contains("new-1-1.jpg"), "\(left)")
        #expect(smaller.totalBytes == 2000)
    }
}

@Suite("kinds of thumbnail by media type")
struct ThumbnailKindTests {
    @Test("a media type's parameters do not matter; its case and anything else does")
    func kinds() {
        #expect(ImageKind(mediaType: "image/png") == .png)
        #expect(ImageKind(mediaType: "image/jpeg; q=1") == .jpeg)
        #expect(ImageKind(mediaType: "image/heic") == .heif && ImageKind(mediaType: "image/heif") == .heif)
        #expect(ImageKind(mediaType: "application/vnd.comicbook+zip") == .cbz)
        #expect(ImageKind(mediaType: "application/epub+zip") == .epub)
        for none in ["text/plain; charset=utf-8", "image/pngx", "IMAGE/PNG", "", ";image/png", "image/svg+xml"] {
            #expect(ImageKind(mediaType: none) == nil, "\(none)")
            #expect(ThumbnailKind(mediaType: none) == nil, "\(none)")
        }
        #expect(ThumbnailKind(mediaType: "application/pdf") == .pdf)
        #expect(ThumbnailKind(mediaType: "application/pdf; x=y") == .pdf)
        #expect(ThumbnailKind(mediaType: "video/mp4") == .video)
        #expect(ThumbnailKind(mediaType: "audio/ogg") == .audio)
        #expect(ThumbnailKind(mediaType: "application/pdfx") == nil)
    }
}
