import ConfigText
import DocumentTypes
import FileshareTestSupport
import Testing

/// Accepted and declared types read from JSON, YAML and TOML files, and the
/// errors a malformed file gives: the file, the line, the column, what is wrong.
@Suite("Configuration files")
struct ConfigurationTests {
    typealias Format = DocumentTypeConfiguration.Format

    /// One configuration, written in each format.
    static let equivalent: [(Format, String)] = [
        (
            .json,
            """
            {
              "accept": ["public.image", "com.example.notes", "com.example.sketch"],
              "types": [
                {
                  "identifier": "com.example.notes",
                  "name": "Example notes file",
                  "conforms_to": "public.plain-text",
                  "extensions": ["exnotes"],
                  "mime_types": ["text/x-example-notes"],
                  "signatures": [{"text_prefix": "%EXNOTES"}]
                },
                {
                  "identifier": "com.example.sketch",
                  "name": "Example sketch",
                  "conforms_to": ["public.zip-archive", "public.content"],
                  "extensions": ["exsketch"],
                  "signatures": [{"zip": {"entries": ["sketch.json", "pages/"]}}]
                },
                {
                  "identifier": "com.example.raw",
                  "name": "Example raw image",
                  "conforms_to": ["public.image"],
                  "extensions": ["exraw"],
                  "signatures": [
                    {"all": [{"offset": 0, "text": "EXRW"}, {"offset": 6, "hex": "CA F0", "mask": "FF F0"}]}
                  ]
                }
              ]
            }
            """
        ),
        (
            .yaml,
            """
            # Types for the example app.
            accept: [public.image, com.example.notes, com.example.sketch]
            types:
              - identifier: com.example.notes
                name: Example notes file
                conforms_to: public.plain-text
                extensions: [exnotes]
                mime_types: [text/x-example-notes]
                signatures:
                  - text_prefix: "%EXNOTES"
              - identifier: com.example.sketch
                name: Example sketch
                conforms_to: [public.zip-archive, public.content]
                extensions: exsketch
                signatures:
                  - zip:
                      entries: [sketch.json, pages/]
              - identifier: com.example.raw
                name: Example raw image
                conforms_to: [public.image]
                extensions: [exraw]
                signatures:
                  - all:
                      - {offset: 0, text: EXRW}
                      - {offset: 6, hex: CA F0, mask: FF F0}
            """
        ),
        (
            .toml,
            """
            # Types for the example app.
            accept = ["public.image", "com.example.notes", "com.example.sketch"]

            [[types]]
            identifier = "com.example.notes"
            name = "Example notes file"
            conforms_to = "public.plain-text"
            extensions = ["exnotes"]
            mime_types = ["text/x-example-notes"]
            signatures = [{ text_prefix = "%EXNOTES" }]

            [[types]]
            identifier = "com.example.sketch"
            name = "Example sketch"
            conforms_to = ["public.zip-archive", "public.content"]
            extensions = ["exsketch"]
            [[types.signatures]]
            zip = { entries = ["sketch.json", "pages/"] }

            [[types]]
            identifier = "com.example.raw"
            name = "Example raw image"
            conforms_to = ["public.image"]
            extensions = ["exraw"]
            [[types.signatures]]
            all = [{ offset = 0, text = "EXRW" }, { offset = 6, hex = "CA F0", mask = "FF F0" }]
            """
        ),
    ]

    @Test("the same configuration in JSON, YAML and TOML, read from a file", arguments: equivalent)
    func formats(format: Format, text: String) throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(text, to: "types.\(format.rawValue)")
        let configuration = try DocumentTypeConfiguration(contentsOf: path)
        let types = configuration.declaredTypes
        #expect(types.map(\.identifier) == ["com.example.notes", "com.example.sketch", "com.example.raw"])
        #expect(types[0].conformsTo == [.plainText])
        #expect(types[0].extensions == ["exnotes"])
        #expect(types[0].mimeTypes == ["text/x-example-notes"])
        #expect(types[0].signatures == [.textPrefix("%EXNOTES", ignoringCase: false)])
        #expect(types[1].signatures == [.zip(ZipSignature(requiredEntries: ["sketch.json", "pages/"]))])
        #expect(
            types[2].signatures == [
                .bytes([BytePattern(Array("EXRW".utf8)), BytePattern([0xCA, 0xF0], at: 6, mask: [0xFF, 0xF0])])
            ])
        #expect(configuration.acceptedTypes.identifiers == [.image, "com.example.notes", "com.example.sketch"])

        // The declared types identify files, and the accepted ones are accepted.
        let accepted = configuration.acceptedTypes
        let notes = accepted.check(prefix: Array("%EXNOTES v1\nbuy milk\n".utf8), name: "list.txt")
        #expect(notes.isAccepted)
        #expect(notes.identification.type.identifier == "com.example.notes")
        let sketch = zipArchive(texts: [("sketch.json", "{}"), ("pages/1.json", "{}")])
        #expect(
            accepted.check(prefix: sketch, name: "drawing.exsketch").identification.type.identifier
                == "com.example.sketch")
        #expect(accepted.check(prefix: sketch, name: "drawing").identification.type.identifier == "com.example.sketch")
        let raw = Array("EXRW".utf8) + [0, 0, 0xCA, 0xF7, 1, 2, 3]
        let rawFound = accepted.check(prefix: raw, name: "shot.exraw")
        #expect(rawFound.identification.type.identifier == "com.example.raw")
        #expect(rawFound.isAccepted)
        #expect(!accepted.check(prefix: pdfDocument(), name: "a.pdf").isAccepted)
        #expect(accepted.check(prefix: pngImage(), name: "a.png").isAccepted)
    }

    @Test("without 'accept', everything is accepted; an empty file declares nothing")
    func defaults() throws {
        let configuration = try DocumentTypeConfiguration(parsing: "types: []\n", format: .yaml)
        #expect(configuration.acceptedTypes.acceptsEverything)
        #expect(try DocumentTypeConfiguration(parsing: "", format: .yaml).declaredTypes.isEmpty)
        #expect(try DocumentTypeConfiguration(parsing: "", format: .toml).acceptedTypes.acceptsEverything)
    }

    /// A malformed file: what it says, and where.
    struct Malformed: Sendable, CustomTestStringConvertible {
        var format: Format
        var text: String
        var line: Int
        var column: Int?
        var code: DocumentTypeError.Code
        var message: String

        var testDescription: String { "\(format.rawValue): \(message)" }
    }

    static let malformed: [Malformed] = [
        // Syntax.
        Malformed(
            format: .json, text: "{\n  \"accept\": [\"public.image\"]\n  \"types\": []\n}\n", line: 3, column: 3,
            code: .malformedConfiguration, message: "expected ',' or '}' after a member of an object, found '\"'"),
        Malformed(
            format: .json, text: "{\n  \"accept\": [\"public.image\",]\n}\n", line: 2, column: 28,
            code: .malformedConfiguration, message: "JSON does not allow a comma after the last element of an array"),
        Malformed(
            format: .json, text: "{\n  // types\n  \"accept\": []\n}\n", line: 2, column: 3,
            code: .malformedConfiguration, message: "JSON does not allow comments"),
        Malformed(
            format: .json, text: "{\n  \"accept\": [\"public.image]\n}\n", line: 2, column: 14,
            code: .malformedConfiguration, message: "this string has no closing quote on its line"),
        Malformed(
            format: .json, text: "{\"accept\": [], \"accept\": []}", line: 1, column: 16, code: .malformedConfiguration,
            message: "the key \"accept\" appears twice in this object (first at line 1)"),
        Malformed(
            format: .yaml, text: "accept:\n  - public.image\n types: []\n", line: 3, column: 2,
            code: .malformedConfiguration,
            message: "invalid YAML: did not find expected key (while parsing a block mapping at line 1, column 1)"),
        Malformed(
            format: .yaml, text: "accept: [public.image\ntypes: []\n", line: 2, column: 6,
            code: .malformedConfiguration, message: "invalid YAML:"),
        Malformed(
            format: .toml, text: "accept = [\"public.image\"]\n\n[[types]]\nidentifier = \"com.example.a\n", line: 4,
            column: nil, code: .malformedConfiguration, message: "invalid TOML:"),
        Malformed(
            format: .toml, text: "accept = [\"public.image\"]\naccept = []\n", line: 2, column: nil,
            code: .malformedConfiguration, message: "invalid TOML:"),
        // Structure.
        Malformed(
            format: .yaml,
            text: "accept: [public.image]\ntypes:\n  - identifier: com.example.a\n    name: A\n    extension: [a]\n",
            line: 5, column: 16, code: .malformedConfiguration,
            message: "unknown key 'extension' in type declaration #1 (did you mean 'extensions'? expected"),
        Malformed(
            format: .json,
            text: "{\"types\": [{\"identifier\": \"com.example.a\", \"name\": \"A\",\n \"extensions\": 5}]}",
            line: 2, column: 16, code: .malformedConfiguration,
            message: "'extensions' must be a string or a list of strings, not an integer"),
        Malformed(
            format: .toml,
            text: "[[types]]\nidentifier = \"com.example.a\"\nname = \"A\"\nsignatures_required = \"yes\"\n",
            line: 4, column: nil, code: .malformedConfiguration,
            message: "'signatures_required' must be true or false, not a string"),
        Malformed(
            format: .yaml, text: "types:\n  - name: Nameless\n", line: 2, column: 5, code: .malformedConfiguration,
            message: "type declaration #1 has no 'identifier'"),
        Malformed(
            format: .yaml,
            text:
                "types:\n  - identifier: com.example.a\n    name: A\n    signatures:\n      - {offset: 0, hex: \"4G\"}\n",
            line: 5, column: 26, code: .malformedConfiguration,
            message: "'hex' must be hexadecimal bytes (such as \"25 50 44 46\"), but has 'G'"),
        Malformed(
            format: .yaml,
            text:
                "types:\n  - identifier: com.example.a\n    name: A\n    signatures:\n      - {xml_root: a, text_prefix: b}\n",
            line: 5, column: 9, code: .malformedConfiguration, message: "has both 'text_prefix' and 'xml_root'"),
        Malformed(
            format: .toml,
            text:
                "[[types]]\nidentifier = \"com.example.a\"\nname = \"A\"\n\n[[types.signatures]]\noffset = 0\nhexx = \"00\"\n",
            line: 7, column: 8, code: .malformedConfiguration,
            message: "unknown key 'hexx' in a signature of the type 'com.example.a' (did you mean 'hex'?"),
        Malformed(
            format: .json,
            text:
                "{\"types\": [{\"identifier\": \"com.example.a\", \"name\": \"A\",\n  \"signatures\": [{\"hex\": \"00 11\", \"mask\": \"FF\"}]}]}",
            line: 2, column: 43, code: .malformedConfiguration,
            message:
                "the mask of a pattern of a signature of the type 'com.example.a' has 1 byte, but the pattern has 2"),
        // Identifiers.
        Malformed(
            format: .toml,
            text:
                "[[types]]\nidentifier = \"com.example.b\"\nname = \"B\"\nsignatures = [\n  { zip = { entry_type = \"public.imag\" } },\n]\n",
            line: 5, column: 26, code: .unknownIdentifier,
            message: "unknown type 'public.imag' in 'entry_type' of 'com.example.b' (did you mean 'public.image'?)"),
        Malformed(
            format: .toml,
            text: "types = [\n  { identifier = \"com.example.a\", name = \"A\", conforms_to = [\"public.dat\"] },\n]\n",
            line: 2, column: 62, code: .unknownIdentifier,
            message: "unknown type 'public.dat' in 'conforms_to' of 'com.example.a' (did you mean 'public.data'?)"),
        Malformed(
            format: .yaml, text: "accept:\n  - com.adobe.pdf\n  - public.imgae\n", line: 3, column: 5,
            code: .unknownIdentifier, message: "unknown type 'public.imgae' in 'accept' (did you mean 'public.image'?)"),
        Malformed(
            format: .json, text: "{\n  \"accept\": [\n    \"public.image\",\n    \"com.nobody.nothing\"\n  ]\n}",
            line: 4,
            column: 5, code: .unknownIdentifier, message: "unknown type 'com.nobody.nothing' in 'accept'"),
        Malformed(
            format: .toml, text: "# comment\naccept = [\n  \"public.image\",\n  \"public.movei\",\n]\n", line: 4,
            column: 3,
            code: .unknownIdentifier, message: "unknown type 'public.movei' in 'accept' (did you mean 'public.movie'?)"),
        Malformed(
            format: .toml,
            text:
                "[[types]]\nidentifier = \"com.example.a\"\nname = \"A\"\n\n[[types]]\nidentifier = \"com.example.b\"\nname = \"B\"\nconforms_to = [\"public.txt\"]\n",
            line: 8, column: 16, code: .unknownIdentifier,
            message: "unknown type 'public.txt' in 'conforms_to' of 'com.example.b' (did you mean 'public.text'?)"),
        Malformed(
            format: .yaml,
            text: "types:\n  - identifier: com.example.a\n    name: A\n  - identifier: com.example.a\n    name: B\n",
            line: 4, column: 17, code: .duplicateIdentifier,
            message: "the type 'com.example.a' is declared twice (first at line 2)"),
        Malformed(
            format: .yaml, text: "types:\n  - identifier: com.adobe.pdf\n    name: Mine\n", line: 2, column: 17,
            code: .duplicateIdentifier, message: "the type 'com.adobe.pdf' is built in"),
        Malformed(
            format: .yaml,
            text:
                "types:\n  - identifier: com.example.a\n    name: A\n    conforms_to: com.example.b\n  - identifier: com.example.b\n    name: B\n    conforms_to: com.example.a\n",
            line: 2, column: 17, code: .circularConformance,
            message: "the type 'com.example.a' conforms to itself: com.example.a → com.example.b → com.example.a"),
        Malformed(
            format: .yaml, text: "types:\n  - identifier: Not An Identifier\n    name: A\n", line: 2, column: 17,
            code: .invalidDeclaration, message: "'Not An Identifier' is not a reverse-DNS identifier"),
        Malformed(
            format: .yaml,
            text: "types:\n  - identifier: com.example.a\n    name: A\n    signatures:\n      - brands: [M4A]\n",
            line: 5,
            column: 18, code: .invalidDeclaration,
            message: "the ISO media brand 'M4A' in a signature of the type 'com.example.a' is not four characters"),
    ]

    @Test("a malformed file names the file, the line and column, and what is wrong", arguments: malformed)
    func malformedFiles(example: Malformed) throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(example.text, to: "types.\(example.format.rawValue)")
        let error = #expect(throws: DocumentTypeError.self) { try DocumentTypeConfiguration(contentsOf: path) }
        guard let error else { return }
        #expect(error.code == example.code)
        #expect(error.path == path)
        #expect(error.position?.line == example.line, "\(error)")
        if let column = example.column { #expect(error.position?.column == column, "\(error)") }
        #expect(error.message.contains(example.message), "\(error.message)")
        #expect("\(error)".hasPrefix("\(path):\(example.line):"), "\(error)")
    }

    @Test("a file that is not a configuration file")
    func otherFiles() throws {
        let folder = try TemporaryFolder()
        let text = try folder.write("accept: []", to: "types.txt")
        let unsupported = #expect(throws: DocumentTypeError.self) { try DocumentTypeConfiguration(contentsOf: text) }
        #expect(unsupported?.code == .unsupportedFormat)
        #expect(try DocumentTypeConfiguration(contentsOf: text, format: .yaml).acceptedTypes.identifiers == [])

        let missing = #expect(throws: DocumentTypeError.self) {
            try DocumentTypeConfiguration(contentsOf: folder("none.yaml"))
        }
        #expect(missing?.code == .unreadableFile)

        let latin1 = try folder.write(
            [0x61, 0x63, 0x63, 0x65, 0x70, 0x74, 0x3A, 0x0A, 0x20, 0x2D, 0x20, 0xE9], to: "bad.yaml")
        let invalid = #expect(throws: DocumentTypeError.self) { try DocumentTypeConfiguration(contentsOf: latin1) }
        #expect(invalid?.message == "the file is not valid UTF-8")
        #expect(invalid?.position == SourcePosition(line: 2, column: 4))
    }
}
