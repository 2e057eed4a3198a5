extension ConfigNode {
    /// Parses a JSON document (RFC 8259), keeping the position of every value.
    ///
    /// - Throws: ``ConfigProblem`` with the line and column of the first error.
    package static func parseJSON(_ text: String) throws(ConfigProblem) -> ConfigNode {
        var parser = JSONParser(bytes: Array(text.utf8))
        return try parser.document()
    }
}

/// A strict JSON parser that knows where it is.
private struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    var line = 1
    var lineStart = 0
    var depth = 0

    static let maximumDepth = 64

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
    }

    var position: SourcePosition {
        var column = 1
        var cursor = lineStart
        while cursor < index {
            if bytes[cursor] & 0xC0 != 0x80 { column += 1 }
            cursor += 1
        }
        return SourcePosition(line: line, column: column)
    }

    func problem(_ message: String, at position: SourcePosition? = nil) -> ConfigProblem {
        ConfigProblem(message: message, position: position ?? self.position)
    }

    /// What is at the cursor, for messages: "'}'", "the end of the file".
    var found: String {
        guard index < bytes.count else { return "the end of the file" }
        var end = index + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        let character = String(decoding: bytes[index..<end], as: UTF8.self)
        switch character {
        case "\n": return "a line break"
        case "\t": return "a tab"
        default: return "'\(character)'"
        }
    }

    mutating func skipWhitespace() throws(ConfigProblem) {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            case 0x2F where index + 1 < bytes.count && (bytes[index + 1] == 0x2F || bytes[index + 1] == 0x2A):
                throw problem("JSON does not allow comments")
            default: return
            }
        }
    }

    mutating func document() throws(ConfigProblem) -> ConfigNode {
        try skipWhitespace()
        guard index < bytes.count else { throw problem("the file is empty; expected a JSON object") }
        let root = try value()
        try skipWhitespace()
        guard index == bytes.count else { throw problem("unexpected \(found) after the end of the JSON document") }
        return root
    }

    mutating func value() throws(ConfigProblem) -> ConfigNode {
        let start = position
        guard index < bytes.count else { throw problem("expected a value, found the end of the file") }
        switch bytes[index] {
        case 0x7B: return try object()
        case 0x5B: return try array()
        case 0x22: return ConfigNode(.string(try string()), at: start)
        case 0x74: return try literal("true", .boolean(true), start)
        case 0x66: return try literal("false", .boolean(false), start)
        case 0x6E: return try literal("null", .null, start)
        case 0x2D, 0x30...0x39: return try number(start)
        case 0x27: throw problem("JSON strings are written in double quotes, not single quotes")
        default: throw problem("expected a value, found \(found)")
        }
    }

    mutating func literal(_ word: String, _ value: ConfigNode.Value, _ start: SourcePosition) throws(ConfigProblem)
        -> ConfigNode
    {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<(index + expected.count)]) == expected else {
            throw problem("expected a value, found \(found)")
        }
        index += expected.count
        return ConfigNode(value, at: start)
    }

    mutating func number(_ start: SourcePosition) throws(ConfigProblem) -> ConfigNode {
        let begin = index
        if bytes[index] == 0x2D { index += 1 }
        func digits() -> Int {
            let first = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - first
        }
        let integerDigits = digits()
        guard integerDigits > 0 else { throw problem("expected a digit after '-'") }
        if integerDigits > 1 && bytes[begin + (bytes[begin] == 0x2D ? 1 : 0)] == 0x30 {
            throw problem("JSON numbers do not start with 0", at: start)
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            isInteger = false
            guard digits() > 0 else { throw problem("expected a digit after the decimal point") }
        }
        if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
            index += 1
            isInteger = false
            if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
            guard digits() > 0 else { throw problem("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[begin..<index], as: UTF8.self)
        if isInteger, let integer = Int(text) { return ConfigNode(.integer(integer), at: start) }
        return ConfigNode(.other(isInteger ? "a number too large" : "a decimal number"), at: start)
    }

    mutating func string() throws(ConfigProblem) -> String {
        let start = position
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flush(_ end: Int) {
            scalars.append(contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw problem("this string has no closing quote", at: start) }
            let byte = bytes[index]
            if byte == 0x22 {
                flush(index)
                index += 1
                return String(scalars)
            }
            if byte == 0x0A { throw problem("this string has no closing quote on its line", at: start) }
            if byte < 0x20 { throw problem("a control character must be escaped in a JSON string") }
            if byte == 0x5C {
                flush(index)
                index += 1
                guard index < bytes.count else { throw problem("this string has no closing quote", at: start) }
                switch bytes[index] {
                case 0x22: scalars.append("\"")
                case 0x5C: scalars.append("\\")
                case 0x2F: scalars.append("/")
                case 0x62: scalars.append("\u{8}")
                case 0x66: scalars.append("\u{C}")
                case 0x6E: scalars.append("\n")
                case 0x72: scalars.append("\r")
                case 0x74: scalars.append("\t")
                case 0x75:
                    let unit = try hexUnit()
                    if (0xD800..<0xDC00).contains(unit), bytes.count - index >= 7, bytes[index + 1] == 0x5C,
                        bytes[index + 2] == 0x75
                    {
                        index += 2
                        let low = try hexUnit()
                        guard (0xDC00..<0xE000).contains(low) else { throw problem("invalid UTF-16 surrogate pair") }
                        let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                        scalars.append(Unicode.Scalar(value)!)
                    } else if let scalar = Unicode.Scalar(UInt32(unit)) {
                        scalars.append(scalar)
                    } else {
                        throw problem("invalid \\u escape (a lone UTF-16 surrogate)")
                    }
                default: throw problem("invalid escape \\\(found.dropFirst().dropLast()) in a JSON string")
                }
                index += 1
                runStart = index
                continue
            }
            index += 1
        }
    }

    /// The four hexadecimal digits after `\u`; leaves the cursor on the last one.
    mutating func hexUnit() throws(ConfigProblem) -> UInt16 {
        guard bytes.count - index > 4 else { throw problem("expected four hexadecimal digits after \\u") }
        var unit: UInt16 = 0
        for offset in 1...4 {
            let byte = bytes[index + offset]
            let digit: UInt16
            switch byte {
            case 0x30...0x39: digit = UInt16(byte - 0x30)
            case 0x41...0x46: digit = UInt16(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt16(byte - 0x61 + 10)
            default: throw problem("expected four hexadecimal digits after \\u")
            }
            unit = unit << 4 | digit
        }
        index += 4
        return unit
    }

    mutating func enter() throws(ConfigProblem) {
        depth += 1
        if depth > Self.maximumDepth { throw problem("the JSON is nested too deeply") }
    }

    mutating func object() throws(ConfigProblem) -> ConfigNode {
        let start = position
        try enter()
        index += 1
        var entries: [(key: String, node: ConfigNode)] = []
        var seen: [String: SourcePosition] = [:]
        var comma: SourcePosition?
        try skipWhitespace()
        if index < bytes.count, bytes[index] == 0x7D {
            index += 1
            depth -= 1
            return ConfigNode(.table(entries), at: start)
        }
        while true {
            try skipWhitespace()
            guard index < bytes.count, bytes[index] == 0x22 else {
                if index < bytes.count, bytes[index] == 0x7D, !entries.isEmpty {
                    throw problem("JSON does not allow a comma after the last member of an object", at: comma)
                }
                throw problem("expected a member name in double quotes, found \(found)")
            }
            let keyPosition = position
            let key = try string()
            if let first = seen[key] {
                throw problem(
                    "the key \"\(key)\" appears twice in this object (first at line \(first.line))", at: keyPosition)
            }
            seen[key] = keyPosition
            try skipWhitespace()
            guard index < bytes.count, bytes[index] == 0x3A else {
                throw problem("expected ':' after the member name \"\(key)\", found \(found)")
            }
            index += 1
            try skipWhitespace()
            var member = try value()
            if member.position == nil { member.position = keyPosition }
            entries.append((key, member))
            try skipWhitespace()
            guard index < bytes.count else { throw problem("this object has no closing '}'", at: start) }
            if bytes[index] == 0x2C {
                comma = position
                index += 1
                continue
            }
            if bytes[index] == 0x7D {
                index += 1
                depth -= 1
                return ConfigNode(.table(entries), at: start)
            }
            throw problem("expected ',' or '}' after a member of an object, found \(found)")
        }
    }

    mutating func array() throws(ConfigProblem) -> ConfigNode {
        let start = position
        try enter()
        index += 1
        var elements: [ConfigNode] = []
        var comma: SourcePosition?
        try skipWhitespace()
        if index < bytes.count, bytes[index] == 0x5D {
            index += 1
            depth -= 1
            return ConfigNode(.list(elements), at: start)
        }
        while true {
            try skipWhitespace()
            if index < bytes.count, bytes[index] == 0x5D, !elements.isEmpty {
                throw problem("JSON does not allow a comma after the last element of an array", at: comma)
            }
            elements.append(try value())
            try skipWhitespace()
            guard index < bytes.count else { throw problem("this array has no closing ']'", at: start) }
            if bytes[index] == 0x2C {
                comma = position
                index += 1
                continue
            }
            if bytes[index] == 0x5D {
                index += 1
                depth -= 1
                return ConfigNode(.list(elements), at: start)
            }
            throw problem("expected ',' or ']' after an element of an array, found \(found)")
        }
    }
}
