/// A value of a configuration file, whatever its format, with where it is
/// in the file: what the JSON, YAML and TOML readers make, and what the
/// document-type configuration and the users file are decoded from.
package struct ConfigNode: Sendable {
    /// What the value is.
    package enum Value: Sendable {
        case string(String)
        case integer(Int)
        case boolean(Bool)
        case null
        case list([ConfigNode])
        case table([(key: String, node: ConfigNode)])
        /// A value of a kind the configuration never uses (a float, a date).
        case other(String)
    }

    /// The value.
    package var value: Value
    /// Where the value is, if known.
    package var position: SourcePosition?
    /// For a YAML scalar written without quotes, its text: `7z` or `001`
    /// read as a string where a string is expected.
    package var plainText: String?

    /// Creates a value found at `position`.
    package init(_ value: Value, at position: SourcePosition?, plainText: String? = nil) {
        self.value = value
        self.position = position
        self.plainText = plainText
    }

    /// What the value is, for messages: "a string", "a list".
    package var kindDescription: String {
        switch value {
        case .string: return "a string"
        case .integer: return "an integer"
        case .boolean: return "a boolean"
        case .null: return "null"
        case .list: return "a list"
        case .table: return "a table"
        case .other(let kind): return kind
        }
    }
}

/// A problem found while reading a configuration file, before the path is known.
package struct ConfigProblem: Error {
    /// What is wrong, in words.
    package var message: String
    /// Where, if known.
    package var position: SourcePosition?

    /// Creates a problem.
    package init(message: String, position: SourcePosition?) {
        self.message = message
        self.position = position
    }
}

/// The line and column of a UTF-8 offset in `bytes`, counting columns in
/// Unicode scalars.
package func sourcePosition(ofOffset offset: Int, in bytes: [UInt8]) -> SourcePosition {
    var line = 1
    var column = 1
    for byte in bytes.prefix(offset) {
        if byte == 0x0A {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }
    return SourcePosition(line: line, column: column)
}
