import ConfigText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The types an app accepts, and the types it declares, read from a
/// configuration file in JSON, YAML or TOML.
///
/// ```yaml
/// accept: [public.image, com.adobe.pdf, com.example.notes]
/// types:
///   - identifier: com.example.notes
///     name: Example notes file
///     conforms_to: public.plain-text
///     extensions: [exnotes]
///     mime_types: [text/x-example-notes]
///     signatures:
///       - text_prefix: "%EXNOTES"
/// ```
///
/// The same in JSON is an object with the same keys; in TOML, `accept = […]`
/// and a `[[types]]` table for each type. The keys:
///
/// - `accept`: identifiers (or one identifier); every kind of them is
///   accepted. Without it, everything is.
/// - `types`: declared types, each with `identifier` and `name` (required),
///   `conforms_to` (default `public.data`), `extensions`, `mime_types`,
///   `signatures`, `signatures_required` and `requires_matching_name` (see
///   ``DocumentType``).
/// - A signature is one of: `{offset, hex or text, mask, window}` (bytes at
///   an offset: `hex: "25 50 44 46"` or `text: "%PDF"`); `{all: [...]}`
///   (several such patterns); `{text_prefix, ignore_case}`; `{xml_root}`;
///   `{brands: [...]}` (ISO media brands); `{zip: {mimetype, entries,
///   entry_type, ignoring}}`.
///
/// A file that is not valid JSON, YAML or TOML, an unknown key, a value of
/// the wrong kind, an unknown or duplicate identifier: each throws a
/// ``DocumentTypeError`` naming the file, the line and column, and what is
/// wrong.
public struct DocumentTypeConfiguration: Sendable {
    /// The formats a configuration file may be written in.
    public enum Format: String, Sendable, CaseIterable {
        case json, yaml, toml

        /// The format a file name's extension says: `.json`, `.yaml` or `.yml`, `.toml`.
        public init?(fileName: String) {
            let lowered = fileName.lowercased()
            if lowered.hasSuffix(".json") {
                self = .json
            } else if lowered.hasSuffix(".yaml") || lowered.hasSuffix(".yml") {
                self = .yaml
            } else if lowered.hasSuffix(".toml") {
                self = .toml
            } else {
                return nil
            }
        }
    }

    /// The types the file declares.
    public let declaredTypes: [DocumentType]
    /// The registry: the catalogue and the declared types.
    public let registry: DocumentTypeRegistry
    /// The accepted types (everything, when the file names none).
    public let acceptedTypes: AcceptedTypes

    /// Reads the configuration file at `path`.
    ///
    /// - Parameters:
    ///   - path: The file; its extension tells the format unless `format` is given.
    ///   - format: The format, if the name does not tell it.
    /// - Throws: ``DocumentTypeError`` naming the file, the line and column
    ///   where known, and what is wrong.
    public init(contentsOf path: String, format: Format? = nil) throws {
        guard let format = format ?? Format(fileName: path) else {
            throw DocumentTypeError(
                code: .unsupportedFormat,
                message: "cannot tell the format of '\(path)': name it .json, .yaml, .yml or .toml", path: path)
        }
        try self.init(parsing: try Self.readText(path), format: format, path: path)
    }

    /// Reads a configuration from its text.
    ///
    /// - Parameters:
    ///   - text: The file's content.
    ///   - format: The format it is written in.
    ///   - path: The file's path or name, for messages.
    /// - Throws: ``DocumentTypeError`` naming the line and column where
    ///   known, and what is wrong.
    public init(parsing text: String, format: Format, path: String? = nil) throws {
        let root: ConfigNode
        do throws(ConfigProblem) {
            switch format {
            case .json: root = try ConfigNode.parseJSON(text)
            case .yaml: root = try ConfigNode.parseYAML(text)
            case .toml: root = try ConfigNode.parseTOML(text)
            }
        } catch {
            throw DocumentTypeError(
                code: .malformedConfiguration, message: error.message, path: path, position: error.position)
        }
        var decoder = ConfigurationDecoder(path: path)
        let decoded = try decoder.decode(root)
        let registry = try decoder.validate(decoded)
        self.declaredTypes = decoded.types.map(\.type)
        self.registry = registry
        do {
            self.acceptedTypes =
                try decoded.accept.map { try AcceptedTypes($0.map(\.identifier), registry: registry) }
                ?? AcceptedTypes.all(in: registry)
        } catch var error as DocumentTypeError {
            error.path = path
            error.position = decoded.accept?.first { $0.identifier == error.identifier }?.position
            throw error
        }
    }

    /// Reads a whole text file.
    private static func readText(_ path: String) throws -> String {
        let file = try FileContent(path: path)
        guard let size = file.size else { return "" }
        let limit = 16 << 20
        guard size <= limit else {
            throw DocumentTypeError(
                code: .malformedConfiguration, message: "'\(path)' is too large for a configuration file (over 16 MiB)",
                path: path)
        }
        let bytes = try file.read(at: 0, count: size)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let position = firstInvalidUTF8(bytes).map { sourcePosition(ofOffset: $0, in: bytes) }
            throw DocumentTypeError(
                code: .malformedConfiguration, message: "the file is not valid UTF-8", path: path, position: position)
        }
        return text
    }

    private static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}

/// Turns configuration nodes into declarations, with the position of each
/// value kept for the messages of later checks.
private struct ConfigurationDecoder {
    let path: String?

    struct Located<Value> {
        var value: Value
        var position: SourcePosition?
    }

    struct Accepted {
        var identifier: TypeIdentifier
        var position: SourcePosition?
    }

    struct Declared {
        var type: DocumentType
        var position: SourcePosition?
        var identifierPosition: SourcePosition?
        var parentPositions: [TypeIdentifier: SourcePosition]
        var entryTypePositions: [TypeIdentifier: SourcePosition]
    }

    struct Decoded {
        var accept: [Accepted]?
        var types: [Declared]
    }

    func error(_ message: String, at node: ConfigNode?, code: DocumentTypeError.Code = .malformedConfiguration)
        -> DocumentTypeError
    {
        DocumentTypeError(code: code, message: message, path: path, position: node?.position)
    }

    // MARK: Shapes

    func table(_ node: ConfigNode, _ what: String, keys allowed: [String]) throws -> [String: ConfigNode] {
        guard case .table(let entries) = node.value else {
            throw error("\(what) must be a table (key: value pairs), not \(node.kindDescription)", at: node)
        }
        var result: [String: ConfigNode] = [:]
        for (key, value) in entries {
            guard allowed.contains(key) else {
                let hint = closestMatch(to: key, among: allowed).map { "did you mean '\($0)'? " } ?? ""
                var located = value
                if located.position == nil { located.position = node.position }
                throw error(
                    "unknown key '\(key)' in \(what) (\(hint)expected \(allowed.map { "'\($0)'" }.joined(separator: ", ")))",
                    at: located)
            }
            result[key] = value
        }
        return result
    }

    func string(_ node: ConfigNode, _ what: String) throws -> String {
        switch node.value {
        case .string(let text): return text
        case .integer, .boolean, .other:
            // A YAML scalar without quotes, such as 7z or 001.
            if let plain = node.plainText { return plain }
        default: break
        }
        throw error("\(what) must be a string, not \(node.kindDescription)", at: node)
    }

    /// A list of strings, or one string.
    func strings(_ node: ConfigNode, _ what: String) throws -> [Located<String>] {
        if case .list(let elements) = node.value {
            return try elements.map {
                Located(value: try string($0, "each of \(what)"), position: $0.position ?? node.position)
            }
        }
        let isScalarText: Bool
        switch node.value {
        case .string: isScalarText = true
        case .integer, .boolean, .other: isScalarText = node.plainText != nil
        case .null, .list, .table: isScalarText = false
        }
        guard isScalarText else {
            throw error("\(what) must be a string or a list of strings, not \(node.kindDescription)", at: node)
        }
        return [Located(value: try string(node, what), position: node.position)]
    }

    func integer(_ node: ConfigNode, _ what: String) throws -> Int {
        guard case .integer(let value) = node.value else {
            throw error("\(what) must be an integer, not \(node.kindDescription)", at: node)
        }
        return value
    }

    func boolean(_ node: ConfigNode, _ what: String) throws -> Bool {
        guard case .boolean(let value) = node.value else {
            throw error("\(what) must be true or false, not \(node.kindDescription)", at: node)
        }
        return value
    }

    func list(_ node: ConfigNode, _ what: String) throws -> [ConfigNode] {
        guard case .list(let elements) = node.value else {
            throw error("\(what) must be a list, not \(node.kindDescription)", at: node)
        }
        return elements
    }

    // MARK: Declarations

    mutating func decode(_ root: ConfigNode) throws -> Decoded {
        if case .null = root.value { return Decoded(accept: nil, types: []) }
        let top = try table(root, "the configuration", keys: ["accept", "types"])
        var decoded = Decoded(accept: nil, types: [])
        if let accept = top["accept"] {
            decoded.accept = try strings(accept, "'accept'").map {
                Accepted(identifier: TypeIdentifier(trimmed($0.value)), position: $0.position)
            }
        }
        if let types = top["types"] {
            for (number, node) in try list(types, "'types'").enumerated() {
                decoded.types.append(try declaration(node, number: number + 1))
            }
        }
        return decoded
    }

    private func declaration(_ node: ConfigNode, number: Int) throws -> Declared {
        let what = "type declaration #\(number)"
        let fields = try table(
            node, what,
            keys: [
                "identifier", "name", "conforms_to", "extensions", "mime_types", "signatures", "signatures_required",
                "requires_matching_name",
            ])
        guard let identifierNode = fields["identifier"] else {
            throw error("\(what) has no 'identifier' (such as com.example.notes)", at: node)
        }
        let identifierText = trimmed(try string(identifierNode, "'identifier'"))
        let identifier = TypeIdentifier(identifierText)
        guard identifier.isWellFormed else {
            throw error(
                "'\(identifierText)' is not a reverse-DNS identifier (such as com.example.notes)", at: identifierNode,
                code: .invalidDeclaration)
        }
        let context = "the type '\(identifier)'"
        guard let nameNode = fields["name"] else {
            throw error("\(context) has no 'name' (the name for a person, such as \"Example notes file\")", at: node)
        }
        let name = trimmed(try string(nameNode, "'name'"))
        if name.isEmpty { throw error("\(context) has an empty 'name'", at: nameNode, code: .invalidDeclaration) }
        let parents = try fields["conforms_to"].map { try strings($0, "'conforms_to'") } ?? []
        let extensions = try fields["extensions"].map { try strings($0, "'extensions'") } ?? []
        for ext in extensions {
            let form = extensionForm(trimmed(ext.value))
            if form.isEmpty || form.contains("/") || form.contains(" ")
                || form.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
            {
                throw DocumentTypeError(
                    code: .invalidDeclaration, message: "\(context) has an invalid extension '\(ext.value)'",
                    path: path,
                    position: ext.position)
            }
        }
        let mimeTypes = try fields["mime_types"].map { try strings($0, "'mime_types'") } ?? []
        for mime in mimeTypes {
            let parts = trimmed(mime.value).split(separator: "/", omittingEmptySubsequences: false)
            if parts.count != 2 || parts.contains(where: \.isEmpty) || mime.value.contains(";") {
                throw DocumentTypeError(
                    code: .invalidDeclaration,
                    message: "\(context) has an invalid MIME type '\(mime.value)' (expected type/subtype)", path: path,
                    position: mime.position)
            }
        }
        var entryTypePositions: [TypeIdentifier: SourcePosition] = [:]
        var signatures: [ContentSignature] = []
        if let signatureNodes = fields["signatures"] {
            for element in try list(signatureNodes, "'signatures'") {
                signatures.append(try signature(element, context: context, entryTypePositions: &entryTypePositions))
            }
        }
        var parentPositions: [TypeIdentifier: SourcePosition] = [:]
        for parent in parents { parentPositions[TypeIdentifier(trimmed(parent.value))] = parent.position }
        let type = DocumentType(
            identifier: identifier, name: name, conformsTo: parents.map { TypeIdentifier(trimmed($0.value)) },
            extensions: extensions.map { trimmed($0.value) }, mimeTypes: mimeTypes.map { trimmed($0.value) },
            signatures: signatures,
            signaturesRequired: try fields["signatures_required"].map { try boolean($0, "'signatures_required'") },
            requiresMatchingName: try fields["requires_matching_name"].map {
                try boolean($0, "'requires_matching_name'")
            }
                ?? false)
        return Declared(
            type: type, position: node.position, identifierPosition: identifierNode.position,
            parentPositions: parentPositions, entryTypePositions: entryTypePositions)
    }

    private func signature(
        _ node: ConfigNode, context: String, entryTypePositions: inout [TypeIdentifier: SourcePosition]
    ) throws -> ContentSignature {
        let what = "a signature of \(context)"
        let patternKeys = ["offset", "hex", "text", "mask", "window"]
        let fields = try table(
            node, what, keys: patternKeys + ["all", "text_prefix", "ignore_case", "xml_root", "brands", "zip"])
        let kinds = ["hex", "text", "all", "text_prefix", "xml_root", "brands", "zip"].filter { fields[$0] != nil }
        guard kinds.count == 1 else {
            if kinds.isEmpty {
                throw error(
                    "\(what) says nothing to look for: give 'hex' or 'text' (with 'offset'), 'all', 'text_prefix', "
                        + "'xml_root', 'brands' or 'zip'", at: node)
            }
            throw error(
                "\(what) has both \(kinds.map { "'\($0)'" }.joined(separator: " and ")); give one per signature "
                    + "(use 'all' for several byte patterns)", at: node)
        }
        let kind = kinds[0]
        let isPattern = kind == "hex" || kind == "text"
        for key in patternKeys where !isPattern && fields[key] != nil {
            throw error("'\(key)' applies to 'hex' and 'text' patterns, not to '\(kind)'", at: fields[key])
        }
        if kind != "text_prefix", let ignoreCase = fields["ignore_case"] {
            throw error("'ignore_case' applies to 'text_prefix', not to '\(kind)'", at: ignoreCase)
        }
        switch kind {
        case "hex", "text":
            return .bytes([try pattern(fields, node: node, what: what)])
        case "all":
            let elements = try list(fields["all"]!, "'all'")
            if elements.isEmpty { throw error("'all' in \(what) is empty", at: fields["all"]) }
            return .bytes(
                try elements.map { element in
                    try pattern(
                        try table(element, "a pattern of \(what)", keys: patternKeys), node: element, what: what)
                })
        case "text_prefix":
            let prefix = try string(fields["text_prefix"]!, "'text_prefix'")
            if prefix.isEmpty { throw error("'text_prefix' in \(what) is empty", at: fields["text_prefix"]) }
            return .textPrefix(
                prefix, ignoringCase: try fields["ignore_case"].map { try boolean($0, "'ignore_case'") } ?? false)
        case "xml_root":
            let name = trimmed(try string(fields["xml_root"]!, "'xml_root'"))
            if name.isEmpty { throw error("'xml_root' in \(what) is empty", at: fields["xml_root"]) }
            return .xmlRoot(name)
        case "brands":
            let brands = try strings(fields["brands"]!, "'brands'")
            for brand in brands where brand.value.utf8.count != 4 {
                throw DocumentTypeError(
                    code: .invalidDeclaration,
                    message: "the ISO media brand '\(brand.value)' in \(what) is not four characters "
                        + "(pad it with spaces: \"M4A \")", path: path, position: brand.position)
            }
            return .isoBrand(brands.map(\.value))
        default:
            let zipNode = fields["zip"]!
            let zip = try table(zipNode, "'zip' in \(what)", keys: ["mimetype", "entries", "entry_type", "ignoring"])
            let entryType = try zip["entry_type"].map { node in
                let identifier = TypeIdentifier(trimmed(try string(node, "'entry_type'")))
                if let position = node.position { entryTypePositions[identifier] = position }
                return identifier
            }
            let rule = ZipSignature(
                mimetype: try zip["mimetype"].map { try string($0, "'mimetype'") },
                requiredEntries: try zip["entries"].map { try strings($0, "'entries'").map(\.value) } ?? [],
                entryType: entryType,
                ignoredNames: try zip["ignoring"].map { try strings($0, "'ignoring'").map(\.value) } ?? [])
            if !rule.isValid {
                throw error("'zip' in \(what) needs 'mimetype', 'entries' or 'entry_type'", at: zipNode)
            }
            return .zip(rule)
        }
    }

    private func pattern(_ fields: [String: ConfigNode], node: ConfigNode, what: String) throws -> BytePattern {
        let offset = try fields["offset"].map { try integer($0, "'offset'") } ?? 0
        if offset < 0 { throw error("'offset' in \(what) is negative", at: fields["offset"]) }
        let window = try fields["window"].map { try integer($0, "'window'") } ?? 1
        if window < 1 { throw error("'window' in \(what) must be at least 1", at: fields["window"]) }
        let bytes: [UInt8]
        switch (fields["hex"], fields["text"]) {
        case (let hex?, nil): bytes = try hexBytes(hex, "'hex'")
        case (nil, let text?): bytes = Array(try string(text, "'text'").utf8)
        case (.some, .some): throw error("a pattern of \(what) has both 'hex' and 'text'; give one", at: node)
        case (nil, nil): throw error("a pattern of \(what) has neither 'hex' nor 'text'", at: node)
        }
        if bytes.isEmpty { throw error("a pattern of \(what) has no bytes", at: node) }
        let mask = try fields["mask"].map { try hexBytes($0, "'mask'") }
        if let mask, mask.count != bytes.count {
            throw error(
                "the mask of a pattern of \(what) has \(mask.count) byte\(mask.count == 1 ? "" : "s"), "
                    + "but the pattern has \(bytes.count)",
                at: fields["mask"])
        }
        return BytePattern(bytes, at: offset, mask: mask, window: window)
    }

    /// Hexadecimal bytes, spaced or not: `25 50 44 46`, `25504446`, `0x25 0x50`.
    private func hexBytes(_ node: ConfigNode, _ what: String) throws -> [UInt8] {
        let text = try string(node, what)
        var digits: [UInt8] = []
        let separators: Set<Unicode.Scalar> = [" ", "\t", ":", "-", ","]
        for token in text.unicodeScalars.split(whereSeparator: { separators.contains($0) }) {
            var scalars = Substring.UnicodeScalarView(token)
            if scalars.count > 2, scalars.first == "0",
                scalars.dropFirst().first == "x" || scalars.dropFirst().first == "X"
            {
                scalars = scalars.dropFirst(2)
            }
            for scalar in scalars {
                switch scalar {
                case "0"..."9": digits.append(UInt8(scalar.value - 48))
                case "a"..."f": digits.append(UInt8(scalar.value - 97 + 10))
                case "A"..."F": digits.append(UInt8(scalar.value - 65 + 10))
                default:
                    throw error(
                        "\(what) must be hexadecimal bytes (such as \"25 50 44 46\"), but has '\(scalar)'", at: node)
                }
            }
        }
        guard digits.count % 2 == 0 else {
            throw error("\(what) has an odd number of hexadecimal digits (\(digits.count))", at: node)
        }
        return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    // MARK: Identifiers

    /// Checks identifiers against the catalogue and each other, with
    /// positions, then builds the registry.
    func validate(_ decoded: Decoded) throws -> DocumentTypeRegistry {
        var known = Set(DocumentType.catalogue.map(\.identifier))
        var declaredAt: [TypeIdentifier: SourcePosition] = [:]
        for declared in decoded.types {
            let identifier = declared.type.identifier
            if DocumentType.catalogue.contains(where: { $0.identifier == identifier }) {
                throw DocumentTypeError(
                    code: .duplicateIdentifier,
                    message: "the type '\(identifier)' is built in; declare a type of your own (such as "
                        + "com.example.\(identifier.rawValue.split(separator: ".").last ?? "type")) that conforms to it",
                    path: path, position: declared.identifierPosition, identifier: identifier)
            }
            if let first = declaredAt[identifier] {
                throw DocumentTypeError(
                    code: .duplicateIdentifier,
                    message: "the type '\(identifier)' is declared twice (first at line \(first.line))", path: path,
                    position: declared.identifierPosition, identifier: identifier)
            }
            declaredAt[identifier] = declared.identifierPosition ?? SourcePosition(line: 0)
            known.insert(identifier)
        }
        let names = known.map(\.rawValue)
        func unknown(_ identifier: TypeIdentifier, _ role: String, at position: SourcePosition?) -> DocumentTypeError {
            let hint = closestMatch(to: identifier.rawValue, among: names).map { " (did you mean '\($0)'?)" } ?? ""
            return DocumentTypeError(
                code: .unknownIdentifier, message: "unknown type '\(identifier)' \(role)\(hint)", path: path,
                position: position, identifier: identifier)
        }
        for declared in decoded.types {
            for parent in declared.type.conformsTo where !known.contains(parent) {
                throw unknown(
                    parent, "in 'conforms_to' of '\(declared.type.identifier)'",
                    at: declared.parentPositions[parent] ?? declared.position)
            }
            for case .zip(let rule) in declared.type.signatures {
                if let entryType = rule.entryType, !known.contains(entryType) {
                    throw unknown(
                        entryType, "in 'entry_type' of '\(declared.type.identifier)'",
                        at: declared.entryTypePositions[entryType] ?? declared.position)
                }
            }
        }
        for accepted in decoded.accept ?? [] where !known.contains(accepted.identifier) {
            throw unknown(accepted.identifier, "in 'accept'", at: accepted.position)
        }
        do {
            return try DocumentTypeRegistry(declaring: decoded.types.map(\.type))
        } catch var error as DocumentTypeError {
            error.path = path
            if let identifier = error.identifier {
                error.position = decoded.types.first { $0.type.identifier == identifier }?.identifierPosition
            }
            throw error
        }
    }
}
