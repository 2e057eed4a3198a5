/// Whether a prefix of content is text, and its first characters if so.
///
/// Text is UTF-8, UTF-16 or UTF-32 with a byte order mark, or bytes with no
/// control characters but tab, line feed, vertical tab, form feed, carriage
/// return and escape: so UTF-8 without a mark, ASCII and 8-bit encodings
/// (Latin-1, Windows-1252) are text, and a NUL byte makes content binary.
struct TextSample: Sendable {
    /// Whether the content is text.
    let isText: Bool
    /// The first characters (at most ``maximumLength`` scalars), without a
    /// byte order mark; empty when the content is not text.
    let text: String.UnicodeScalarView

    /// How many characters text signatures may look at.
    static let maximumLength = 8192

    init(_ head: [UInt8]) {
        guard !head.isEmpty else {
            isText = false
            text = "".unicodeScalars
            return
        }
        let limit = Self.maximumLength
        if head.starts(with: [0xEF, 0xBB, 0xBF]) {
            isText = true
            text = Self.utf8(head.dropFirst(3), limit: limit)
        } else if head.starts(with: [0xFF, 0xFE, 0x00, 0x00]) || head.starts(with: [0x00, 0x00, 0xFE, 0xFF]) {
            isText = true
            text = Self.utf32(head.dropFirst(4), bigEndian: head[0] == 0, limit: limit)
        } else if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) {
            isText = true
            text = Self.utf16(head.dropFirst(2), bigEndian: head[0] == 0xFE, limit: limit)
        } else if head.contains(where: Self.isBinaryControl) {
            isText = false
            text = "".unicodeScalars
        } else {
            isText = true
            text = Self.utf8(head[...], limit: limit)
        }
    }

    /// Control characters that text does not contain.
    private static func isBinaryControl(_ byte: UInt8) -> Bool {
        byte < 0x09 || (byte > 0x0D && byte < 0x20 && byte != 0x1B)
    }

    private static func utf8(_ bytes: ArraySlice<UInt8>, limit: Int) -> String.UnicodeScalarView {
        var scalars = String.UnicodeScalarView()
        var decoder = UTF8()
        var iterator = bytes.prefix(limit * 4).makeIterator()
        var valid = true
        loop: while scalars.count < limit {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error:
                valid = false
                break loop
            }
        }
        if valid { return scalars }
        // Not UTF-8: an 8-bit encoding; ASCII is all that signatures compare.
        scalars = String.UnicodeScalarView()
        for byte in bytes.prefix(limit) { scalars.append(Unicode.Scalar(byte)) }
        return scalars
    }

    private static func utf16(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, limit: Int) -> String.UnicodeScalarView {
        var units: [UInt16] = []
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex, units.count < limit * 2 {
            let first = UInt16(bytes[index])
            let second = UInt16(bytes[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        var scalars = String.UnicodeScalarView()
        var decoder = UTF16()
        var iterator = units.makeIterator()
        while scalars.count < limit, case .scalarValue(let scalar) = decoder.decode(&iterator) {
            scalars.append(scalar)
        }
        return scalars
    }

    private static func utf32(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, limit: Int) -> String.UnicodeScalarView {
        var scalars = String.UnicodeScalarView()
        var index = bytes.startIndex
        while index + 3 < bytes.endIndex, scalars.count < limit {
            let value =
                bigEndian
                ? UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
                    | UInt32(bytes[index + 3])
                : UInt32(bytes[index + 3]) << 24 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index])
            guard let scalar = Unicode.Scalar(value) else { break }
            scalars.append(scalar)
            index += 4
        }
        return scalars
    }

    /// Whether the text starts with `prefix` after white space.
    func starts(with prefix: String, ignoringCase: Bool) -> Bool {
        guard isText else { return false }
        let start = text.firstIndex { !$0.properties.isWhitespace } ?? text.endIndex
        var index = start
        for expected in prefix.unicodeScalars {
            guard index < text.endIndex else { return false }
            let actual = text[index]
            if ignoringCase ? !sameIgnoringCase(actual, expected) : actual != expected { return false }
            index = text.index(after: index)
        }
        return true
    }

    /// The name of the root element, if the text is XML: after the XML
    /// declaration, comments, processing instructions and a document type
    /// declaration; without its namespace prefix.
    var xmlRootName: String? {
        guard isText else { return nil }
        var index = text.startIndex
        func skipWhitespace() {
            while index < text.endIndex, text[index].properties.isWhitespace { index = text.index(after: index) }
        }
        func hasPrefix(_ prefix: String) -> Bool {
            var probe = index
            for expected in prefix.unicodeScalars {
                guard probe < text.endIndex, text[probe] == expected else { return false }
                probe = text.index(after: probe)
            }
            return true
        }
        /// Moves past the next `terminator`; false if the text ends first.
        func skip(past terminator: String) -> Bool {
            let pattern = Array(terminator.unicodeScalars)
            while index < text.endIndex {
                if hasPrefix(terminator) {
                    index = text.index(index, offsetBy: pattern.count)
                    return true
                }
                index = text.index(after: index)
            }
            return false
        }
        while true {
            skipWhitespace()
            if hasPrefix("<?") {
                guard skip(past: "?>") else { return nil }
            } else if hasPrefix("<!--") {
                guard skip(past: "-->") else { return nil }
            } else if hasPrefix("<!DOCTYPE") || hasPrefix("<!doctype") {
                // Skip to the closing '>', past an internal subset in brackets.
                var depth = 0
                while index < text.endIndex {
                    let scalar = text[index]
                    index = text.index(after: index)
                    if scalar == "[" {
                        depth += 1
                    } else if scalar == "]" {
                        depth -= 1
                    } else if scalar == ">" && depth <= 0 {
                        break
                    }
                }
            } else if hasPrefix("<") {
                index = text.index(after: index)
                var name = String.UnicodeScalarView()
                while index < text.endIndex {
                    let scalar = text[index]
                    if scalar.properties.isWhitespace || scalar == ">" || scalar == "/" { break }
                    name.append(scalar)
                    index = text.index(after: index)
                }
                guard !name.isEmpty else { return nil }
                let full = String(name)
                return full.split(separator: ":").last.map(String.init) ?? full
            } else {
                return nil
            }
        }
    }
}

/// Whether two scalars are the same letter but for case (ASCII and Latin letters).
private func sameIgnoringCase(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Bool {
    a == b || a.properties.lowercaseMapping == b.properties.lowercaseMapping
}
