/// The reverse-DNS name of a document type, such as `com.adobe.pdf` or
/// `public.image`: Apple's uniform type identifiers where one exists.
///
/// Identifiers are compared without regard to case, as uniform type
/// identifiers are; the stored form is lowercase.
///
/// ```swift
/// let pdf: TypeIdentifier = "com.adobe.pdf"
/// ```
public struct TypeIdentifier: Hashable, Sendable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier, in lowercase.
    public let rawValue: String

    /// Creates an identifier; `rawValue` is lowercased.
    ///
    /// The text is not checked: ``isWellFormed`` tells whether it is a
    /// reverse-DNS name, and a registry refuses to declare a type whose
    /// identifier is not.
    public init(_ rawValue: String) {
        self.rawValue = rawValue.lowercased()
    }

    /// Creates an identifier from a literal such as `"public.image"`.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Whether this is a reverse-DNS name: two or more components separated by
    /// dots, each made of ASCII letters, digits, hyphens and underscores.
    public var isWellFormed: Bool {
        let components = rawValue.split(separator: ".", omittingEmptySubsequences: false)
        guard components.count >= 2 else { return false }
        return components.allSatisfy { component in
            !component.isEmpty
                && component.utf8.allSatisfy { byte in
                    (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x5F
                }
        }
    }

    public var description: String { rawValue }

    public static func < (lhs: TypeIdentifier, rhs: TypeIdentifier) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension TypeIdentifier {
    /// `public.item`: the root of the hierarchy; every type conforms to it.
    public static let item: TypeIdentifier = "public.item"
    /// `public.data`: any sequence of bytes; the type of content that nothing else describes.
    public static let data: TypeIdentifier = "public.data"
    /// `public.content`: what a person would call a document, as opposed to an archive or a program.
    public static let content: TypeIdentifier = "public.content"
    /// `public.composite-content`: content that mixes text, pictures and layout (PDF, EPUB, office documents).
    public static let compositeContent: TypeIdentifier = "public.composite-content"
    /// `public.text`: any text, whatever its encoding and markup.
    public static let text: TypeIdentifier = "public.text"
    /// `public.plain-text`: text without markup.
    public static let plainText: TypeIdentifier = "public.plain-text"
    /// `public.image`: any picture.
    public static let image: TypeIdentifier = "public.image"
    /// `public.audiovisual-content`: sound, moving pictures or both.
    public static let audiovisualContent: TypeIdentifier = "public.audiovisual-content"
    /// `public.audio`: sound without pictures.
    public static let audio: TypeIdentifier = "public.audio"
    /// `public.movie`: moving pictures, with or without sound.
    public static let movie: TypeIdentifier = "public.movie"
    /// `public.archive`: files packed together, possibly compressed.
    public static let archive: TypeIdentifier = "public.archive"
    /// `public.zip-archive`: a ZIP archive.
    public static let zipArchive: TypeIdentifier = "public.zip-archive"
    /// `public.mp3`: MPEG audio layer III.
    public static let mp3: TypeIdentifier = "public.mp3"
}
