import FileshareTestSupport
import Foundation
import Previews
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// libturbojpeg loaded at run time: the build needs no JPEG header or
/// library, and without the library nothing fails but made thumbnails.
@Suite("JPEG codec")
struct JPEGCodecTests {
    /// Returns when libturbojpeg is loaded; otherwise the test is skipped,
    /// or fails under CI, whose .ci/run installs it.
    static func requireLibrary(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try Requirement.require(
            (try? JPEGCodec.loaded.get()) != nil, "libturbojpeg is missing (Debian package libturbojpeg0)",
            sourceLocation: sourceLocation)
    }

    /// RGB pixels as a JPEG, made by the loaded library.
    static func encode(rgb pixels: [UInt8], width: Int, height: Int, quality: Int) throws -> [UInt8]? {
        try JPEGCodec.loaded.get().encode(rgb: pixels, width: width, height: height, quality: quality)
    }

    /// The package itself, found from this file.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("the C targets include no image or zlib header and the package links no such library")
    func buildsWithoutImageHeaders() throws {
        for targetName in ["CJPEGThumbnail", "CImageThumbnail"] {
            let target = JPEGCodecTests.packageRoot.appendingPathComponent("Sources/" + targetName)
            let files = try #require(FileManager.default.subpaths(atPath: target.path)).filter {
                $0.hasSuffix(".c") || $0.hasSuffix(".h")
            }
            #expect(!files.isEmpty)
            for file in files {
                let text = try String(contentsOf: target.appendingPathComponent(file), encoding: .utf8)
                let includes = text.split(separator: "\n").filter {
                    $0.trimmingCharacters(in: .whitespaces).hasPrefix("#include")
                }
                #expect(!includes.isEmpty)
                for library in ["jpeg", "png", "webp", "gif", "heif", "zlib"] {
                    #expect(!includes.contains { $0.contains(library) }, "\(file) includes a \(library) header")
                }
            }
        }
        let manifest = try String(
            contentsOf: JPEGCodecTests.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        for library in ["jpeg", "turbojpeg", "png16", "png", "webp", "gif", "heif", "z"] {
            #expect(!manifest.contains("linkedLibrary(\"\(library)\")"), "links \(library)")
        }
    }

    @Test("a missing library is reported with the dynamic linker's reason, and nothing else fails")
    func missingLibrary() throws {
        let result = JPEGCodec.load(["libfileshare-missing-turbojpeg.so.0", "/nonexistent/libturbojpeg.so.0"])
        guard case .failure(let unavailable) = result else {
            Issue.record("a missing library was loaded")
            return
        }
        #expect(unavailable.reasons.count == 2)
        #expect(unavailable.description.contains("libfileshare-missing-turbojpeg.so.0"))
    }

    @Test("a library without the TurboJPEG functions is not taken for one")
    func wrongLibrary() throws {
        // The C library is loaded in every process and has none of them.
        guard case .failure(let unavailable) = JPEGCodec.load(["libc.so.6"]) else {
            Issue.record("libc was taken for libturbojpeg")
            return
        }
        #expect(unavailable.description.contains("tjInitDecompress"))
    }

    @Test(
        "decoded at 1/2 to 1/8 scale, from a file or from memory; input that is not a JPEG refused, a cut-short one still decoded"
    )
    func thumbnails() throws {
        try Self.requireLibrary()
        let codec = try JPEGCodec.loaded.get()
        let folder = try TemporaryFolder()
        let (width, height) = (1000, 700)
        let pixels = [UInt8](repeating: 0x80, count: width * height * 3)
        let photo = try #require(codec.encode(rgb: pixels, width: width, height: height, quality: 90))
        for (maxSide, expectedWidth) in [(1000, 1000), (400, 500), (200, 250), (100, 125), (10, 125)] {
            let image = try folder.withFile(photo) { try codec.decode(fd: $0, maxSide: maxSide) }
            #expect(image.width == expectedWidth && image.height == (expectedWidth * 7 + 9) / 10, "max side \(maxSide)")
            // The same from bytes in memory (a comic's page).
            #expect(try codec.decode(fd: -1, bytes: photo, maxSide: maxSide).width == expectedWidth)
        }
        for garbage in [
            [UInt8](), [0xFF, 0xD8], Array("not a JPEG at all".utf8),
            [0xFF, 0xD8, 0xFF, 0xC0] + [UInt8](repeating: 0xFF, count: 300),
        ] {
            let error = #expect(throws: ThumbnailError.self) {
                try folder.withFile(garbage) { try codec.decode(fd: $0, maxSide: 256) }
            }
            #expect(error?.reason == .failed, "\(garbage.prefix(8))")
        }
        // A photo cut short still gives a picture (libjpeg's warning, not an error).
        let cut = Array(photo.prefix(photo.count / 2))
        #expect(try folder.withFile(cut) { try codec.decode(fd: $0, maxSide: 256) }.width == 500)
    }

    @Test("one codec serves many threads at once")
    func concurrentThumbnails() async throws {
        try Self.requireLibrary()
        let codec = try JPEGCodec.loaded.get()
        let folder = try TemporaryFolder()
        let pixels = (0..<(640 * 480 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let photo = try #require(codec.encode(rgb: pixels, width: 640, height: 480, quality: 85))
        let path = try folder.write(photo, to: "photo.jpg")
        let sizes = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let fd = open(path, O_RDONLY)
                    defer { close(fd) }
                    return try? codec.decode(fd: fd, maxSide: 64).width
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sizes == [Int?](repeating: 80, count: 16))
    }
}

extension TemporaryFolder {
    /// Runs `body` with a descriptor of a new file holding `bytes`.
    fileprivate func withFile<T>(_ bytes: [UInt8], _ body: (Int32) throws -> T) throws -> T {
        let fd = open(try write(bytes, to: UUID().uuidString), O_RDONLY)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        return try body(fd)
    }
}
