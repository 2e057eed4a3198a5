import Foundation

/// How a ``FolderList`` is sorted.
public struct ListSort: Sendable, Hashable {
    /// What the list is sorted by.
    public enum Key: Sendable, Hashable {
        /// The name, in natural order ("Issue 2" before "Issue 10"), ignoring
        /// case, accents and width, as people expect.
        case name
        /// The birth time (items whose file system keeps none sort as oldest).
        case creationDate
        /// The modification time.
        case modificationDate
        /// The size in bytes (folders count as 0).
        case size
    }

    /// What the list is sorted by.
    public var key: Key
    /// Whether the smallest, oldest or first name comes first.
    public var ascending: Bool

    /// Creates a sort order; ties are broken by name, then by id, so the order is total.
    public init(_ key: Key, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// By name, A to Z.
    public static let name = ListSort(.name)
}

/// A name's sort key for natural order: folded (case, accents, width), cut
/// into runs of digits (compared by value) and of other characters.
struct NaturalKey: Sendable, Hashable, Comparable {
    enum Part: Sendable, Hashable {
        case text([UInt32])
        /// Digits without leading zeros, and how many zeros there were.
        case number(digits: [UInt8], zeros: Int)
    }

    let parts: [Part]
    /// The raw name, to order names that fold alike.
    let raw: [UInt8]

    init(_ name: [UInt8]) {
        raw = name
        let folded = String(decoding: name, as: UTF8.self)
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var parts: [Part] = []
        var text: [UInt32] = []
        var digits: [UInt8] = []
        func flushDigits() {
            guard !digits.isEmpty else { return }
            let zeros = digits.prefix { $0 == 0 }.count
            parts.append(.number(digits: Array(digits.dropFirst(min(zeros, digits.count - 1))), zeros: zeros))
            digits.removeAll()
        }
        for scalar in folded.unicodeScalars {
            if scalar.value >= 0x30 && scalar.value <= 0x39 {
                if !text.isEmpty {
                    parts.append(.text(text))
                    text.removeAll()
                }
                digits.append(UInt8(scalar.value - 0x30))
            } else {
                flushDigits()
                text.append(scalar.value)
            }
        }
        flushDigits()
        if !text.isEmpty { parts.append(.text(text)) }
        self.parts = parts
    }

    static func < (lhs: NaturalKey, rhs: NaturalKey) -> Bool {
        for (left, right) in zip(lhs.parts, rhs.parts) {
            switch (left, right) {
            case (.number(let a, let zerosA), .number(let b, let zerosB)):
                if a.count != b.count { return a.count < b.count }
                if a != b { return a.lexicographicallyPrecedes(b) }
                if zerosA != zerosB { return zerosA < zerosB }
            case (.text(let a), .text(let b)):
                if a != b { return a.lexicographicallyPrecedes(b) }
            case (.number, .text):
                return true  // digits before letters, as in Finder
            case (.text, .number):
                return false
            }
        }
        if lhs.parts.count != rhs.parts.count { return lhs.parts.count < rhs.parts.count }
        return lhs.raw.lexicographicallyPrecedes(rhs.raw)
    }
}
