/// The types an app knows: the built-in catalogue and the types it declares,
/// with their conformance followed transitively, and lookups by identifier,
/// file name extension and MIME type.
///
/// ```swift
/// let registry = try DocumentTypeRegistry(declaring: [notes])
/// registry.conforms("com.comicbook.cbz", to: .archive)            // true
/// registry.type(forFileName: "backup.tar.gz")?.identifier       // org.gnu.gnu-zip-tar-archive
/// let found = try registry.identify(fileAt: "Inbox/Report.txt")
/// ```
///
/// A registry is a value: build it once, share it freely.
public struct DocumentTypeRegistry: Sendable {
    /// Every type: the declared ones first, then the catalogue's.
    public let types: [DocumentType]

    let index: [TypeIdentifier: Int]
    /// For each type, the indices of the types it conforms to, itself included.
    let closure: [Set<Int>]
    /// For each type, whether content must show one of its signatures.
    let requiresSignature: [Bool]
    /// For each type, whether it is text.
    let isText: [Bool]
    private let byExtension: [String: Int]
    private let byMIMEType: [String: Int]
    /// The most dot-separated parts an extension has (2 for `tar.gz`).
    private let longestExtension: Int

    /// The built-in catalogue alone.
    public static let standard: DocumentTypeRegistry = {
        do {
            return try DocumentTypeRegistry()
        } catch {
            fatalError("The built-in catalogue is inconsistent: \(error)")
        }
    }()

    /// Creates a registry of the catalogue and `declared` types.
    ///
    /// Declared types come first: where a declared type and a catalogue type
    /// claim the same extension or MIME type, the declared one is found.
    ///
    /// - Parameters:
    ///   - declared: The app's own types.
    ///   - includingCatalogue: Whether the built-in ``DocumentType/catalogue`` is included.
    /// - Throws: ``DocumentTypeError`` when an identifier is malformed or
    ///   declared twice, a type conforms to an unknown one or to itself, or
    ///   an extension, MIME type or signature is not usable.
    public init(declaring declared: [DocumentType] = [], includingCatalogue: Bool = true) throws {
        let all = declared + (includingCatalogue ? DocumentType.catalogue : [])
        var index: [TypeIdentifier: Int] = [:]
        for (position, type) in all.enumerated() {
            try Self.validate(type)
            if index[type.identifier] != nil {
                let builtIn = DocumentType.catalogue.contains { $0.identifier == type.identifier }
                throw DocumentTypeError(
                    code: .duplicateIdentifier,
                    message: "the type '\(type.identifier)' is declared twice"
                        + (builtIn && includingCatalogue ? " (it is a built-in type)" : ""),
                    identifier: type.identifier)
            }
            index[type.identifier] = position
        }
        for type in all {
            for parent in type.conformsTo where index[parent] == nil {
                let hint = closestMatch(to: parent.rawValue, among: index.keys.map(\.rawValue))
                throw DocumentTypeError(
                    code: .unknownIdentifier,
                    message: "the type '\(type.identifier)' conforms to '\(parent)', which is not a known type"
                        + (hint.map { " (did you mean '\($0)'?)" } ?? ""),
                    identifier: parent)
            }
        }
        self.types = all
        self.index = index
        let closure = try Self.conformanceClosure(of: all, index: index)
        self.closure = closure

        let textIndex = index[.text]
        var isText: [Bool] = []
        var requiresSignature: [Bool] = []
        for (position, type) in all.enumerated() {
            let text = textIndex.map { closure[position].contains($0) } ?? false
            isText.append(text)
            requiresSignature.append(!type.signatures.isEmpty && (type.signaturesRequired ?? !text))
        }
        self.isText = isText
        self.requiresSignature = requiresSignature

        var byExtension: [String: Int] = [:]
        var byMIMEType: [String: Int] = [:]
        var longest = 1
        for (position, type) in all.enumerated() {
            for ext in type.extensions where byExtension[ext] == nil {
                byExtension[ext] = position
                longest = max(longest, ext.split(separator: ".").count)
            }
            for mime in type.mimeTypes where byMIMEType[mime] == nil {
                byMIMEType[mime] = position
            }
        }
        self.byExtension = byExtension
        self.byMIMEType = byMIMEType
        self.longestExtension = longest
    }

    /// The type with `identifier`, if there is one.
    public subscript(identifier: TypeIdentifier) -> DocumentType? {
        index[identifier].map { types[$0] }
    }

    /// Whether a type with `identifier` is known.
    public func contains(_ identifier: TypeIdentifier) -> Bool { index[identifier] != nil }

    /// The type a file name extension names, such as `pdf` or `tar.gz` (with
    /// or without the leading dot, in any case).
    public func type(forExtension fileExtension: String) -> DocumentType? {
        byExtension[extensionForm(fileExtension)].map { types[$0] }
    }

    /// The type a file's name names by its extension, trying the longest
    /// extension first (`backup.tar.gz` is a gzipped tar archive, not just
    /// gzip). A path is reduced to its last component; a hidden file's
    /// leading dot does not start an extension.
    public func type(forFileName name: String) -> DocumentType? {
        typeIndex(forFileName: name).map { types[$0] }
    }

    /// The type of a MIME type, ignoring parameters and case
    /// (`text/plain; charset=utf-8` is plain text).
    public func type(forMIMEType mimeType: String) -> DocumentType? {
        let essence = mimeType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return byMIMEType[trimmed(essence).lowercased()].map { types[$0] }
    }

    /// Whether `identifier` is `other` or a kind of it, directly or through
    /// others (a CBZ file conforms to `public.zip-archive`, `public.archive`,
    /// `public.data` and `public.item`). Unknown identifiers conform to
    /// nothing.
    public func conforms(_ identifier: TypeIdentifier, to other: TypeIdentifier) -> Bool {
        guard let position = index[identifier], let target = index[other] else { return false }
        return closure[position].contains(target)
    }

    /// The types `identifier` is a kind of, transitively, without itself; in
    /// registry order.
    public func supertypes(of identifier: TypeIdentifier) -> [DocumentType] {
        guard let position = index[identifier] else { return [] }
        return closure[position].sorted().filter { $0 != position }.map { types[$0] }
    }

    /// The types that are kinds of `identifier`, transitively, without
    /// itself; in registry order. Accepting `public.image` accepts these.
    public func subtypes(of identifier: TypeIdentifier) -> [DocumentType] {
        guard let target = index[identifier] else { return [] }
        return types.indices.filter { $0 != target && closure[$0].contains(target) }.map { types[$0] }
    }

    /// Whether content must show one of the type's signatures for a file to
    /// be taken for it: ``DocumentType/signaturesRequired`` resolved (for
    /// types with signatures, yes unless it is text).
    public func signaturesRequired(for identifier: TypeIdentifier) -> Bool {
        index[identifier].map { requiresSignature[$0] } ?? false
    }

    /// Whether the type is text (`public.text` or a kind of it).
    public func isText(_ identifier: TypeIdentifier) -> Bool {
        index[identifier].map { isText[$0] } ?? false
    }

    func typeIndex(forFileName name: String) -> Int? {
        let lastComponent = name.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? ""
        var parts = lastComponent.lowercased().split(separator: ".", omittingEmptySubsequences: false)
        // "notes" has no extension; ".profile" neither; "file." has an empty one.
        if parts.first?.isEmpty == true { parts.removeFirst() }
        guard parts.count >= 2 else { return nil }
        let available = min(longestExtension, parts.count - 1)
        for count in stride(from: available, through: 1, by: -1) {
            let candidate = parts.suffix(count).joined(separator: ".")
            if let found = byExtension[candidate] { return found }
        }
        return nil
    }

    private static func validate(_ type: DocumentType) throws {
        func invalid(_ problem: String) -> DocumentTypeError {
            DocumentTypeError(
                code: .invalidDeclaration, message: "the type '\(type.identifier)' \(problem)",
                identifier: type.identifier)
        }
        guard type.identifier.isWellFormed else {
            throw DocumentTypeError(
                code: .invalidDeclaration,
                message: "'\(type.identifier)' is not a reverse-DNS identifier (such as com.example.notes)",
                identifier: type.identifier)
        }
        if trimmed(type.name).isEmpty { throw invalid("has an empty name") }
        for ext in type.extensions {
            let parts = ext.split(separator: ".", omittingEmptySubsequences: false)
            if parts.contains(where: \.isEmpty) || ext.contains("/") || ext.contains(" ") || ext.contains("\0") {
                throw invalid("has an invalid extension '\(ext)'")
            }
        }
        for mime in type.mimeTypes {
            let parts = mime.split(separator: "/", omittingEmptySubsequences: false)
            if parts.count != 2 || parts.contains(where: \.isEmpty) || mime.contains(" ") || mime.contains(";") {
                throw invalid("has an invalid MIME type '\(mime)' (expected type/subtype)")
            }
        }
        for signature in type.signatures {
            switch signature {
            case .bytes(let patterns):
                if patterns.isEmpty { throw invalid("has a signature with no byte pattern") }
                for pattern in patterns where !pattern.isValid {
                    throw invalid(
                        "has an invalid byte pattern (\(pattern.summary)): it needs bytes, a non-negative offset "
                            + "and a mask as long as its bytes")
                }
            case .textPrefix(let prefix, _):
                if prefix.isEmpty { throw invalid("has an empty text prefix") }
            case .xmlRoot(let name):
                if name.isEmpty || name.contains(" ") {
                    throw invalid("has an invalid XML root element name '\(name)'")
                }
            case .isoBrand(let brands):
                if brands.isEmpty { throw invalid("has a signature with no ISO media brand") }
                for brand in brands where brand.utf8.count != 4 {
                    throw invalid("has an invalid ISO media brand '\(brand)' (brands are four characters)")
                }
            case .zip(let rule):
                if !rule.isValid {
                    throw invalid("has a ZIP signature with no rule (a mimetype, required entries or an entry type)")
                }
            }
        }
    }

    /// The transitive closure of conformance, refusing cycles.
    private static func conformanceClosure(of types: [DocumentType], index: [TypeIdentifier: Int]) throws -> [Set<Int>]
    {
        var closure = [Set<Int>?](repeating: nil, count: types.count)
        var visiting = Set<Int>()
        func visit(_ position: Int, path: [Int]) throws -> Set<Int> {
            if let done = closure[position] { return done }
            if visiting.contains(position) {
                let cycle = (path.drop { $0 != position } + [position]).map { types[$0].identifier.rawValue }
                throw DocumentTypeError(
                    code: .circularConformance,
                    message: "the type '\(types[position].identifier)' conforms to itself: "
                        + cycle.joined(separator: " → "),
                    identifier: types[position].identifier)
            }
            visiting.insert(position)
            var result: Set<Int> = [position]
            for parent in types[position].conformsTo {
                result.formUnion(try visit(index[parent]!, path: path + [position]))
            }
            visiting.remove(position)
            closure[position] = result
            return result
        }
        for position in types.indices { _ = try visit(position, path: []) }
        // Validate entry types of ZIP rules now that identifiers are known.
        for type in types {
            for case .zip(let rule) in type.signatures {
                if let entryType = rule.entryType, index[entryType] == nil {
                    throw DocumentTypeError(
                        code: .unknownIdentifier,
                        message: "the type '\(type.identifier)' has a ZIP signature whose entry type '\(entryType)' "
                            + "is not a known type",
                        identifier: entryType)
                }
            }
        }
        return closure.map { $0! }
    }
}

/// `text` without leading and trailing white space.
func trimmed(_ text: some StringProtocol) -> String {
    let scalars = text.unicodeScalars
    guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
    let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
    return String(String.UnicodeScalarView(scalars[first...last]))
}
