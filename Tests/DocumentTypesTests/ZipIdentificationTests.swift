import DocumentTypes
import FileshareTestSupport
import Foundation
import Testing

/// Types built on ZIP told apart by their entries, from the central
/// directory read with bounded reads, or from the local headers of a prefix.
@Suite("ZIP-based types")
struct ZipIdentificationTests {
    let registry = DocumentTypeRegistry.standard

    /// A kind of archive, made in any style.
    struct Archive: Sendable, CustomTestStringConvertible {
        var name: String
        var identifier: TypeIdentifier
        var make: @Sendable (ZipStyle) -> [UInt8]

        init(_ name: String, _ identifier: TypeIdentifier, _ make: @escaping @Sendable (ZipStyle) -> [UInt8]) {
            self.name = name
            self.identifier = identifier
            self.make = make
        }

        var testDescription: String { name }
    }

    static let zipBased: [Archive] = [
        Archive("book.epub", "org.idpf.epub-container", { epub(style: $0) }),
        Archive(
            "letter.docx", "org.openxmlformats.wordprocessingml.document",
            {
                officeOpenXML(["word/document.xml": "<w:document/>"], style: $0)
            }),
        Archive(
            "budget.xlsx", "org.openxmlformats.spreadsheetml.sheet",
            {
                officeOpenXML(["xl/workbook.xml": "<workbook/>"], style: $0)
            }),
        Archive(
            "talk.pptx", "org.openxmlformats.presentationml.presentation",
            {
                officeOpenXML(["ppt/presentation.xml": "<p:presentation/>"], style: $0)
            }),
        Archive(
            "letter.odt", "org.oasis-open.opendocument.text",
            {
                openDocument("application/vnd.oasis.opendocument.text", style: $0)
            }),
        Archive("Issue 1.cbz", "com.comicbook.cbz", { zipArchive(Samples.comicPages, style: $0) }),
        Archive("files.zip", "public.zip-archive", { zipArchive(texts: [("a.txt", "a")], style: $0) }),
    ]

    @Test(
        "every style of archive: sizes in local headers, in data descriptors, and ZIP64",
        arguments: zipBased.flatMap { sample in ZipStyle.allCases.map { (sample, $0) } })
    func styles(sample: Archive, style: ZipStyle) throws {
        let (name, identifier) = (sample.name, sample.identifier)
        let bytes = sample.make(style)
        let folder = try TemporaryFolder()
        let found = try registry.identify(fileAt: try folder.write(bytes, to: name))
        #expect(found.type.identifier == identifier, "\(style)")
        #expect(!found.contradictsName)
        // From the prefix alone, without the central directory.
        #expect(registry.identify(prefix: bytes, name: name).type.identifier == identifier, "\(style), prefix")
    }

    @Test("a ZIP archive named for a type it does not show contradicts the name")
    func zipNamedAsOffice() {
        let zip = zipArchive(texts: [("a.txt", "a"), ("b.txt", "b")])
        for name in ["letter.docx", "book.epub", "Issue 1.cbz", "letter.odt"] {
            let found = registry.identify(bytes: zip, name: name)
            #expect(found.type.identifier == .zipArchive, "\(name)")
            #expect(found.contradictsName, "\(name)")
        }
    }

    @Test("a more specific content is not contradicted by a general name; a sibling's name is")
    func generalNames() {
        let book = registry.identify(bytes: epub(), name: "book.zip")
        #expect(book.type.identifier == "org.idpf.epub-container")
        #expect(!book.contradictsName)
        let wrong = registry.identify(bytes: epub(), name: "book.cbz")
        #expect(wrong.type.identifier == "org.idpf.epub-container")
        #expect(wrong.contradictsName)
        // A ZIP archive of images is a comic book only when named so.
        let comic = registry.identify(bytes: zipArchive(Samples.comicPages), name: "pages.zip")
        #expect(comic.type.identifier == .zipArchive)
        #expect(!comic.contradictsName)
        // A RAR archive is a comic book only when named so.
        #expect(registry.identify(bytes: rar5(), name: "x.rar").type.identifier == "com.rarlab.rar-archive")
        #expect(registry.identify(bytes: rar4(), name: "x.cbr").type.identifier == "com.comicbook.cbr")
    }

    @Test("a sloppy EPUB whose mimetype entry is not first is told by its container")
    func sloppyEPUB() {
        let bytes = zipArchive(texts: [
            ("META-INF/container.xml", "<container/>"), ("mimetype", "application/epub+zip"),
            ("OEBPS/content.opf", "<package/>"),
        ])
        #expect(registry.identify(bytes: bytes, name: "book").type.identifier == "org.idpf.epub-container")
    }

    @Test("a 20 MB comic book archive is identified with a few bounded reads, from its start and its end")
    func boundedReads() throws {
        let page = jpegImage(padding: 1_000_000)
        let entries =
            [("ComicInfo.xml", Array("<ComicInfo/>".utf8))]
            + (1...20).map { (String(format: "page%03d.jpg", $0), page) }
        let bytes = zipArchive(entries, style: .streamed)
        #expect(bytes.count > 20_000_000)
        let folder = try TemporaryFolder()
        let path = try folder.write(bytes, to: "Big.cbz")
        let counting = CountingContent(try FileContent(path: path))
        let found = try registry.identify(counting, name: "Big.cbz")
        #expect(found.type.identifier == "com.comicbook.cbz")
        #expect(counting.bytesRead < 200_000, "read \(counting.bytesRead) bytes")
        #expect(counting.reads.count <= 4, "\(counting.reads)")
        // The central directory says every entry is an image: a text file at the end is noticed.
        let spoiled = zipArchive(entries + [("notes.txt", Array("not a page".utf8))], style: .streamed)
        let spoiledFound = try registry.identify(
            FileContent(path: try folder.write(spoiled, to: "Spoiled.cbz")), name: "Spoiled.cbz")
        #expect(spoiledFound.type.identifier == .zipArchive)
        #expect(spoiledFound.contradictsName)
    }

    @Test("a damaged archive whose end is missing is told from its local headers")
    func truncated() throws {
        let bytes = officeOpenXML(["word/document.xml": "<w:document/>"])
        let cut = Array(bytes.prefix(bytes.count - 30))
        let folder = try TemporaryFolder()
        let found = try registry.identify(fileAt: try folder.write(cut, to: "letter.docx"))
        #expect(found.type.identifier == "org.openxmlformats.wordprocessingml.document")
    }

    @Test(
        "archives made by Info-ZIP's zip, compressed")
    func infoZip() throws {
        try ExternalTool.zip.require()
        let folder = try TemporaryFolder()
        let book = folder("book")
        try FileManager.default.createDirectory(atPath: book + "/META-INF", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: book + "/OEBPS", withIntermediateDirectories: true)
        try folder.write("application/epub+zip", to: "book/mimetype")
        try folder.write(String(repeating: "<container/>\n", count: 50), to: "book/META-INF/container.xml")
        try folder.write(String(repeating: "<p>Once upon a time.</p>\n", count: 500), to: "book/OEBPS/chapter.xhtml")
        try run("/usr/bin/zip", ["-X", "-0", "-q", folder("book.epub"), "mimetype"], in: book)
        try run("/usr/bin/zip", ["-X", "-9", "-r", "-q", folder("book.epub"), "META-INF", "OEBPS"], in: book)
        #expect(try registry.identify(fileAt: folder("book.epub")).type.identifier == "org.idpf.epub-container")
        #expect(try registry.identify(fileAt: folder("book.epub"), name: "book.zip").contradictsName == false)

        try folder.write(pngImage(), to: "book/page1.png")
        try run("/usr/bin/zip", ["-q", "-9", folder("comic.cbz"), "page1.png", "OEBPS/chapter.xhtml"], in: book)
        let notComic = try registry.identify(fileAt: folder("comic.cbz"))
        #expect(notComic.type.identifier == .zipArchive)
        try run("/usr/bin/zip", ["-q", "-9", folder("comic2.cbz"), "page1.png"], in: book)
        #expect(try registry.identify(fileAt: folder("comic2.cbz")).type.identifier == "com.comicbook.cbz")
    }

    private func run(_ executable: String, _ arguments: [String], in directory: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(executable) \(arguments)")
    }
}
