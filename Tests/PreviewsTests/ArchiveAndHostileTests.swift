import CImageThumbnail
import FileshareTestSupport
import Foundation
import Testing

@testable import Previews

#if canImport(Glibc)
    import Glibc
#endif

/// Comics and books read from real ZIP archives, and hostile files of
/// every kind: each is refused (the server answers with the icon), fast,
/// without a large allocation.
@Suite("comic and book covers, hostile files")
struct ArchiveAndHostileTests {
    let thumbnailer = ImageThumbnailer(size: 256)

    func image(_ folder: TemporaryFolder, _ path: String, _ kind: ImageKind) throws -> RGBImage {
        try folder.withOpen(path) { fd in try thumbnailer.image(fd: fd, bytes: nil, kind: kind) }
    }

    /// Why making `kind`'s thumbnail of `path` failed; `nil` when it did not.
    func refusal(_ folder: TemporaryFolder, _ path: String, _ kind: ImageKind) throws -> ThumbnailError? {
        do {
            _ = try folder.withOpen(path) { fd in try thumbnailer.encoded(fd: fd, bytes: nil, kind: kind) }
            return nil
        } catch let error as ThumbnailError {
            return error
        }
    }

    @Test("a CBZ's first page in natural order, or the one ComicInfo.xml marks as its cover; deflated or stored")
    func comic() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let page2 = try ImageSamples.png(folder.path + "/p2.png", width: 800, height: 1200)
        try folder.write(try ImageSamples.jpeg(width: 600, height: 900), to: "p10.jpg")
        let info = try folder.write(
            Array(#"<ComicInfo><Pages><Page Image="1" Type="FrontCover"/></Pages></ComicInfo>"#.utf8),
            to: "ComicInfo.xml")
        for deflate in [true, false] {
            let plain = folder.path + "/plain-\(deflate).cbz"
            #expect(
                ImageSamples.python(
                    ["zip", plain, "comic/page10.jpg=" + folder.path + "/p10.jpg", "comic/page2.png=" + page2]
                        + (deflate ? ["--deflate"] : [])))
            let first = try image(folder, plain, .cbz)
            #expect(first.size == [171, 256], "page2.png, 800×1200")
            let marked = folder.path + "/marked-\(deflate).cbz"
            #expect(
                ImageSamples.python(
                    [
                        "zip", marked, "comic/page10.jpg=" + folder.path + "/p10.jpg", "comic/page2.png=" + page2,
                        "ComicInfo.xml=" + info,
                    ] + (deflate ? ["--deflate"] : [])))
            let cover = try image(folder, marked, .cbz)
            #expect(cover.size == [171, 256] && cover.quadrantColours == [.red, .blue, .blue, .blue])
            let bytes = try folder.withOpen(marked) { try thumbnailer.encoded(fd: $0, bytes: nil, kind: .cbz) }
            #expect(try ImageSamples.decodeJPEG(bytes).width == 171)
        }
    }

    @Test("an EPUB's declared cover (EPUB 3 and EPUB 2)", arguments: [true, false])
    func book(epub3: Bool) throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let cover = try ImageSamples.png(folder.path + "/cover.png", width: 600, height: 800)
        let other = try ImageSamples.png(folder.path + "/other.png", width: 100, height: 100)
        let container = try folder.write(
            Array(
                #"<?xml version="1.0"?><container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>"#
                    .utf8), to: "container.xml")
        let item =
            epub3
            ? #"<item id="c" href="images/cover%20art.png" properties="cover-image"/>"#
            : #"<item id="c" href="images/cover%20art.png"/>"#
        let meta = epub3 ? "" : #"<meta name="cover" content="c"/>"#
        let package = try folder.write(
            Array(
                "<package><metadata>\(meta)</metadata><manifest><item id=\"o\" href=\"a.png\"/>\(item)</manifest></package>"
                    .utf8),
            to: "content.opf")
        let book = folder.path + "/book.epub"
        #expect(
            ImageSamples.python([
                "zip", book, "META-INF/container.xml=" + container, "OEBPS/content.opf=" + package,
                "OEBPS/a.png=" + other, "OEBPS/images/cover art.png=" + cover, "--deflate",
            ]))
        let made = try image(folder, book, .epub)
        #expect(made.size == [192, 256] && made.quadrantColours == [.red, .blue, .blue, .blue])
    }

    @Test("hostile archives: a truncated one, a page claiming 10 GiB, a zip bomb, no ZIP at all, no cover")
    func hostileArchives() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let page = try ImageSamples.png(folder.path + "/p.png", width: 300, height: 300)
        let good = folder.path + "/good.cbz"
        #expect(ImageSamples.python(["zip", good, "p1.png=" + page, "p2.png=" + page, "--deflate"]))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
        let truncated = try folder.write(Array(bytes.prefix(bytes.count / 2)), to: "truncated.cbz")
        let claim = folder.path + "/claim.cbz"
        #expect(ImageSamples.python(["zip", claim, "p1.png=" + page, "--deflate", "--claim", "p1.png=10737418240"]))
        let bomb = folder.path + "/bomb.cbz"
        // 200 MiB of zeros whose directory says 1,000 bytes.
        #expect(ImageSamples.python(["zip", bomb, "--bomb", "p1.png=209715200"]))
        let notes = try folder.write(Array("just notes".utf8), to: "notes.txt")
        let noPages = folder.path + "/nopages.cbz"
        #expect(ImageSamples.python(["zip", noPages, "notes.txt=" + notes]))
        let garbage = try folder.write([UInt8](repeating: 0x50, count: 4096), to: "garbage.cbz")
        let lie = try folder.write(
            Array(bytes.prefix(bytes.count - 22))
                + Array(bytes.suffix(22)).enumerated().map {
                    // The end record's directory offset pointed past the file.
                    $0.offset >= 16 && $0.offset < 20 ? 0xEE : $0.element
                }, to: "lie.cbz")
        // As a comic, then as a book (which looks for its package document first).
        let expected: [(String, ThumbnailError.Reason, ThumbnailError.Reason)] = [
            (truncated, .failed, .failed), (claim, .tooCostly, .noImage), (bomb, .failed, .noImage),
            (noPages, .noImage, .noImage), (garbage, .failed, .failed), (lie, .failed, .failed),
        ]
        for (path, comic, book) in expected {
            let asComic = try refusal(folder, path, .cbz)
            #expect(asComic?.reason == comic, "\(path): \(String(describing: asComic))")
            let asBook = try refusal(folder, path, .epub)
            #expect(asBook?.reason == book, "\(path): \(String(describing: asBook))")
        }
        #expect(try image(folder, good, .cbz).width == 256, "the good archive still works")
    }

    @Test(
        "hostile images of every kind: truncated, a corrupt header or empty is a failure; a 60000×60000 bomb refused as too costly before decoding"
    )
    func hostileImages() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let png = try ImageSamples.png(folder.path + "/good.png", width: 640, height: 480)
        let webp = try ImageSamples.ffmpeg(png, to: folder.path + "/good.webp", ["-c:v", "libwebp"])
        let gif = try ImageSamples.ffmpeg(png, to: folder.path + "/good.gif")
        let heic = try ImageSamples.heic(folder.path + "/good.heic", width: 640, height: 480)
        try folder.write(try ImageSamples.jpeg(width: 640, height: 480), to: "good.jpg")
        let jpeg = folder.path + "/good.jpg"
        // Damaged: each a failure of its library.
        var damaged: [(String, ImageKind)] = []
        for (path, kind) in [(png, ImageKind.png), (webp, .webp), (gif, .gif), (heic, .heif), (jpeg, .jpeg)] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let name = URL(fileURLWithPath: path).lastPathComponent
            // Cut inside the header; the magic bytes with garbage after them.
            damaged.append((try folder.write(Array(bytes.prefix(20)), to: "cut-" + name), kind))
            damaged.append(
                (
                    try folder.write(
                        Array(bytes.prefix(12)) + [UInt8](repeating: 0xA5, count: 5000), to: "bad-" + name), kind
                ))
            damaged.append((try folder.write([], to: "empty-" + name), kind))
        }
        // Cut in the middle of their data: WebP and HEIF decode nothing of it.
        for (path, kind) in [(webp, ImageKind.webp), (heic, .heif)] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let name = "half-" + URL(fileURLWithPath: path).lastPathComponent
            damaged.append((try folder.write(Array(bytes.prefix(bytes.count / 2)), to: name), kind))
        }
        // Bombs: each refused as too costly, from its header, before decoding.
        var cases: [(String, ImageKind)] = []
        // Decompression bombs: headers declaring 60000×60000 (3.6 gigapixels).
        let pngBomb = try ImageSamples.png(
            folder.path + "/bomb.png", width: 64, height: 64, ["--declare", "60000x60000"])
        cases.append((pngBomb, .png))
        let gifBomb: [UInt8] =
            Array("GIF89a".utf8) + [0x60, 0xEA, 0x60, 0xEA, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
            + [0x2C, 0, 0, 0, 0, 0x60, 0xEA, 0x60, 0xEA, 0] + [2, 2, 0x4C, 0x01, 0] + [0x3B]
        cases.append((try folder.write(gifBomb, to: "bomb.gif"), .gif))
        // A lossless WebP header of 16384×16384, the format's largest, with no data after it.
        let bits = UInt32(16383) | UInt32(16383) << 14
        let vp8l: [UInt8] =
            [0x2F] + withUnsafeBytes(of: bits.littleEndian, Array.init) + [UInt8](repeating: 0, count: 32)
        let riff =
            Array("RIFF".utf8) + withUnsafeBytes(of: UInt32(4 + 8 + vp8l.count).littleEndian, Array.init)
            + Array("WEBPVP8L".utf8) + withUnsafeBytes(of: UInt32(vp8l.count).littleEndian, Array.init) + vp8l
        cases.append((try folder.write(riff, to: "bomb.webp"), .webp))
        // A real JPEG and HEIC whose headers are made to say 60000×60000.
        var jpegBomb = try [UInt8](Data(contentsOf: URL(fileURLWithPath: jpeg)))
        let frame = try #require((0..<jpegBomb.count - 9).first { jpegBomb[$0] == 0xFF && jpegBomb[$0 + 1] == 0xC0 })
        jpegBomb.replaceSubrange(frame + 5..<frame + 9, with: [0xEA, 0x60, 0xEA, 0x60])
        cases.append((try folder.write(jpegBomb, to: "bomb.jpg"), .jpeg))
        var heifBomb = try [UInt8](Data(contentsOf: URL(fileURLWithPath: heic)))
        let ispe = Array("ispe".utf8)
        let box = try #require((0..<heifBomb.count - 16).first { Array(heifBomb[$0..<$0 + 4]) == ispe })
        heifBomb.replaceSubrange(box + 8..<box + 16, with: [0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60])
        cases.append((try folder.write(heifBomb, to: "bomb.heic"), .heif))
        let clock = ContinuousClock()
        for (path, kind) in damaged {
            let start = clock.now
            let error = try refusal(folder, path, kind)
            #expect(error?.reason == .failed, "\(path): \(String(describing: error))")
            #expect(clock.now - start < .seconds(30), "\(path) took \(clock.now - start)")
        }
        for (path, kind) in cases {
            let start = clock.now
            let error = try refusal(folder, path, kind)
            #expect(error?.reason == .tooCostly, "\(path): \(String(describing: error))")
            // Its message names the size declared, or the memory it would take.
            #expect(error?.message.contains("60000") == true || error?.message.contains("MiB") == true, "\(path)")
            // Refused by their headers, never decoded (the bound is loose: a loaded machine is slow).
            #expect(clock.now - start < .seconds(30), "\(path) took \(clock.now - start)")
        }
        // A PNG cut after its first rows keeps them, as a cut JPEG or GIF does: a picture, white below.
        // (Large enough that libpng has read rows before the data runs out.)
        let halfPNG = try ImageSamples.png(folder.path + "/half.png", width: 4000, height: 3000, ["--truncate", "0.6"])
        #expect(try image(folder, halfPNG, .png).quadrantColours.first == .red)
    }

    @Test(
        "a HEIC whose HEVC stream is larger than the file declares is refused before libheif decodes it; within the budget it is made"
    )
    func heifStreamLargerThanDeclared() throws {
        try requireImageLibraries()
        let heif = try #require(ImageLibraries.shared.heif)
        let folder = try TemporaryFolder()
        // 4096×4096: 160 MiB to decode whole, over the 128 MiB budget.
        let pixels = JPEGBudgetTests.pattern(width: 4_096, height: 4_096)
        let path = folder.path + "/large.heic"
        let encoded = pixels.withUnsafeBufferPointer {
            cit_heif_encode(heif, $0.baseAddress, 4_096, 4_096, 1, nil, 0, path)
        }
        try #require(encoded == 0, "libheif has no HEVC encoder here")
        let honest = try refusal(folder, path, .heif)
        #expect(
            honest?.reason == .tooCostly && honest?.message.contains("4096×4096") == true,
            "\(String(describing: honest))")
        // The file made to declare 256×256 (its ispe box): within the budget by
        // what it declares, refused by what its stream says before a picture is made.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let ispe = Array("ispe".utf8)
        let box = try #require((0..<bytes.count - 16).first { Array(bytes[$0..<$0 + 4]) == ispe })
        bytes.replaceSubrange(box + 8..<box + 16, with: [0, 0, 1, 0, 0, 0, 1, 0])
        let lying = try folder.write(bytes, to: "lying.heic")
        let start = cit_now()
        let lie = try refusal(folder, lying, .heif)
        let cpu = Duration.nanoseconds(cit_now() - start)
        #expect(lie?.reason == .tooCostly && lie?.message.contains("HEVC stream") == true, "\(String(describing: lie))")
        // Refused before its 16.7 megapixels were decoded (0.4 s of CPU here, and 121 MiB).
        #expect(cpu < .milliseconds(200), "took \(cpu) of CPU")
        // A HEIC within the budget still decodes whole.
        let small = try ImageSamples.heic(folder.path + "/small.heic", width: 640, height: 480)
        #expect(try image(folder, small, .heif).size == [256, 192])
    }

    @Test("a PNG or GIF read row by row is given up at the time limit")
    func timeLimit() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let png = try ImageSamples.png(folder.path + "/slow.png", width: 2000, height: 1500)
        let gif = try ImageSamples.ffmpeg(png, to: folder.path + "/slow.gif")
        let hurried = ImageThumbnailer(libraries: .shared, timeLimit: .zero)
        for (path, kind) in [(png, ImageKind.png), (gif, .gif)] {
            let error = #expect(throws: ThumbnailError.self) {
                try folder.withOpen(path) { try hurried.image(fd: $0, bytes: nil, kind: kind) }
            }
            #expect(error?.reason == .timedOut, "\(String(describing: error))")
            #expect(try image(folder, path, kind).size == [256, 192], "in time")
        }
    }

    @Test("a 100-megapixel PNG takes a bounded amount of memory: read row by row, never whole")
    func largePNG() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let path = try ImageSamples.png(folder.path + "/large.png", width: 10_000, height: 10_000)
        let made = try image(folder, path, .png)
        #expect(made.size == [256, 256] && made.quadrantColours == [.red, .blue, .blue, .blue])
    }
}
