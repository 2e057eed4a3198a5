public import ConfigText

/// An error thrown by the document-type registry, the accepted-types policy,
/// the configuration loader or the file reader: what was wrong, and where.
///
/// Like `FileSystemError` in swift-nio, the ``Code`` is extensible and the
/// message is written for a person. ``description`` puts the place first,
/// as compilers do: `types.yaml:12:5: unknown type 'public.imgae' in accept
/// (did you mean 'public.image'?)`.
public struct DocumentTypeError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case malformedConfiguration, unknownIdentifier, duplicateIdentifier, circularConformance,
                invalidDeclaration, unreadableFile, unsupportedFormat
        }
        fileprivate var value: Value

        /// A configuration file is not valid JSON, YAML or TOML, or does not
        /// have the expected keys and values.
        public static let malformedConfiguration = Code(value: .malformedConfiguration)
        /// An identifier names no type of the registry.
        public static let unknownIdentifier = Code(value: .unknownIdentifier)
        /// Two types are declared with the same identifier.
        public static let duplicateIdentifier = Code(value: .duplicateIdentifier)
        /// A type conforms to itself through others.
        public static let circularConformance = Code(value: .circularConformance)
        /// A declaration is not usable: a malformed identifier, extension,
        /// MIME type or signature.
        public static let invalidDeclaration = Code(value: .invalidDeclaration)
        /// A file could not be opened or read.
        public static let unreadableFile = Code(value: .unreadableFile)
        /// A configuration file's name ends with none of `.json`, `.yaml`,
        /// `.yml` and `.toml`.
        public static let unsupportedFormat = Code(value: .unsupportedFormat)

        public var description: String { "\(value)" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for a person: the problem and, where there is one, the fix.
    public var message: String
    /// The file concerned, if any.
    public var path: String?
    /// The place in the file, if known.
    public var position: SourcePosition?
    /// The identifier concerned, if any.
    public var identifier: TypeIdentifier?
    /// The underlying error (a parser's, or an `errno` value), if any.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A sentence for a person.
    ///   - path: The file concerned, if any.
    ///   - position: The place in the file, if known.
    ///   - identifier: The identifier concerned, if any.
    ///   - cause: The underlying error, if any.
    public init(
        code: Code, message: String, path: String? = nil, position: SourcePosition? = nil,
        identifier: TypeIdentifier? = nil, cause: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.position = position
        self.identifier = identifier
        self.cause = cause
    }

    /// The place and the message: `file:line:column: message`.
    public var description: String {
        var place = path ?? ""
        if let position {
            place += (place.isEmpty ? "line " : ":") + "\(position.line)"
            if let column = position.column { place += ":\(column)" }
        }
        return place.isEmpty ? message : "\(place): \(message)"
    }
}

/// A place in a text file (defined with the readers that find it).
public typealias SourcePosition = ConfigText.SourcePosition

/// The closest of `candidates` to `word`, if it is close enough to be a
/// likely typo: for "did you mean" hints.
func closestMatch(to word: String, among candidates: some Sequence<String>) -> String? {
    let target = Array(word.lowercased().unicodeScalars)
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(target, Array(candidate.lowercased().unicodeScalars))
        if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
    }
    guard let best else { return nil }
    let allowed = max(1, min(3, target.count / 4))
    return best.distance <= allowed ? best.candidate : nil
}

/// The Levenshtein distance between two sequences, with adjacent
/// transpositions counted as one edit.
private func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var before = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], before[j - 2] + 1)
            }
        }
        before = previous
        previous = current
    }
    return previous[b.count]
}
