/// An entity tag as clients send it back (RFC 9110 section 8.8.3): an
/// opaque quoted string, weak when it starts with `W/`.
struct EntityTag: Hashable, Sendable, CustomStringConvertible {
    /// Whether the tag is weak (`W/"..."`): it may match a representation
    /// that is equivalent but not the same, so it never passes `If-Match`.
    var isWeak: Bool
    /// The quoted string, quotes included.
    var opaque: String

    /// A tag as the server makes them (`FileStatus.entityTag`).
    init(strong opaque: String) {
        self.isWeak = false
        self.opaque = opaque
    }

    init(isWeak: Bool, opaque: String) {
        self.isWeak = isWeak
        self.opaque = opaque
    }

    /// The tag as it is written in a header.
    var description: String { isWeak ? "W/" + opaque : opaque }

    /// Strong comparison: both strong and the same string (what `If-Match` and `If-Range` use).
    func matchesStrongly(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaque == other.opaque
    }

    /// Weak comparison: the same string, weak or not (what `If-None-Match` uses).
    func matchesWeakly(_ other: EntityTag) -> Bool { opaque == other.opaque }

    /// What an `If-Match` or `If-None-Match` header asks for.
    enum List: Hashable, Sendable, CustomStringConvertible {
        /// `*`: any current representation.
        case any
        /// These tags (none when the header was malformed: then nothing matches).
        case tags([EntityTag])

        /// Parses `*` or a comma-separated list of tags. A list with
        /// anything else in it is taken as one that matches nothing, so a
        /// garbled `If-Match` fails rather than passes.
        init(parsing header: String) {
            self = header.trimmingCharacters() == "*" ? .any : .tags(EntityTag.parseList(header) ?? [])
        }

        /// The list as it is written in a header.
        var description: String {
            switch self {
            case .any: "*"
            case .tags(let tags): tags.map(\.description).joined(separator: ", ")
            }
        }
    }

    /// The tags of a `#entity-tag` list, or `nil` when it is not one.
    static func parseList(_ header: String) -> [EntityTag]? {
        var bytes = Array(header.utf8)[...]
        var tags: [EntityTag] = []
        while true {
            // Empty elements and the whitespace around them are allowed (RFC 9110 section 5.6.1).
            while let first = bytes.first, first == 0x20 || first == 0x09 || first == 0x2C { bytes = bytes.dropFirst() }
            guard !bytes.isEmpty else { return tags }
            var isWeak = false
            if bytes.starts(with: [0x57, 0x2F]) {  // W/
                isWeak = true
                bytes = bytes.dropFirst(2)
            }
            guard bytes.first == 0x22 else { return nil }
            // etagc: any visible byte but the quote, and obs-text.
            guard let close = bytes.dropFirst().firstIndex(where: { $0 == 0x22 || $0 < 0x21 || $0 == 0x7F }),
                bytes[close] == 0x22
            else { return nil }
            tags.append(EntityTag(isWeak: isWeak, opaque: String(decoding: bytes[...close], as: UTF8.self)))
            bytes = bytes[(close + 1)...]
            while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
            guard bytes.isEmpty || bytes.first == 0x2C else { return nil }
        }
    }
}
