/// One way a file's content shows its type: magic bytes at an offset, the
/// start of a text, an ISO media brand, or the entries of a ZIP archive.
///
/// A ``DocumentType`` lists several; any one of them is enough.
///
/// ```swift
/// let webP = ContentSignature.bytes([.init(ascii: "RIFF", at: 0), .init(ascii: "WEBP", at: 8)])
/// let epub = ContentSignature.zip(.init(mimetype: "application/epub+zip"))
/// ```
public enum ContentSignature: Hashable, Sendable {
    /// Every pattern matches.
    case bytes([BytePattern])
    /// The content is text (UTF-8, UTF-16 with a byte order mark, or an
    /// 8-bit encoding) that starts with `prefix`, after a byte order mark and
    /// white space.
    case textPrefix(String, ignoringCase: Bool)
    /// The content is XML whose root element is named `name` (compared
    /// without its namespace prefix), after the XML declaration, comments,
    /// processing instructions and a document type declaration.
    case xmlRoot(String)
    /// The content is ISO base media (MPEG-4, QuickTime, HEIF, 3GPP): an
    /// `ftyp` box whose major brand, or failing that one of whose compatible
    /// brands, is in the list. Brands are four characters, padded with spaces
    /// (`"M4A "`, `"qt  "`).
    case isoBrand([String])
    /// The content is a ZIP archive whose entries match the rule.
    case zip(ZipSignature)

    /// A one-line description, as a configuration file would write it.
    /// Whether a match is evidence enough to say a name lies: a few bits
    /// that any random bytes match now and then (an MPEG audio frame's 11
    /// sync bits: one file in some thousands) are not. Byte patterns must
    /// fix at least 24 bits between them, a window counting against them.
    var isConclusive: Bool {
        switch self {
        case .bytes(let patterns):
            let bits = patterns.reduce(0) { total, pattern in
                let fixed =
                    pattern.mask.map { mask in mask.reduce(0) { $0 + $1.nonzeroBitCount } }
                    ?? pattern.bytes.count * 8
                return total + fixed - (Int.bitWidth - pattern.window.leadingZeroBitCount - 1)
            }
            return bits >= 24
        case .textPrefix(let prefix, _): return prefix.utf8.count >= 3
        case .xmlRoot, .isoBrand, .zip: return true
        }
    }

    var summary: String {
        switch self {
        case .bytes(let patterns): return patterns.map(\.summary).joined(separator: " and ")
        case .textPrefix(let prefix, let ignoringCase):
            return "text starting with \"\(prefix)\"" + (ignoringCase ? " (ignoring case)" : "")
        case .xmlRoot(let name): return "XML with root element <\(name)>"
        case .isoBrand(let brands): return "ISO media brand " + brands.map { "'\($0)'" }.joined(separator: ", ")
        case .zip(let rule): return rule.summary
        }
    }
}

/// Bytes expected at an offset of the content, or anywhere in a window that
/// starts there.
public struct BytePattern: Hashable, Sendable {
    /// Where the bytes are expected, from the start of the content.
    public var offset: Int
    /// The expected bytes.
    public var bytes: [UInt8]
    /// Bits to compare, byte by byte (`nil`: every bit). Its length is that of ``bytes``.
    public var mask: [UInt8]?
    /// How many start positions to try from ``offset`` on: 1 for exactly at
    /// the offset, more to search a window (a PDF's `%PDF-` may follow up to
    /// 1,024 bytes of junk).
    public var window: Int

    /// Creates a pattern.
    ///
    /// - Parameters:
    ///   - bytes: The expected bytes; not empty.
    ///   - offset: Where they are expected.
    ///   - mask: Bits to compare in each byte, or `nil` for all of them.
    ///   - window: How many start positions to try from `offset` on (at least 1).
    public init(_ bytes: [UInt8], at offset: Int = 0, mask: [UInt8]? = nil, window: Int = 1) {
        self.offset = offset
        self.bytes = bytes
        self.mask = mask
        self.window = max(1, window)
    }

    /// Creates a pattern of ASCII text, such as `"%PDF-"`.
    public init(ascii text: String, at offset: Int = 0, window: Int = 1) {
        self.init(Array(text.utf8), at: offset, window: window)
    }

    /// Whether the pattern is usable: bytes present, a mask of the same
    /// length, a non-negative offset.
    var isValid: Bool {
        !bytes.isEmpty && offset >= 0 && (mask == nil || mask!.count == bytes.count)
    }

    /// The last byte offset the pattern may look at, plus one.
    var reach: Int { offset + window - 1 + bytes.count }

    /// Whether `content` shows the pattern.
    func matches(_ content: [UInt8]) -> Bool {
        let lastStart = min(offset + window - 1, content.count - bytes.count)
        guard offset <= lastStart else { return false }
        for start in offset...lastStart where matches(content, at: start) {
            return true
        }
        return false
    }

    private func matches(_ content: [UInt8], at start: Int) -> Bool {
        if let mask {
            for index in bytes.indices where content[start + index] & mask[index] != bytes[index] & mask[index] {
                return false
            }
        } else {
            for index in bytes.indices where content[start + index] != bytes[index] {
                return false
            }
        }
        return true
    }

    var summary: String {
        let printable = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 }
        let text = printable ? "\"\(String(decoding: bytes, as: UTF8.self))\"" : hexString(bytes)
        let place = window > 1 ? "within \(window) bytes of offset \(offset)" : "at offset \(offset)"
        return "\(text) \(place)" + (mask.map { " (mask \(hexString($0)))" } ?? "")
    }
}

/// What the entries of a ZIP archive must show for it to be of a type built
/// on ZIP (EPUB, OpenDocument, Office Open XML, comic book archives).
///
/// Every rule given must hold; at least one must be given.
public struct ZipSignature: Hashable, Sendable {
    /// The text of a first entry named `mimetype`, stored uncompressed (EPUB
    /// and OpenDocument files start this way).
    public var mimetype: String?
    /// Entries the archive must have: an exact name, or, when the name ends
    /// with `/`, any entry under that folder (`word/`).
    public var requiredEntries: [String]
    /// A type every file entry must conform to, by its name's extension
    /// (`public.image` for a comic book archive); folders, hidden files,
    /// `__MACOSX/` and the names in ``ignoredNames`` do not count, and at
    /// least one entry must conform.
    public var entryType: TypeIdentifier?
    /// File names (the last path component, compared without regard to case)
    /// that ``entryType`` lets through, such as `ComicInfo.xml`.
    public var ignoredNames: [String]

    /// Creates a rule.
    ///
    /// - Parameters:
    ///   - mimetype: The text of a first, stored entry named `mimetype`.
    ///   - requiredEntries: Entries the archive must have (`folder/` for any entry under a folder).
    ///   - entryType: A type every file entry must conform to, by its extension.
    ///   - ignoredNames: File names that `entryType` lets through.
    public init(
        mimetype: String? = nil, requiredEntries: [String] = [], entryType: TypeIdentifier? = nil,
        ignoredNames: [String] = []
    ) {
        self.mimetype = mimetype
        self.requiredEntries = requiredEntries
        self.entryType = entryType
        self.ignoredNames = ignoredNames
    }

    var isValid: Bool { mimetype != nil || !requiredEntries.isEmpty || entryType != nil }

    var summary: String {
        var parts: [String] = []
        if let mimetype { parts.append("a first entry 'mimetype' holding \"\(mimetype)\"") }
        if !requiredEntries.isEmpty {
            parts.append("entries " + requiredEntries.map { "'\($0)'" }.joined(separator: ", "))
        }
        if let entryType { parts.append("only \(entryType) entries") }
        return "a ZIP archive with " + parts.joined(separator: " and ")
    }
}

/// Bytes as spaced hexadecimal pairs: `25 50 44 46`.
func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789ABCDEF".utf8)
    var text: [UInt8] = []
    for (index, byte) in bytes.enumerated() {
        if index > 0 { text.append(0x20) }
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0xF)])
    }
    return String(decoding: text, as: UTF8.self)
}
