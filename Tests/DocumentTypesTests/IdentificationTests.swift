import DocumentTypes
import FileshareTestSupport
import Foundation
import Testing

/// Every catalogue type identified from a real sample file, by content with
/// a wrong name, by name for text, and from a prefix.
@Suite("Identification")
struct IdentificationTests {
    let registry = DocumentTypeRegistry.standard

    @Test("every sample file is identified with its own name", arguments: Samples.all)
    func identifiesSample(sample: Sample) throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(sample.bytes, to: sample.fileName)
        let found = try registry.identify(fileAt: path)
        #expect(found.type.identifier == sample.identifier)
        #expect(found.basis == sample.basis)
        #expect(!found.contradictsName && !found.nameMisleads)
        #expect(found.fileName == sample.fileName)
        // The same from the bytes in memory, and from a prefix of unknown size.
        #expect(registry.identify(bytes: sample.bytes, name: sample.fileName) == found)
        #expect(registry.identify(prefix: sample.bytes, name: sample.fileName).type.identifier == sample.identifier)
    }

    @Test(
        "a sample told by its content is identified with a wrong name, and the name is contradicted",
        arguments: Samples.all.filter(\.isToldByContent))
    func identifiesByContentWithWrongName(sample: Sample) throws {
        let folder = try TemporaryFolder()
        // A name of another, unrelated type: text for binary files, a JPEG for text.
        let wrongName = registry.isText(sample.identifier) ? "renamed.jpg" : "renamed.txt"
        let path = try folder.write(sample.bytes, to: wrongName)
        let found = try registry.identify(fileAt: path)
        #expect(found.type.identifier == sample.identifier)
        #expect(found.basis == .content)
        #expect(found.contentType?.identifier == sample.identifier)
        #expect(found.contradictsName)
        #expect(found.nameType?.identifier == (registry.isText(sample.identifier) ? "public.jpeg" : .plainText))
        // Neither name is related to the content: it lies, and the content's extension corrects it;
        // unless the content was told only by a few sync bits that random bytes match now and then
        // (an ADTS header without a tag; MPEG audio frames after an ID3 tag are told by the tag).
        let faint = sample.identifier == "public.aac-audio"
        #expect(found.nameMisleads == !faint)
        let wanted = registry[sample.identifier]?.preferredExtension
        #expect(found.correctedName == (faint ? nil : wanted.map { "renamed." + $0 }))

        let nameless = registry.identify(bytes: sample.bytes, name: "renamed")
        #expect(nameless.type.identifier == sample.identifier)
        #expect(!nameless.contradictsName)
    }

    @Test("a PDF named .txt is a PDF", arguments: ["Report.txt", "Report.jpg", "Report", "Report.md"])
    func pdfWithAnotherName(name: String) {
        let found = registry.identify(bytes: pdfDocument(), name: name)
        #expect(found.type.identifier == "com.adobe.pdf")
        #expect(found.basis == .content)
        #expect(found.contradictsName == (name != "Report"))
    }

    @Test("a PDF after junk within its first 1,024 bytes is a PDF; further on, it is not")
    func pdfAfterJunk() {
        let near = registry.identify(bytes: pdfDocument(junkBefore: String(repeating: "x", count: 1000)), name: nil)
        #expect(near.type.identifier == "com.adobe.pdf")
        let far = registry.identify(bytes: pdfDocument(junkBefore: String(repeating: "x", count: 1100)), name: nil)
        #expect(far.type.identifier == .plainText)
    }

    // MARK: Text

    @Test(
        "text without a signature is taken at its name's word",
        arguments: [
            ("notes.md", "net.daringfireball.markdown"), ("notes.txt", "public.plain-text"),
            ("notes.csv", "public.comma-separated-values-text"), ("notes.json", "public.json"),
            ("notes.html", "public.html"), ("notes.xml", "public.xml"), ("notes.svg", "public.svg-image"),
            ("notes", "public.plain-text"), ("notes.unknownext", "public.plain-text"),
        ] as [(String, TypeIdentifier)])
    func textByName(name: String, identifier: TypeIdentifier) {
        let found = registry.identify(bytes: Array("Just some words, <b>bold</b>.\n".utf8), name: name)
        #expect(found.type.identifier == identifier)
        #expect(found.content == .text)
        #expect(found.basis == (registry.type(forFileName: name) == nil ? .content : .name))
        #expect(!found.contradictsName)
    }

    @Test(
        "text in other encodings is text",
        arguments: [
            ("Latin-1", [0x43, 0x61, 0x66, 0xE9, 0x20, 0x6E, 0x6F, 0x69, 0x72, 0x0A] as [UInt8]),
            ("UTF-8 with a BOM", [0xEF, 0xBB, 0xBF] + Array("# Titre\n".utf8)),
            ("UTF-16LE with a BOM", [0xFF, 0xFE, 0x48, 0x00, 0x69, 0x00, 0x0A, 0x00]),
            ("UTF-16BE with a BOM", [0xFE, 0xFF, 0x00, 0x48, 0x00, 0x69, 0x00, 0x0A]),
            ("ANSI colours", Array("\u{1B}[1mbold\u{1B}[0m\r\n\tindented\u{0C}".utf8)),
        ])
    func encodings(label: String, bytes: [UInt8]) {
        let found = registry.identify(bytes: bytes, name: "notes.txt")
        #expect(found.type.identifier == .plainText, "\(label)")
        #expect(found.content == .text, "\(label)")
    }

    @Test("text signatures look past white space, a byte order mark and XML prologues")
    func textSignatures() {
        let utf16HTML: [UInt8] =
            [0xFF, 0xFE]
            + "  <!doctype HTML><p>x".utf16.flatMap { unit -> [UInt8] in
                [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            }
        #expect(registry.identify(bytes: utf16HTML, name: nil).type.identifier == "public.html")
        let svg = "<svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\"/>"
        #expect(registry.identify(bytes: Array(svg.utf8), name: nil).type.identifier == "public.svg-image")
        let xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE note [<!ELEMENT note (#PCDATA)>]>\n<note>svg</note>"
        #expect(registry.identify(bytes: Array(xml.utf8), name: nil).type.identifier == "public.xml")
        // XML named .svg whose root is not found in the prefix is SVG by its name.
        let found = registry.identify(bytes: Array("<?xml version=\"1.0\"?>\n<!-- long".utf8), name: "a.svg")
        #expect(found.type.identifier == "public.svg-image")
        #expect(found.basis == .contentAndName)
    }

    @Test("binary content named as text contradicts the name")
    func binaryNamedAsText() {
        let found = registry.identify(bytes: [0x00, 0x01, 0x02, 0x03, 0xFE, 0x00, 0x10], name: "notes.txt")
        #expect(found.type.identifier == .data)
        #expect(found.basis == .unknown)
        #expect(found.content == .unrecognised)
        #expect(found.contradictsName)
    }

    @Test(
        "text named as a binary type contradicts the name",
        arguments: ["photo.jpg", "Report.pdf", "letter.rtf", "a.docx"])
    func textNamedAsBinary(name: String) {
        let found = registry.identify(bytes: Array("hello\n".utf8), name: name)
        #expect(found.type.identifier == .plainText)
        #expect(found.content == .text)
        #expect(found.contradictsName)
    }

    @Test("unrecognised bytes named as a type without a required signature are taken at the name's word")
    func unrecognisedByName() throws {
        let blob = DocumentType(identifier: "com.example.blob", name: "Example blob", extensions: ["blob"])
        let registry = try DocumentTypeRegistry(declaring: [blob])
        let found = registry.identify(bytes: [0x00, 0xFF, 0x00, 0x17], name: "a.blob")
        #expect(found.type.identifier == "com.example.blob")
        #expect(found.basis == .name)
        // A Word 97 document must at least be a compound file.
        let doc = registry.identify(bytes: [0x00, 0xFF, 0x00, 0x17], name: "a.doc")
        #expect(doc.type.identifier == .data)
        #expect(doc.contradictsName)
    }

    @Test(
        "an empty file is decided by its name",
        arguments: [
            ("Report.pdf", "com.adobe.pdf"), ("notes.md", "net.daringfireball.markdown"), ("empty", "public.data"),
        ]
            as [(String, TypeIdentifier)])
    func emptyFile(name: String, identifier: TypeIdentifier) throws {
        let folder = try TemporaryFolder()
        let found = try registry.identify(fileAt: try folder.write([UInt8](), to: name))
        #expect(found.type.identifier == identifier)
        #expect(found.content == .empty)
        #expect(found.basis == (name == "empty" ? .unknown : .name))
    }

    // MARK: Media

    @Test("an ID3 tag is skipped: FLAC after it is FLAC, and a tag longer than the prefix is read past with pread")
    func id3() throws {
        let flac = registry.identify(bytes: id3Tag(padding: 10) + flacAudio(), name: "track.mp3")
        #expect(flac.type.identifier == "org.xiph.flac")
        #expect(flac.contradictsName)

        let folder = try TemporaryFolder()
        let big = id3Tag(padding: 300_000) + mp3Frames()
        let path = try folder.write(big, to: "cover art")
        let counting = CountingContent(try FileContent(path: path))
        let found = try registry.identify(counting, name: "cover art")
        #expect(found.type.identifier == "public.mp3")
        #expect(counting.bytesRead < 200_000)
        // A tag followed by nothing recognised is still MP3; so is a frame without a tag.
        #expect(registry.identify(prefix: Array(big.prefix(65_536)), name: nil).type.identifier == "public.mp3")
        #expect(registry.identify(bytes: mp3Frames(), name: nil).type.identifier == "public.mp3")
        // Text that starts with "ID3" is text.
        let text = registry.identify(bytes: Array("ID3 tags hold titles.\n".utf8), name: "notes.txt")
        #expect(text.type.identifier == .plainText)
        #expect(!text.contradictsName)
    }

    @Test(
        "ISO media: the major brand first, then compatible brands; a generic brand is narrowed by the name",
        arguments: [
            (isoMedia("mif1", ["mif1", "heic"]), "IMG.heic", "public.heic"),
            (isoMedia("mif1", ["mif1", "heic"]), "IMG", "public.heic"),
            (isoMedia("avif", ["avif", "mif1", "miaf"]), "a", "public.avif"),
            (isoMedia("isom", ["isom", "mp42"]), "song.m4a", "public.mpeg-4-audio"),
            (isoMedia("isom", ["isom", "mp42"]), "episode.m4v", "com.apple.m4v-video"),
            (isoMedia("isom", ["isom", "mp42"]), "clip", "public.mpeg-4"),
            (isoMedia("M4A ", ["M4A ", "isom"]), "song.mp4", "public.mpeg-4-audio"),
            (
                Bytes {
                    $0.be32(8); $0.add("moov")
                }.bytes, "old.mov", "com.apple.quicktime-movie"
            ),
        ] as [([UInt8], String, TypeIdentifier)])
    func isoMediaBrands(bytes: [UInt8], name: String, identifier: TypeIdentifier) {
        let found = registry.identify(bytes: bytes, name: name)
        #expect(found.type.identifier == identifier)
        #expect(!found.contradictsName)
    }

    @Test("Ogg streams are told apart by their first packet")
    func ogg() {
        let opus = oggPage(Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0])
        #expect(registry.identify(bytes: opus, name: "a.opus").type.identifier == "org.xiph.ogg-audio")
        // Theora named .ogg: the content is Ogg video, not the audio the name says.
        let theora = registry.identify(bytes: Samples.sample("org.xiph.ogv").bytes, name: "clip.ogg")
        #expect(theora.type.identifier == "org.xiph.ogv")
        #expect(theora.contradictsName)
    }
}

/// A content source that counts what is read from it.
final class CountingContent: ContentSource {
    let base: any ContentSource
    private(set) var bytesRead = 0
    private(set) var reads: [(offset: Int, count: Int)] = []

    init(_ base: any ContentSource) { self.base = base }

    var size: Int? { base.size }

    func read(at offset: Int, count: Int) throws -> [UInt8] {
        let bytes = try base.read(at: offset, count: count)
        bytesRead += bytes.count
        reads.append((offset, count))
        return bytes
    }
}
