import DocumentTypes
import Testing

/// The catalogue's consistency, lookups, and conformance followed transitively.
@Suite("Registry and catalogue")
struct RegistryTests {
    let registry = DocumentTypeRegistry.standard

    @Test("the catalogue's identifiers are well formed and unique, and so are its extensions and MIME types")
    func catalogueIsConsistent() {
        let catalogue = DocumentType.catalogue
        #expect(Set(catalogue.map(\.identifier)).count == catalogue.count)
        for type in catalogue {
            #expect(type.identifier.isWellFormed, "\(type.identifier)")
            #expect(!type.name.isEmpty)
        }
        let extensions = catalogue.flatMap(\.extensions)
        #expect(Set(extensions).count == extensions.count, "an extension is claimed twice")
        let mimeTypes = catalogue.flatMap(\.mimeTypes)
        #expect(Set(mimeTypes).count == mimeTypes.count, "a MIME type is claimed twice")
    }

    @Test("every catalogue type with extensions or signatures has a generated sample")
    func everyTypeHasASample() {
        let sampled = Set(Samples.all.map(\.identifier))
        for type in DocumentType.catalogue where !type.extensions.isEmpty || !type.signatures.isEmpty {
            #expect(sampled.contains(type.identifier), "no sample of \(type.identifier)")
        }
    }

    @Test(
        "conformance is transitive",
        arguments: [
            ("public.png", "public.image"), ("public.png", "public.data"), ("public.png", "public.item"),
            ("public.png", "public.content"), ("com.comicbook.cbz", "public.zip-archive"),
            ("com.comicbook.cbz", "public.archive"), ("com.comicbook.cbr", "com.rarlab.rar-archive"),
            ("org.idpf.epub-container", "public.zip-archive"), ("org.idpf.epub-container", "public.composite-content"),
            ("com.adobe.pdf", "public.data"), ("net.daringfireball.markdown", "public.text"),
            ("public.svg-image", "public.xml"), ("public.svg-image", "public.image"), ("public.heic", "public.heif"),
            ("public.mpeg-4-audio", "public.audio"), ("public.mpeg-4-audio", "public.movie"),
            ("org.openxmlformats.spreadsheetml.sheet", "public.spreadsheet"),
            ("org.openxmlformats.wordprocessingml.document", "public.zip-archive"),
            ("com.microsoft.word.doc", "com.microsoft.ole.compound-file"),
            ("org.gnu.gnu-zip-tar-archive", "public.archive"), ("public.json", "public.json"),
        ] as [(TypeIdentifier, TypeIdentifier)])
    func conforms(type: TypeIdentifier, parent: TypeIdentifier) {
        #expect(registry.conforms(type, to: parent))
    }

    @Test(
        "and goes one way only",
        arguments: [
            ("public.image", "public.png"), ("public.zip-archive", "com.comicbook.cbz"),
            ("com.adobe.pdf", "public.text"),
            ("public.plain-text", "net.daringfireball.markdown"), ("public.audio", "public.movie"),
            ("public.zip-archive", "public.content"), ("com.unknown.type", "public.data"),
        ] as [(TypeIdentifier, TypeIdentifier)])
    func doesNotConform(type: TypeIdentifier, parent: TypeIdentifier) {
        #expect(!registry.conforms(type, to: parent))
    }

    @Test("supertypes and subtypes")
    func hierarchy() {
        let images = Set(registry.subtypes(of: .image).map(\.identifier))
        #expect(
            images.isSuperset(of: [
                "public.png", "public.jpeg", "public.heic", "public.heif", "public.svg-image", "com.compuserve.gif",
            ]))
        #expect(!images.contains("com.adobe.pdf"))
        #expect(
            Set(registry.supertypes(of: "com.comicbook.cbz").map(\.identifier)) == [
                "public.zip-archive", "public.archive", "public.data", "public.item", "public.content",
            ])
    }

    @Test(
        "lookup by file name: any case, the longest extension first, no extension for hidden files",
        arguments: [
            ("Report.PDF", "com.adobe.pdf"), ("backup.tar.gz", "org.gnu.gnu-zip-tar-archive"),
            ("BACKUP.TAR.GZ", "org.gnu.gnu-zip-tar-archive"), ("notes.txt.gz", "org.gnu.gnu-zip-archive"),
            ("Comics/Issue 1.cbz", "com.comicbook.cbz"), ("a.b.c.md", "net.daringfireball.markdown"),
            ("photo.jpeg", "public.jpeg"), ("photo.JPG", "public.jpeg"),
        ] as [(String, TypeIdentifier)])
    func lookupByName(name: String, identifier: TypeIdentifier) {
        #expect(registry.type(forFileName: name)?.identifier == identifier)
    }

    @Test(
        "names without a known extension name no type",
        arguments: [".profile", "Makefile", "notes.", "a.unknownext", ""])
    func noType(name: String) {
        #expect(registry.type(forFileName: name) == nil)
    }

    @Test("lookup by extension and MIME type")
    func lookups() {
        #expect(registry.type(forExtension: ".PDF")?.identifier == "com.adobe.pdf")
        #expect(registry.type(forExtension: "tar.gz")?.identifier == "org.gnu.gnu-zip-tar-archive")
        #expect(registry.type(forMIMEType: "text/plain; charset=utf-8")?.identifier == .plainText)
        #expect(registry.type(forMIMEType: "Application/EPUB+zip")?.identifier == "org.idpf.epub-container")
        #expect(registry.type(forMIMEType: "audio/x-wav")?.identifier == "com.microsoft.waveform-audio")
        #expect(registry.type(forMIMEType: "application/x-unknown") == nil)
        #expect(registry["COM.ADOBE.PDF"]?.preferredMIMEType == "application/pdf")
        #expect(registry["public.jpeg"]?.preferredExtension == "jpg")
    }

    @Test(
        "names take the right article",
        arguments: [
            ("com.adobe.pdf", "a PDF document"), ("public.mp3", "an MP3 audio file"),
            ("org.idpf.epub-container", "an EPUB book"), ("public.html", "an HTML document"),
            ("com.rarlab.rar-archive", "a RAR archive"), ("org.xiph.flac", "a FLAC audio file"),
            ("public.svg-image", "an SVG image"), ("public.mpeg-4", "an MPEG-4 movie"),
            ("com.microsoft.excel.xls", "an Excel 97–2004 spreadsheet"), ("public.jpeg", "a JPEG image"),
            ("org.tukaani.xz-archive", "an XZ archive"), ("org.7-zip.7-zip-archive", "a 7-Zip archive"),
            ("org.xiph.ogg-audio", "an Ogg audio file"), ("public.plain-text", "a plain text document"),
        ] as [(TypeIdentifier, String)])
    func articles(identifier: TypeIdentifier, phrase: String) {
        #expect(registry[identifier]?.nameWithArticle == phrase)
    }

    @Test("declared types come first, and refine the catalogue")
    func declaredTypes() throws {
        let notes = DocumentType(
            identifier: "com.example.notes", name: "Example notes file", conformsTo: [.plainText],
            extensions: [".ExNotes", "txt"], mimeTypes: ["Text/X-Example-Notes"])
        let registry = try DocumentTypeRegistry(declaring: [notes])
        #expect(registry.types.first?.identifier == "com.example.notes")
        #expect(registry.type(forFileName: "a.exnotes")?.identifier == "com.example.notes")
        #expect(registry.type(forFileName: "a.txt")?.identifier == "com.example.notes")
        #expect(registry.type(forMIMEType: "text/x-example-notes")?.identifier == "com.example.notes")
        #expect(registry.conforms("com.example.notes", to: .text))
        #expect(registry.isText("com.example.notes"))
        #expect(DocumentType(identifier: "com.example.blob", name: "blob").conformsTo == [.data])
    }

    @Test("declarations the registry refuses, with the reason")
    func refusedDeclarations() {
        func refusal(_ types: [DocumentType]) -> DocumentTypeError? {
            #expect(throws: DocumentTypeError.self) { try DocumentTypeRegistry(declaring: types) }
        }
        let duplicate = refusal([DocumentType(identifier: "com.adobe.pdf", name: "mine")])
        #expect(duplicate?.code == .duplicateIdentifier)
        #expect(duplicate?.message == "the type 'com.adobe.pdf' is declared twice (it is a built-in type)")

        let unknown = refusal([DocumentType(identifier: "com.example.a", name: "A", conformsTo: ["public.imagee"])])
        #expect(unknown?.code == .unknownIdentifier)
        #expect(unknown?.message.contains("did you mean 'public.image'?") == true)

        let cycle = refusal([
            DocumentType(identifier: "com.example.a", name: "A", conformsTo: ["com.example.b"]),
            DocumentType(identifier: "com.example.b", name: "B", conformsTo: ["com.example.a"]),
        ])
        #expect(cycle?.code == .circularConformance)
        #expect(cycle?.message.contains("com.example.a → com.example.b → com.example.a") == true)

        let malformed = refusal([DocumentType(identifier: "not an identifier", name: "X")])
        #expect(malformed?.code == .invalidDeclaration)

        let badPattern = refusal([
            DocumentType(
                identifier: "com.example.p", name: "P", signatures: [.bytes([BytePattern([1, 2], mask: [0xFF])])])
        ])
        #expect(badPattern?.code == .invalidDeclaration)

        let badBrand = refusal([DocumentType(identifier: "com.example.q", name: "Q", signatures: [.isoBrand(["m4a"])])])
        #expect(badBrand?.message.contains("four characters") == true)

        let badMIME = refusal([DocumentType(identifier: "com.example.r", name: "R", mimeTypes: ["text"])])
        #expect(badMIME?.code == .invalidDeclaration)
    }
}
