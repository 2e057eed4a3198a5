import DocumentTypes
import FileshareTestSupport
import Testing

/// Names that lie about their content: when a name's type and the content's
/// type have nothing to do with each other, and what a check then decides.
@Suite("Misleading names")
struct MisleadingNameTests {
    let registry = DocumentTypeRegistry.standard

    /// A file, and whether its name lies: `corrected` is the name it gets
    /// when names are corrected (`nil` when it does not lie, or when the
    /// content's type has no extension to give).
    struct Case: Sendable, CustomTestStringConvertible {
        var why: String
        var bytes: [UInt8]
        var name: String
        var misleads: Bool
        var corrected: String?

        var testDescription: String { "\(name): \(why)" }
    }

    static let text = Array("Shopping list\n- bread\n".utf8)

    static let cases: [Case] = [
        // Lies: the two types are not related.
        Case(
            why: "a PDF named as text", bytes: pdfDocument(), name: "notes.txt", misleads: true, corrected: "notes.pdf"),
        Case(why: "text named as an image", bytes: text, name: "photo.png", misleads: true, corrected: "photo.txt"),
        Case(why: "extensions in any case", bytes: text, name: "PHOTO.PNG", misleads: true, corrected: "PHOTO.txt"),
        Case(why: "a PDF in capitals", bytes: pdfDocument(), name: "NOTES.Txt", misleads: true, corrected: "NOTES.pdf"),
        Case(why: "a JPEG named PNG", bytes: jpegImage(), name: "photo.png", misleads: true, corrected: "photo.jpg"),
        Case(
            why: "only the extension is replaced", bytes: pdfDocument(), name: "v1.2 draft.txt", misleads: true,
            corrected: "v1.2 draft.pdf"),
        Case(
            why: "a double extension is replaced whole", bytes: pdfDocument(), name: "backup.tar.gz", misleads: true,
            corrected: "backup.pdf"),
        Case(
            why: "an SVG named PNG", bytes: Samples.sample("public.svg-image").bytes, name: "logo.png", misleads: true,
            corrected: "logo.svg"),
        Case(
            why: "an MP3 named as text", bytes: id3Tag(padding: 0) + mp3Frames(), name: "song.txt", misleads: true,
            corrected: "song.mp3"),
        Case(
            why: "an EPUB named as a sibling ZIP type", bytes: epub(), name: "Issue 3.cbz", misleads: true,
            corrected: "Issue 3.epub"),
        Case(
            why: "a Word document named as a PDF",
            bytes: Samples.sample("org.openxmlformats.wordprocessingml.document").bytes, name: "letter.pdf",
            misleads: true, corrected: "letter.docx"),
        Case(
            why: "an OLE file has no extension of its own to give", bytes: compoundFile(stream: "x"),
            name: "report.pdf", misleads: true, corrected: nil),
        // No lie: related by conformance, both text, or no evidence.
        Case(why: "the name says what the content is", bytes: pdfDocument(), name: "notes.pdf", misleads: false),
        Case(why: "no extension", bytes: pdfDocument(), name: "notes", misleads: false),
        Case(why: "an extension no type has", bytes: pdfDocument(), name: "notes.qqq", misleads: false),
        Case(why: "a hidden file's dot starts no extension", bytes: pdfDocument(), name: ".txt", misleads: false),
        Case(why: "CSV is text", bytes: Array("a,b\n1,2\n".utf8), name: "sizes.csv", misleads: false),
        Case(why: "Markdown is plain text", bytes: text, name: "README.md", misleads: false),
        Case(why: "JSON is text", bytes: text, name: "data.json", misleads: false),
        Case(
            why: "HTML named as plain text is still text", bytes: Array("<!doctype html><p>hi".utf8),
            name: "page.txt", misleads: false),
        Case(why: "XML named as text", bytes: Samples.sample("public.xml").bytes, name: "feed.txt", misleads: false),
        Case(why: "an SVG is XML", bytes: Samples.sample("public.svg-image").bytes, name: "logo.xml", misleads: false),
        Case(why: "an empty file shows nothing", bytes: [], name: "photo.png", misleads: false),
        Case(
            why: "an MPEG audio frame's few sync bits, which random bytes match now and then, are no evidence",
            bytes: mp3Frames(), name: "noise.txt", misleads: false),
        Case(
            why: "unrecognised bytes show nothing", bytes: [0x00, 0x13, 0x37, 0x00, 0xFF], name: "photo.jpg",
            misleads: false),
        Case(
            why: "a ZIP named as a ZIP-based type: the name says a kind of ZIP",
            bytes: zipArchive(texts: [("a.txt", "a")]), name: "letter.docx", misleads: false),
        Case(
            why: "a ZIP named as an EPUB", bytes: zipArchive(texts: [("a.txt", "a")]), name: "book.epub",
            misleads: false),
        Case(why: "an EPUB named as a ZIP: a kind of it", bytes: epub(), name: "book.zip", misleads: false),
        Case(
            why: "a ZIP of images named CBZ", bytes: zipArchive(Samples.comicPages), name: "Issue 1.cbz",
            misleads: false),
        Case(
            why: "MPEG-4 named as MPEG-4 audio", bytes: isoMedia("isom", ["isom"]), name: "song.m4a",
            misleads: false),
        Case(
            why: "an MPEG-4 file whose compatible brand says QuickTime",
            bytes: isoMedia("isom", ["isom", "qt  "]), name: "clip.mov", misleads: false),
        Case(
            why: "an OLE file named as a Word 97 document", bytes: compoundFile(stream: "x"), name: "letter.doc",
            misleads: false),
    ]

    @Test("whether a name lies, and the name that corrects it", arguments: cases)
    func identification(_ example: Case) throws {
        let found = registry.identify(bytes: example.bytes, name: example.name)
        #expect(found.nameMisleads == example.misleads, "\(found)")
        #expect(found.correctedName == example.corrected)
        if example.misleads {
            // The content decides the type; the name said another.
            #expect(found.contradictsName && found.basis == .content)
        }
        // The same from a file on disk, and from a prefix.
        let folder = try TemporaryFolder()
        let onDisk = try registry.identify(fileAt: try folder.write(example.bytes, to: "staged"), name: example.name)
        #expect(onDisk.nameMisleads == example.misleads)
        #expect(registry.identify(prefix: example.bytes, name: example.name).nameMisleads == example.misleads)
    }

    @Test("a lying name is refused by default, or corrected when asked, whatever is accepted", arguments: cases)
    func decision(_ example: Case) {
        let all = AcceptedTypes.all()
        let refusing = all.check(prefix: example.bytes, name: example.name, totalSize: example.bytes.count)
        let correcting = all.check(
            prefix: example.bytes, name: example.name, totalSize: example.bytes.count, misleadingNames: .correct)
        guard example.misleads else {
            #expect(refusing == .accepted(refusing.identification))
            #expect(correcting == .accepted(correcting.identification))
            return
        }
        guard case .refused(let refusal) = refusing else {
            Issue.record("accepted: \(refusing)")
            return
        }
        #expect(refusal.code == .misleadingName)
        if let corrected = example.corrected {
            #expect(correcting == .corrected(correcting.identification, name: corrected))
        } else {
            #expect(correcting == refusing)
        }
    }

    @Test("the reason names both types and the fix")
    func reasons() throws {
        let all = AcceptedTypes.all()
        guard case .refused(let text) = all.check(prefix: Self.text, name: "photo.png", totalSize: Self.text.count)
        else { throw Failure("text named .png was accepted") }
        #expect(
            text.reason
                == "the name of 'photo.png' says PNG image, but the content is a plain text document: "
                + "rename it 'photo.txt', or have such names corrected (--fix-extensions)")
        guard case .refused(let pdf) = all.check(prefix: pdfDocument(), name: "notes.txt") else {
            throw Failure("a PDF named .txt was accepted")
        }
        #expect(
            pdf.reason
                == "the name of 'notes.txt' says plain text document, but the content is a PDF document: "
                + "rename it 'notes.pdf', or have such names corrected (--fix-extensions)")
        guard
            case .refused(let ole) = all.check(
                prefix: compoundFile(stream: "x"), name: "report.pdf", misleadingNames: .correct)
        else { throw Failure("an OLE file named .pdf was accepted") }
        #expect(
            ole.reason
                == "the name of 'report.pdf' says PDF document, but the content is an OLE compound file, "
                + "which has no file name extension to correct the name with: rename it by hand")
    }

    @Test("a type that is not accepted is refused for that, not for its name: correcting would not help")
    func notAcceptedFirst() throws {
        // The issue's example: only PDF, PNG and text accepted.
        let accepted = try AcceptedTypes(["com.adobe.pdf", "public.png", .plainText])
        let lying = accepted.check(prefix: pdfDocument(), name: "notes.txt", misleadingNames: .correct)
        #expect(lying == .corrected(lying.identification, name: "notes.pdf"))
        let textAsImage = accepted.check(prefix: Self.text, name: "photo.png", totalSize: Self.text.count)
        #expect((textAsImage.refusal?.code) == .misleadingName)
        // An MP3 named .txt: the content is not accepted, whatever its name.
        let song = accepted.check(prefix: id3Tag(padding: 0) + mp3Frames(), name: "song.txt", misleadingNames: .correct)
        #expect(song.refusal?.code == .contentContradictsName)
        #expect(song.refusal?.reason.contains("which this folder does not accept") == true)
        // Text named .png where only images are accepted: refused as before.
        let images = try AcceptedTypes([.image])
        let fake = images.check(prefix: Self.text, name: "photo.png", totalSize: Self.text.count)
        #expect(fake.refusal?.code == .contentContradictsName)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

extension AcceptedTypes.Decision {
    /// The refusal, if the file was refused.
    fileprivate var refusal: Refusal? {
        if case .refused(let refusal) = self { return refusal }
        return nil
    }
}
