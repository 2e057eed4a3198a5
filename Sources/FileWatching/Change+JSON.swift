/// The JSON form of a change: one object, as one line of `watch --json`.
extension Change {
    /// The change as one JSON object (no trailing newline), with the fields of
    /// `events.md` in a stable order.
    public var jsonLine: String {
        var json = JSONObjectWriter()
        json.field("type", typeName)
        switch self {
        case .scanStarted(let root):
            json.field("root", root)
        case .scanCompleted(let root, let items, let elapsed):
            json.field("root", root)
            json.field("items", Int64(items))
            json.field("elapsed_ms", Int64(elapsed))
        case .added(let item), .modified(let item):
            json.item(item)
        case .duplicated(let item, let source):
            json.item(item)
            json.path("source", source)
        case .finished(let path, let id, let size):
            json.path("path", path)
            json.field("id", id.description)
            json.field("size", size)
        case .removed(let path, let id, let kind):
            json.path("path", path)
            json.field("id", id.description)
            json.field("kind", kind.description)
        case .renamed(let from, let to, let id, let kind), .moved(let from, let to, let id, let kind):
            json.path("from", from)
            json.path("to", to)
            json.field("id", id.description)
            json.field("kind", kind.description)
        case .rescanned(let path, let reason):
            json.path("path", path)
            json.field("reason", reason)
        case .degraded(let path, let reason, let hint):
            json.path("path", path)
            json.field("reason", reason)
            json.field("hint", hint)
        case .error(let message, let path):
            json.field("message", message)
            if let path { json.path("path", path) }
        case .rootRemoved(let root):
            json.field("root", root)
        }
        return json.finish()
    }
}

/// JSON text helpers shared by the faces that speak JSON.
public enum JSONText {
    /// `string` as a JSON string literal, quotes included.
    public static func quoted(_ string: String) -> String {
        var text = ""
        JSONObjectWriter.appendQuoted(string, to: &text)
        return text
    }
}

/// Writes one flat JSON object quickly, without Foundation.
struct JSONObjectWriter {
    private var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        JSONObjectWriter.appendQuoted(name, to: &text)
        text += ":"
    }

    mutating func field(_ name: String, _ value: String) {
        key(name)
        JSONObjectWriter.appendQuoted(value, to: &text)
    }

    mutating func field(_ name: String, _ value: Int64) {
        key(name)
        text += String(value)
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        text += value ? "true" : "false"
    }

    /// A path field; a path that is not UTF-8 also gets `<name>_b64` with its bytes.
    mutating func path(_ name: String, _ path: ItemPath) {
        field(name, path.description)
        if !path.isValidUTF8 { field(name + "_b64", Base64.encode(path.bytes)) }
    }

    mutating func item(_ item: ChangedItem) {
        path("path", item.path)
        field("id", item.id.description)
        field("kind", item.kind.description)
        if item.kind == .file {
            field("size", item.size)
            field("writing", item.isWriting)
        }
    }

    mutating func finish() -> String {
        text += "}"
        return text
    }

    static func appendQuoted(_ string: String, to text: inout String) {
        text += "\""
        var needsEscaping = false
        for byte in string.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            needsEscaping = true
            break
        }
        if !needsEscaping {
            text += string
        } else {
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}

/// Standard base64 with padding (RFC 4648 section 4).
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` in standard base64, padded.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [
                alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)],
                alphabet[Int(n & 63)],
            ]
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var n = UInt32(bytes[index]) << 16
            if rest == 2 { n |= UInt32(bytes[index + 1]) << 8 }
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
