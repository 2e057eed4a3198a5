import CImageThumbnail
import FileshareTestSupport
import Foundation
import Testing

@testable import Previews

#if canImport(Glibc)
    import Glibc
#endif

/// Images made for the tests: two colours, the top-left quadrant red and
/// the rest blue, so a thumbnail's size, colours and orientation can be
/// checked by pixel. Written by the libraries' own encoders (libturbojpeg,
/// libheif through the shim), by ffmpeg (WebP, GIF) and by
/// `Tests/Samples/make_sample.py` (PNG in its variants, ZIP archives).
enum ImageSamples {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The quadrant pattern as RGB pixels.
    static func quadrants(width: Int, height: Int, top: [UInt8] = [255, 0, 0], rest: [UInt8] = [0, 0, 255])
        -> [UInt8]
    {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let colour = x < width / 2 && y < height / 2 ? top : rest
                pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: colour)
            }
        }
        return pixels
    }

    /// Runs a program; whether it exited 0.
    static func run(_ executable: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// `make_sample.py` with these arguments.
    static func python(_ arguments: [String]) -> Bool {
        let script = packageRoot.appendingPathComponent("Tests/Samples/make_sample.py").path
        return run("/usr/bin/env", ["python3", script] + arguments)
    }

    /// A PNG of the pattern (see `make_sample.py png`).
    static func png(_ path: String, width: Int, height: Int, _ options: [String] = []) throws -> String {
        try #require(python(["png", path, String(width), String(height)] + options), "make_sample.py png failed")
        return path
    }

    /// `source` converted by ffmpeg to `path` (its extension says the format).
    static func ffmpeg(_ source: String, to path: String, _ options: [String] = []) throws -> String {
        try #require(
            run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source] + options + [path]),
            "ffmpeg could not write \(path)")
        return path
    }

    /// The pattern as a JPEG, with an EXIF block declaring `orientation`.
    static func jpeg(width: Int, height: Int, orientation: Int? = nil) throws -> [UInt8] {
        let codec = try JPEGCodec.loaded.get()
        let plain = try #require(
            codec.encode(rgb: quadrants(width: width, height: height), width: width, height: height, quality: 92))
        guard let orientation else { return plain }
        // IFD0 with one entry, Orientation (SHORT), big-endian.
        var tiff: [UInt8] = Array("MM".utf8) + [0x00, 0x2A, 0, 0, 0, 8, 0, 1]
        tiff += [0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0] + [0, 0, 0, 0]
        let payload = Array("Exif\0\0".utf8) + tiff
        let segment: [UInt8] = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)]
        return Array(plain.prefix(2)) + segment + payload + Array(plain.dropFirst(2))
    }

    /// The pattern as a HEIC from libheif's own encoder, `orientation`
    /// stored as irot/imir, with a thumbnail (a green image's) when asked.
    static func heic(_ path: String, width: Int, height: Int, orientation: Int = 1, thumbnailSide: Int? = nil) throws
        -> String
    {
        let heif = try #require(ImageLibraries.shared.heif, "libheif is missing")
        let pixels = quadrants(width: width, height: height)
        let green = [UInt8](repeating: 0, count: width * height * 3).enumerated().map { $0.offset % 3 == 1 ? 255 : 0 }
            .map(UInt8.init)
        let status = pixels.withUnsafeBufferPointer { main in
            green.withUnsafeBufferPointer { thumbnail in
                cit_heif_encode(
                    heif, main.baseAddress, Int32(width), Int32(height), Int32(orientation),
                    thumbnailSide == nil ? nil : thumbnail.baseAddress, Int32(thumbnailSide ?? 0), path)
            }
        }
        try #require(status == 0, "libheif has no HEVC encoder here")
        return path
    }

    /// A JPEG's pixels, decoded whole.
    static func decodeJPEG(_ bytes: [UInt8]) throws -> RGBImage {
        try JPEGCodec.loaded.get().decode(fd: -1, bytes: bytes, maxSide: 1 << 20)
    }
}

/// A colour close to one of the pattern's (JPEG and HEVC shift them a little).
enum Colour: Equatable {
    case red, blue, green, other

    init(_ pixel: (red: UInt8, green: UInt8, blue: UInt8)) {
        switch (pixel.red, pixel.green, pixel.blue) {
        case (200..., ..<70, ..<70): self = .red
        case (..<70, ..<70, 200...): self = .blue
        case (..<70, 200..., ..<70): self = .green
        default: self = .other
        }
    }
}

extension RGBImage {
    /// Width and height.
    var size: [Int] { [width, height] }

    /// The colours at the centre of each quadrant: top-left, top-right, bottom-left, bottom-right.
    var quadrantColours: [Colour] {
        [
            Colour(pixel(x: width / 4, y: height / 4)), Colour(pixel(x: width * 3 / 4, y: height / 4)),
            Colour(pixel(x: width / 4, y: height * 3 / 4)), Colour(pixel(x: width * 3 / 4, y: height * 3 / 4)),
        ]
    }
}

/// Whether every image library is here; CI (whose `.ci/run` installs them) fails without one.
func requireImageLibraries() throws {
    let missing = ImageLibraries.shared.missing
    try Requirement.require(missing.isEmpty, "image libraries missing (.ci/run installs them): \(missing)")
}

extension TemporaryFolder {
    /// Runs `body` with a read-only descriptor of the file at `path`.
    func withOpen<T>(_ path: String, _ body: (Int32) throws -> T) throws -> T {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0, "cannot open \(path)")
        defer { close(fd) }
        return try body(fd)
    }
}
