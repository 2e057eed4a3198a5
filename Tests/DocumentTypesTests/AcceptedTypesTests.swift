import DocumentTypes
import FileshareTestSupport
import Testing

/// What a folder accepts, and the reasons it gives a person when it refuses.
@Suite("Accepted types and refusals")
struct AcceptedTypesTests {
    func accepting(_ identifiers: [TypeIdentifier]) throws -> AcceptedTypes {
        try AcceptedTypes(identifiers)
    }

    @Test("accepting a type accepts every kind of it")
    func conformance() throws {
        let images = try accepting([.image])
        for identifier: TypeIdentifier in [
            "public.png", "public.jpeg", "public.heic", "public.svg-image", "com.compuserve.gif", "com.microsoft.ico",
        ] {
            let sample = Samples.sample(identifier)
            #expect(images.check(prefix: sample.bytes, name: sample.fileName).isAccepted, "\(identifier)")
        }
        #expect(!images.accepts("com.adobe.pdf"))
        #expect(!images.check(prefix: pdfDocument(), name: "Report.pdf").isAccepted)

        let archives = try accepting([.zipArchive])
        for identifier: TypeIdentifier in [
            "org.idpf.epub-container", "com.comicbook.cbz", "org.openxmlformats.wordprocessingml.document",
            "org.oasis-open.opendocument.spreadsheet", "public.zip-archive",
        ] {
            let sample = Samples.sample(identifier)
            #expect(archives.check(prefix: sample.bytes, name: sample.fileName).isAccepted, "\(identifier)")
        }
        #expect(!archives.accepts("com.rarlab.rar-archive"))
        #expect(try accepting(["public.archive"]).accepts("com.comicbook.cbr"))
    }

    @Test("accepting everything accepts every sample", arguments: Samples.all)
    func everything(sample: Sample) {
        let all = AcceptedTypes.all()
        #expect(all.acceptsEverything)
        #expect(all.check(prefix: sample.bytes, name: sample.fileName).isAccepted)
    }

    @Test("unknown identifiers are refused, named, with a suggestion")
    func unknownIdentifiers() {
        let error = #expect(throws: DocumentTypeError.self) {
            try AcceptedTypes(["public.imgae", "com.adobe.pdf", "com.nobody.nothing"])
        }
        #expect(error?.code == .unknownIdentifier)
        #expect(error?.message == "unknown types 'public.imgae' (did you mean 'public.image'?), 'com.nobody.nothing'")
        #expect(error?.identifier == "public.imgae")
    }

    @Test("a misnamed file of an accepted type is refused for its name, or accepted under the corrected one")
    func misnamedButAccepted() throws {
        let images = try accepting([.image])
        let decision = images.check(prefix: jpegImage(), name: "photo.png")
        #expect(!decision.isAccepted)
        #expect(decision.identification.type.identifier == "public.jpeg")
        #expect(decision.identification.contradictsName && decision.identification.nameMisleads)
        let corrected = images.check(prefix: jpegImage(), name: "photo.png", misleadingNames: .correct)
        #expect(corrected.isAccepted)
        #expect(corrected == .corrected(decision.identification, name: "photo.jpg"))
    }

    static let refusals:
        [(accept: [TypeIdentifier], bytes: [UInt8], name: String, code: Refusal.Code, reason: String)] =
            [
                (
                    [.image], pdfDocument(), "Report.txt", .typeNotAccepted,
                    "'Report.txt' is a PDF document (by its content), which this folder does not accept"
                ),
                (
                    [.plainText], pdfDocument(), "Report.txt", .contentContradictsName,
                    "the name of 'Report.txt' says plain text document, but the content is a PDF document, "
                        + "which this folder does not accept"
                ),
                (
                    ["public.jpeg"], pdfDocument(), "photo.jpg", .contentContradictsName,
                    "the name of 'photo.jpg' says JPEG image, but the content is a PDF document, "
                        + "which this folder does not accept"
                ),
                (
                    [.image], Array("not a picture\n".utf8), "photo.jpg", .contentContradictsName,
                    "the name of 'photo.jpg' says JPEG image, but the content is a plain text document, "
                        + "which this folder does not accept"
                ),
                (
                    [.image], [0x00, 0x13, 0x37, 0x00, 0xFF], "photo.jpg", .contentContradictsName,
                    "the name of 'photo.jpg' says JPEG image, but the content is not a JPEG image"
                ),
                (
                    ["com.adobe.pdf"], [0x00, 0x13, 0x37, 0x00, 0xFF], "photo.jpg", .typeNotAccepted,
                    "'photo.jpg' is of a type that was not recognised (its name says JPEG image, but its content is "
                        + "not one), which this folder does not accept"
                ),
                (
                    [.image], id3Tag(padding: 0) + mp3Frames(), "song.mp3", .typeNotAccepted,
                    "'song.mp3' is an MP3 audio file, which this folder does not accept"
                ),
                (
                    [.image], id3Tag(padding: 0) + mp3Frames(), "song", .typeNotAccepted,
                    "'song' is an MP3 audio file (by its content), which this folder does not accept"
                ),
                (
                    ["com.adobe.pdf"], Array("# Notes\n".utf8), "notes.md", .typeNotAccepted,
                    "'notes.md' is a Markdown document (by its name), which this folder does not accept"
                ),
                (
                    ["org.openxmlformats.wordprocessingml.document"], zipArchive(texts: [("a.txt", "a")]),
                    "letter.docx",
                    .contentContradictsName,
                    "the name of 'letter.docx' says Word document, but the content is a ZIP archive, "
                        + "which this folder does not accept"
                ),
                (
                    ["com.comicbook.cbz"], zipArchive(Samples.comicPages), "Issue 1.zip", .typeNotAccepted,
                    "'Issue 1.zip' is a ZIP archive, which this folder does not accept"
                ),
                (
                    [.zipArchive], zipArchive(Samples.comicPages), "Issue 1.cbz", .typeNotAccepted,
                    "never: a comic book archive is a ZIP archive"
                ),
                (
                    ["com.adobe.pdf"], [0x00, 0x01, 0x02], "blob", .typeNotAccepted,
                    "'blob' is of a type that was not recognised, which this folder does not accept"
                ),
                (
                    ["com.adobe.pdf"], [], "empty", .typeNotAccepted,
                    "'empty' is empty and its name does not tell its type, which this folder needs"
                ),
                (
                    [.audio], isoMedia("isom", ["isom"]), "song.m4a", .typeNotAccepted,
                    "never: MPEG-4 named .m4a is MPEG-4 audio"
                ),
                (
                    ["com.comicbook.cbz"], epub(), "Issue 3.cbz", .contentContradictsName,
                    "the name of 'Issue 3.cbz' says CBZ comic book, but the content is an EPUB book, "
                        + "which this folder does not accept"
                ),
                (
                    [.plainText], Array("<!doctype html><script>alert(1)</script>".utf8), "notes.txt",
                    .contentContradictsName,
                    "the name of 'notes.txt' says plain text document, but the content is an HTML document, "
                        + "which this folder does not accept"
                ),
            ]

    @Test("refusals say why, in a sentence", arguments: refusals.indices)
    func refusal(index: Int) throws {
        let expected = Self.refusals[index]
        let decision = try accepting(expected.accept).check(prefix: expected.bytes, name: expected.name)
        if expected.reason.hasPrefix("never") {
            #expect(decision.isAccepted, "\(expected.reason)")
            return
        }
        guard case .refused(let refusal) = decision else {
            Issue.record("accepted \(decision.identification), expected a refusal")
            return
        }
        #expect(refusal.code == expected.code)
        #expect(refusal.reason == expected.reason)
        #expect("\(refusal)" == expected.reason)
    }

    @Test("a file on disk is checked under the name it will have")
    func stagedUpload() throws {
        let folder = try TemporaryFolder()
        let staged = try folder.write(pdfDocument(), to: ".upload-7f3a")
        let pdfs = try accepting(["com.adobe.pdf"])
        #expect(try pdfs.check(fileAt: staged, name: "Report.pdf").isAccepted)
        let images = try accepting([.image])
        guard case .refused(let refusal) = try images.check(fileAt: staged, name: "Scan.jpg") else {
            Issue.record("a PDF named .jpg was accepted as an image")
            return
        }
        #expect(
            refusal.reason
                == "the name of 'Scan.jpg' says JPEG image, but the content is a PDF document, which this folder does not accept"
        )
    }

    @Test("a file that cannot be read throws, naming it")
    func unreadable() throws {
        let folder = try TemporaryFolder()
        let missing = #expect(throws: DocumentTypeError.self) {
            try AcceptedTypes.all().check(fileAt: folder("missing.pdf"))
        }
        #expect(missing?.code == .unreadableFile)
        #expect(missing?.message.hasSuffix("missing.pdf': No such file or directory") == true)
        let directory = #expect(throws: DocumentTypeError.self) { try AcceptedTypes.all().check(fileAt: folder.path) }
        #expect(directory?.message.hasSuffix("it is a folder") == true)
    }
}
