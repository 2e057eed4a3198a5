/// A declared type of document, like an app's declared document types: an
/// identifier, the types it is a kind of, and how its files are named and
/// recognised.
///
/// ```swift
/// let notes = DocumentType(
///     identifier: "com.example.notes", name: "Example notes",
///     conformsTo: [.plainText], extensions: ["exnotes"],
///     mimeTypes: ["text/x-example-notes"])
/// ```
///
/// A type declared without ``conformsTo`` is a kind of `public.data`.
public struct DocumentType: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// The reverse-DNS name, such as `com.adobe.pdf`.
    public var identifier: TypeIdentifier
    /// The name for a person, written to fit in a sentence: "PDF document",
    /// "JPEG image", "plain text document".
    public var name: String
    /// The types this one is a kind of, directly (a CBZ file is a kind of
    /// `public.zip-archive`); the registry follows them transitively.
    public var conformsTo: [TypeIdentifier]
    /// File name extensions, lowercase, without the dot; the first is the
    /// preferred one. An extension may have several parts (`tar.gz`).
    public var extensions: [String]
    /// MIME types, lowercase; the first is the preferred one.
    public var mimeTypes: [String]
    /// The ways its content shows this type; any one is enough.
    public var signatures: [ContentSignature]
    /// Whether content must show one of ``signatures`` for a file to be taken
    /// for this type; `nil` (the default) means yes for types with
    /// signatures that are not text, no for text types.
    ///
    /// When it is `false`, a file whose name says this type is taken at its
    /// word as long as its content is compatible: an MPEG-4 file named
    /// `.m4a` is MPEG-4 audio whatever its brand, text named `.html` is HTML
    /// without a `<!doctype html>`.
    public var signaturesRequired: Bool?
    /// Whether content that shows one of ``signatures`` is taken for this
    /// type only when the file's name says so as well: a ZIP archive of
    /// images is a comic book archive when it is named `.cbz`, and a ZIP
    /// archive otherwise.
    public var requiresMatchingName: Bool

    /// The identifier, for `Identifiable`.
    public var id: TypeIdentifier { identifier }
    /// The preferred extension, if any.
    public var preferredExtension: String? { extensions.first }
    /// The preferred MIME type, if any.
    public var preferredMIMEType: String? { mimeTypes.first }

    /// Creates a type.
    ///
    /// - Parameters:
    ///   - identifier: The reverse-DNS name, such as `com.example.notes`.
    ///   - name: The name for a person, written to fit in a sentence ("Example notes file").
    ///   - conformsTo: The types it is directly a kind of; `public.data` when empty.
    ///   - extensions: File name extensions, without the dot; lowercased.
    ///   - mimeTypes: MIME types; lowercased.
    ///   - signatures: The ways its content shows this type.
    ///   - signaturesRequired: Whether content must show a signature (`nil`: yes unless it is text).
    ///   - requiresMatchingName: Whether a matching signature counts only with a matching name.
    public init(
        identifier: TypeIdentifier, name: String, conformsTo: [TypeIdentifier] = [], extensions: [String] = [],
        mimeTypes: [String] = [], signatures: [ContentSignature] = [], signaturesRequired: Bool? = nil,
        requiresMatchingName: Bool = false
    ) {
        self.identifier = identifier
        self.name = name
        self.conformsTo = conformsTo.isEmpty && identifier != .item && identifier != .data ? [.data] : conformsTo
        self.extensions = extensions.map { extensionForm($0) }
        self.mimeTypes = mimeTypes.map { $0.lowercased() }
        self.signatures = signatures
        self.signaturesRequired = signaturesRequired
        self.requiresMatchingName = requiresMatchingName
    }

    /// The name with an indefinite article, for a sentence: "a PDF document",
    /// "an MP3 audio file", "an EPUB book".
    public var nameWithArticle: String { indefiniteArticle(for: name) + " " + name }

    public var description: String { "\(name) (\(identifier))" }
}

/// An extension as stored: lowercase, without a leading dot.
func extensionForm(_ text: String) -> String {
    let lowered = text.lowercased()
    return lowered.hasPrefix(".") ? String(lowered.dropFirst()) : lowered
}

/// "a" or "an" before `phrase`, by how its first word is said.
///
/// Words take "an" before a vowel sound. Abbreviations said letter by letter
/// (PDF, MP3, HTML, SVG) take "an" when their first letter's name starts with
/// a vowel sound (F, H, L, M, N, R, S, X, and the vowels); abbreviations said
/// as words (JPEG, RAR, FLAC, EPUB) follow the word rule.
func indefiniteArticle(for phrase: String) -> String {
    let word = phrase.prefix { $0 != " " && $0 != "-" && $0 != "/" && $0 != "(" }
    guard let first = word.first else { return "a" }
    let upper = String(word).uppercased()
    if first.isNumber {
        // "an 8-bit", "an 11", "an 18"; "a 7-Zip".
        return word.hasPrefix("8") || word.hasPrefix("11") || word.hasPrefix("18") ? "an" : "a"
    }
    let saidAsWords: Set<String> = [
        "JPEG", "RAR", "FLAC", "EPUB", "GIF", "TIFF", "HEIC", "HEIF", "AVIF", "AIFF", "WAVE", "ZIP", "MIDI",
        "OLE", "UNIX",
    ]
    let isAbbreviation =
        word.count >= 2 && word.allSatisfy { $0.isUppercase || $0.isNumber } && !saidAsWords.contains(upper)
    if isAbbreviation {
        return "AEFHILMNORSX".contains(first) ? "an" : "a"
    }
    let lower = word.lowercased()
    for yooPrefix in ["uni", "use", "usu", "utf", "euro", "one", "once"] where lower.hasPrefix(yooPrefix) {
        return "a"
    }
    for silentH in ["hour", "honest", "honor", "honour", "heir"] where lower.hasPrefix(silentH) {
        return "an"
    }
    return "aeiou".contains(lower.first!) ? "an" : "a"
}
