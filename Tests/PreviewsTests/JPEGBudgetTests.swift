import CImageThumbnail
import CJPEGThumbnail
import FileshareTestSupport
import Foundation
import Testing

@testable import Previews

#if canImport(Glibc)
    import Glibc
#endif

/// A JPEG's cost read from its markers before it is decoded: what libjpeg
/// will allocate and the work its scans ask for, and the refusal of a file
/// over a budget, fast, for that reason; photos within the budgets are made
/// as before.
@Suite("JPEG budgets")
struct JPEGBudgetTests {
    let thumbnailer = ImageThumbnailer(size: 256)

    /// What `cjt_inspect` reads from `bytes`.
    static func frame(_ bytes: [UInt8]) throws -> cjt_frame {
        var frame = cjt_frame()
        let status = bytes.withUnsafeBufferPointer { cjt_inspect($0.baseAddress, UInt($0.count), &frame) }
        try #require(status == 0, "not read as a JPEG")
        return frame
    }

    /// The quadrant pattern, rows made once each: a large sample in little time.
    static func pattern(width: Int, height: Int) -> [UInt8] {
        let red: [UInt8] = [255, 0, 0]
        let blue: [UInt8] = [0, 0, 255]
        let top =
            Array([[UInt8]](repeating: red, count: width / 2).joined())
            + Array([[UInt8]](repeating: blue, count: width - width / 2).joined())
        let rest = Array([[UInt8]](repeating: blue, count: width).joined())
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3)
        for y in 0..<height { pixels += y < height / 2 ? top : rest }
        return pixels
    }

    @Test("markers read as libjpeg reads them: baseline streams, progressive keeps whole-image coefficients")
    func inspect() throws {
        try requireImageLibraries()
        let codec = try JPEGCodec.loaded.get()
        let pixels = Self.pattern(width: 640, height: 480)
        let baseline = try #require(codec.encode(rgb: pixels, width: 640, height: 480, quality: 90))
        let plain = try Self.frame(baseline)
        #expect(plain.width == 640 && plain.height == 480 && plain.components == 3)
        #expect(plain.progressive == 0 && plain.whole_image == 0 && plain.scans == 1 && plain.coefficient_bytes == 0)
        let progressive = try #require(
            codec.encode(rgb: pixels, width: 640, height: 480, quality: 90, progressive: true))
        let frame = try Self.frame(progressive)
        #expect(frame.marker == 0xC2 && frame.progressive == 1 && frame.whole_image == 1)
        // libjpeg's usual progression for colour: 10 scans.
        #expect(frame.scans == 10)
        // 4:2:0: 80×60 luma blocks and 40×30 of each chroma, 128 bytes each.
        #expect(frame.blocks == 4_800 + 2 * 1_200 && frame.coefficient_bytes == 7_200 * 128)
        // Bytes between segments that are no marker are skipped, as libjpeg skips them.
        let padded = Array(progressive.prefix(2)) + [0x00, 0x12, 0x34] + Array(progressive.dropFirst(2))
        #expect(try Self.frame(padded).scans == 10)
        // The hostile file of the review: 12000×12000 in 231 bytes, 2 bytes a sample to decode.
        let hostile = HostileJPEG.progressive(width: 12_000, height: 12_000, scans: 10)
        #expect(hostile.count < 300)
        let bomb = try Self.frame(hostile)
        #expect(bomb.whole_image == 1 && bomb.scans == 10 && bomb.coefficient_bytes == 1_500 * 1_500 * 128)
        // Not JPEGs: no SOI, no frame before the scan, a size of 0.
        var frame0 = cjt_frame()
        for bytes: [UInt8] in [
            [], Array("GIF89a".utf8), [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 63, 0],
            HostileJPEG.progressive(width: 0, height: 100, scans: 2),
        ] {
            #expect(bytes.withUnsafeBufferPointer { cjt_inspect($0.baseAddress, UInt($0.count), &frame0) } == -1)
        }
    }

    /// Why `bytes`' thumbnail was refused, and the decoding thread's CPU time it took.
    func refusal(_ folder: TemporaryFolder, _ bytes: [UInt8], _ name: String) throws -> (ThumbnailError?, Duration) {
        let path = try folder.write(bytes, to: name)
        let start = cit_now()
        do {
            _ = try folder.withOpen(path) { try thumbnailer.image(fd: $0, bytes: nil, kind: .jpeg) }
            return (nil, .nanoseconds(cit_now() - start))
        } catch let error as ThumbnailError {
            return (error, .nanoseconds(cit_now() - start))
        }
    }

    @Test(
        "over a budget, refused from the headers in milliseconds: whole-image memory, more than 500 scans, too much work"
    )
    func refused() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        // 275 MiB of coefficients (the review's 281 MiB raise); 13 s of CPU
        // before this change; 400 refinement scans of every block, 1.8 s.
        let cases: [(String, [UInt8], String)] = [
            ("huge.jpg", HostileJPEG.progressive(width: 12_000, height: 12_000, scans: 10), "more than the 80 MiB"),
            (
                "scans.jpg", HostileJPEG.progressive(width: 2_000, height: 2_000, scans: 3_000, withData: true),
                "3000 scans"
            ),
            (
                "work.jpg", HostileJPEG.progressive(width: 2_000, height: 2_000, scans: 400, withData: true),
                "times the work"
            ),
        ]
        for (name, bytes, says) in cases {
            let (error, cpu) = try refusal(folder, bytes, name)
            #expect(error?.reason == .tooCostly, "\(name): \(String(describing: error))")
            #expect(error?.message.contains(says) == true, "\(name): \(String(describing: error))")
            // Read, judged and refused: the decoding would take a second or more.
            #expect(cpu < .milliseconds(200), "\(name) took \(cpu) of CPU")
        }
        // The same inside a comic.
        let page = try folder.write(cases[0].1, to: "page.jpg")
        let comic = folder.path + "/huge.cbz"
        #expect(ImageSamples.python(["zip", comic, "p1.jpg=" + page, "--deflate"]))
        let error = #expect(throws: ThumbnailError.self) {
            try folder.withOpen(comic) { try thumbnailer.image(fd: $0, bytes: nil, kind: .cbz) }
        }
        #expect(error?.reason == .tooCostly && error?.message.contains("more than the 80 MiB") == true)
    }

    @Test("within the budgets: a 12-megapixel photo, baseline and progressive, and a file of 100 scans are made")
    func withinBudgets() throws {
        try requireImageLibraries()
        let codec = try JPEGCodec.loaded.get()
        let folder = try TemporaryFolder()
        let pixels = Self.pattern(width: 4_000, height: 3_000)
        for progressive in [false, true] {
            let photo = try #require(
                codec.encode(rgb: pixels, width: 4_000, height: 3_000, quality: 90, progressive: progressive))
            let path = try folder.write(photo, to: "photo-\(progressive).jpg")
            let made = try folder.withOpen(path) { try thumbnailer.image(fd: $0, bytes: nil, kind: .jpeg) }
            #expect(made.size == [256, 192] && made.quadrantColours == [.red, .blue, .blue, .blue])
        }
        // 2000×2000 in 100 scans: half the work allowed; a grey picture.
        let scans = HostileJPEG.progressive(width: 2_000, height: 2_000, scans: 100, withData: true)
        let path = try folder.write(scans, to: "scans.jpg")
        let made = try folder.withOpen(path) { try thumbnailer.image(fd: $0, bytes: nil, kind: .jpeg) }
        #expect(made.size == [256, 256])
    }
}
