/// A value of a configuration file, whatever its format, with where it is
/// in the file: what the JSON, YAML and TOML readers make, and what the
/// configuration is decoded from.
struct ConfigNode {
    enum Value {
        case string(String)
        case integer(Int)
        case boolean(Bool)
        case null
        case list([ConfigNode])
        case table([(key: String, node: ConfigNode)])
        /// A value of a kind the configuration never uses (a float, a date).
        case other(String)
    }

    var value: Value
    /// Where the value is, if known.
    var position: SourcePosition?
    /// For a YAML scalar written without quotes, its text: `7z` or `001`
    /// read as a string where a string is expected.
    var plainText: String?

    init(_ value: Value, at position: SourcePosition?, plainText: String? = nil) {
        self.value = value
        self.position = position
        self.plainText = plainText
    }

    /// What the value is, for messages: "a string", "a list".
    var kindDescription: String {
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
struct ConfigProblem: Error {
    var message: String
    var position: SourcePosition?
}

/// The line and column of a UTF-8 offset in `bytes`, counting columns in
/// Unicode scalars.
func sourcePosition(ofOffset offset: Int, in bytes: [UInt8]) -> SourcePosition {
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
