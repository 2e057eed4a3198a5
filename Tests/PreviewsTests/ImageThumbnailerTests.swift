import FileshareTestSupport
import Foundation
import Testing

@testable import Previews

#if canImport(Glibc)
    import Glibc
#endif

/// Thumbnails of images decoded in the process, from real files of every
/// kind made here: each has the asked size, the right colours where they
/// should be, and the orientation the file declares.
@Suite("image thumbnails")
struct ImageThumbnailerTests {
    let thumbnailer = ImageThumbnailer(size: 256)

    func image(_ folder: TemporaryFolder, _ path: String, _ kind: ImageKind) throws -> RGBImage {
        try folder.withOpen(path) { fd in try thumbnailer.image(fd: fd, bytes: nil, kind: kind) }
    }

    @Test("every kind is made on a machine with the libraries")
    func kinds() throws {
        try requireImageLibraries()
        #expect(Set(thumbnailer.kinds) == Set(ImageKind.allCases))
        #expect(thumbnailer.missingLibraries == nil)
    }

    @Test(
        "PNG, WebP (lossy and lossless), GIF, JPEG and HEIC: 640×480 becomes 256×192 with red top-left",
        arguments: ["png", "webp", "lossless.webp", "gif", "jpg", "heic"])
    func landscape(format: String) async throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let png = try ImageSamples.png(folder.path + "/source.png", width: 640, height: 480)
        let path = folder.path + "/sample." + format
        let kind: ImageKind
        switch format {
        case "png":
            kind = .png
            try FileManager.default.copyItem(atPath: png, toPath: path)
        case "webp":
            kind = .webp
            _ = try ImageSamples.ffmpeg(png, to: path, ["-c:v", "libwebp", "-quality", "90"])
        case "lossless.webp":
            kind = .webp
            _ = try ImageSamples.ffmpeg(png, to: path, ["-c:v", "libwebp", "-lossless", "1"])
        case "gif":
            kind = .gif
            _ = try ImageSamples.ffmpeg(png, to: path)
        case "jpg":
            kind = .jpeg
            try folder.write(try ImageSamples.jpeg(width: 640, height: 480), to: "sample.jpg")
        default:
            kind = .heif
            _ = try ImageSamples.heic(path, width: 640, height: 480)
        }
        let made = try image(folder, path, kind)
        #expect(made.size == [256, 192])
        #expect(made.quadrantColours == [.red, .blue, .blue, .blue], "\(made.quadrantColours)")
        // The bytes the server sends: a JPEG of the same size and colours.
        let bytes = try folder.withOpen(path) { fd in try thumbnailer.encoded(fd: fd, bytes: nil, kind: kind) }
        let sent = try ImageSamples.decodeJPEG(bytes)
        #expect(sent.size == [256, 192] && sent.quadrantColours == made.quadrantColours)
        // And the same through the pool, off the cooperative threads.
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(try await thumbnailer.thumbnail(of: fd, kind: kind) == bytes)
    }

    @Test("an image smaller than the size asked for keeps its own size")
    func small() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let made = try image(folder, try ImageSamples.png(folder.path + "/s.png", width: 40, height: 30), .png)
        #expect(made.size == [40, 30] && made.quadrantColours == [.red, .blue, .blue, .blue])
    }

    @Test(
        "orientation: JPEG's EXIF, PNG's eXIf and HEIF's irot turn the picture (6: a quarter turn clockwise, 8: anticlockwise, 3: a half)",
        arguments: [("jpg", 6), ("jpg", 8), ("jpg", 3), ("png", 6), ("png", 8), ("heic", 6), ("heic", 8)])
    func orientation(format: String, orientation: Int) throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let path = folder.path + "/turned." + format
        let kind: ImageKind
        switch format {
        case "jpg":
            kind = .jpeg
            try folder.write(try ImageSamples.jpeg(width: 640, height: 480, orientation: orientation), to: "turned.jpg")
        case "png":
            kind = .png
            _ = try ImageSamples.png(path, width: 640, height: 480, ["--exif-orientation", String(orientation)])
        default:
            kind = .heif
            _ = try ImageSamples.heic(path, width: 640, height: 480, orientation: orientation)
        }
        let made = try image(folder, path, kind)
        // Stored red top-left: a clockwise turn puts it top-right, an anticlockwise one bottom-left.
        switch orientation {
        case 6:
            #expect(made.size == [192, 256])
            #expect(made.quadrantColours == [.blue, .red, .blue, .blue], "\(made.quadrantColours)")
        case 8:
            #expect(made.size == [192, 256])
            #expect(made.quadrantColours == [.blue, .blue, .red, .blue], "\(made.quadrantColours)")
        default:
            #expect(made.size == [256, 192])
            #expect(made.quadrantColours == [.blue, .blue, .blue, .red], "\(made.quadrantColours)")
        }
    }

    @Test("HEIF: the embedded thumbnail is used when it is large enough, the image decoded when it is not")
    func heifThumbnail() throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        // The embedded thumbnail is made from a green picture: green means it was used.
        let large = try ImageSamples.heic(folder.path + "/large.heic", width: 1024, height: 768, thumbnailSide: 320)
        let fromThumbnail = try image(folder, large, .heif)
        #expect(fromThumbnail.size == [256, 192])
        #expect(fromThumbnail.quadrantColours == [.green, .green, .green, .green])
        let tiny = try ImageSamples.heic(folder.path + "/tiny.heic", width: 1024, height: 768, thumbnailSide: 96)
        let decoded = try image(folder, tiny, .heif)
        #expect(decoded.size == [256, 192])
        #expect(decoded.quadrantColours == [.red, .blue, .blue, .blue])
    }

    @Test(
        "interlaced PNG: a large one read through its last pass, a small one whole",
        arguments: [(1000, 700, [256, 179]), (300, 200, [256, 171]), (100, 70, [100, 70])])
    func interlaced(width: Int, height: Int, size: [Int]) throws {
        try requireImageLibraries()
        let folder = try TemporaryFolder()
        let path = try ImageSamples.png(folder.path + "/i.png", width: width, height: height, ["--interlace"])
        let made = try image(folder, path, .png)
        #expect(made.size == size)
        #expect(made.quadrantColours == [.red, .blue, .blue, .blue], "\(made.quadrantColours)")
        // No white stripes: every row of the thumbnail has a source row.
        for y in 0..<made.height { #expect(Colour(made.pixel(x: made.width - 1, y: y)) == .blue, "row \(y)") }
    }

    @Test("a JPEG's embedded thumbnail is sent as it is when it needs no turning")
    func embedded() throws {
        let folder = try TemporaryFolder()
        let embedded: [UInt8] = [0xFF, 0xD8] + [UInt8](repeating: 0x42, count: 200) + [0xFF, 0xD9]
        let path = try folder.write(TestJPEG.bytes(thumbnail: embedded, padding: 100_000), to: "camera.jpg")
        let none = ImageThumbnailer(libraries: ImageLibraries(names: .none))
        #expect(try folder.withOpen(path) { try none.encoded(fd: $0, bytes: nil, kind: .jpeg) } == embedded)
    }

    @Test("without the libraries: no kinds, a warning naming the packages, and each thumbnail refused")
    func missingLibraries() throws {
        let folder = try TemporaryFolder()
        let none = ImageThumbnailer(libraries: ImageLibraries(names: .none))
        #expect(none.kinds.isEmpty)
        let warning = try #require(none.missingLibraries)
        for package in ["libpng16-16", "libwebp7", "libgif7", "libheif1", "libturbojpeg0"] {
            #expect(warning.contains(package), "\(warning)")
        }
        let path = try folder.write([0x89, 0x50, 0x4E, 0x47], to: "x.png")
        #expect(throws: ThumbnailError.self) {
            try folder.withOpen(path) { try none.encoded(fd: $0, bytes: nil, kind: .png) }
        }
        #expect(!none.mayMake(.png) && none.mayMake(.jpeg))
    }

    @Test("a library without the functions it should have is not taken for it")
    func wrongLibrary() {
        var names = ImageLibraries.Names()
        names.png = ["libc.so.6"]
        names.heif = ["libc.so.6"]
        let libraries = ImageLibraries(names: names)
        #expect(libraries.png == nil && libraries.heif == nil)
        #expect(libraries.missing["libpng16"]?.contains("png_") == true, "\(libraries.missing)")
    }
}

/// Orientation and scaling on pixels, without a file.
@Suite("pixels")
struct PixelTests {
    /// 3×2: a different value in each pixel.
    let image = RGBImage(pixels: (0..<18).map { UInt8($0 / 3) }, width: 3, height: 2)

    @Test(
        "the eight EXIF orientations, as each pixel lands",
        arguments: [
            (1, [0, 1, 2, 3, 4, 5]), (2, [2, 1, 0, 5, 4, 3]), (3, [5, 4, 3, 2, 1, 0]), (4, [3, 4, 5, 0, 1, 2]),
            (5, [0, 3, 1, 4, 2, 5]), (6, [3, 0, 4, 1, 5, 2]), (7, [5, 2, 4, 1, 3, 0]), (8, [2, 5, 1, 4, 0, 3]),
        ])
    func orientations(orientation: Int, expected: [Int]) {
        let turned = image.oriented(orientation)
        #expect(turned.width * turned.height == 6)
        #expect(orientation < 5 ? turned.width == 3 : turned.width == 2)
        #expect(stride(from: 0, to: 18, by: 3).map { Int(turned.pixels[$0]) } == expected)
    }

    @Test("box filter: averages, longer side exactly the size, never enlarged")
    func fitted() throws {
        let checker = RGBImage(
            pixels: (0..<(4 * 2)).flatMap { index -> [UInt8] in index % 2 == 0 ? [0, 0, 0] : [200, 100, 50] },
            width: 4, height: 2)
        let half = try #require(checker.fitted(maxSide: 2))
        #expect(half.size == [2, 1])
        #expect(half.pixels == [100, 50, 25, 100, 50, 25])
        #expect(checker.fitted(maxSide: 10) == checker)
    }
}

/// Names and small XML files, without an archive.
@Suite("covers of comics and books")
struct ArchiveCoverTests {
    @Test("natural order: page2 before page10, case ignored, leading zeros too")
    func naturalOrder() {
        let names = ["page10.jpg", "Page2.jpg", "page1.jpg", "page02b.jpg", "cover.jpg", "page100.jpg"]
        #expect(
            names.sorted(by: NaturalOrder.precedes)
                == ["cover.jpg", "page1.jpg", "Page2.jpg", "page02b.jpg", "page10.jpg", "page100.jpg"])
    }

    @Test("a comic's pages: images only, no hidden files or __MACOSX; the cover ComicInfo.xml names")
    func comic() {
        let pages = ArchiveCover.comicPages([
            "ComicInfo.xml", "ch1/p10.jpg", "ch1/p2.png", "__MACOSX/ch1/._p2.png", "ch1/.thumb.jpg", "notes.txt",
        ])
        #expect(pages == ["ch1/p2.png", "ch1/p10.jpg"])
        #expect(ArchiveCover.comicCover(pages: pages, comicInfo: nil) == "ch1/p2.png")
        let info = """
            <?xml version="1.0"?><ComicInfo><Pages><Page Image="0" Type="Story"/>
            <!-- <Page Image="0" Type="FrontCover"/> --><Page Image='1' Type="FrontCover" /></Pages></ComicInfo>
            """
        #expect(ArchiveCover.comicCover(pages: pages, comicInfo: info) == "ch1/p10.jpg")
        #expect(
            ArchiveCover.comicCover(pages: pages, comicInfo: #"<Page Image="7" Type="FrontCover"/>"#) == "ch1/p2.png")
    }

    @Test("a book's cover: EPUB 3's cover-image, EPUB 2's meta, paths relative to the package")
    func book() {
        let container = """
            <container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>
            <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>
            """
        #expect(ArchiveCover.bookPackage(container: container) == "OEBPS/content.opf")
        let epub3 = """
            <package><manifest><item id="a" href="text/ch1.xhtml"/>
            <item id="c" href="images/cover%20art.png" properties="svg cover-image" media-type="image/png"/></manifest></package>
            """
        #expect(
            ArchiveCover.bookCover(package: epub3, packagePath: "OEBPS/content.opf") == "OEBPS/images/cover art.png")
        let epub2 = """
            <opf:package><opf:metadata><meta name="cover" content="img1"/></opf:metadata>
            <opf:manifest><opf:item id="img1" href="../art/front.jpg"/></opf:manifest></opf:package>
            """
        #expect(ArchiveCover.bookCover(package: epub2, packagePath: "OEBPS/content.opf") == "art/front.jpg")
        #expect(ArchiveCover.bookCover(package: "<package/>", packagePath: "content.opf") == nil)
        #expect(ArchiveCover.resolve("../../x.png", from: "a/content.opf") == nil, "nothing above the archive")
    }
}
