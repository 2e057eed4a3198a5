/// Reading back the JSON form of a change (``Change/jsonLine``), as a change
/// log or a client hands it on.
extension Change {
    /// The change one `events.md` object describes; `nil` when the text is
    /// not such an object (unknown `type`, a field missing or of the wrong kind).
    /// Paths come from `path_b64`/`from_b64`/`to_b64` when present, so names
    /// that are not UTF-8 read back byte for byte.
    public init?(jsonLine text: String) {
        guard let object = FlatJSONObject(text) else { return nil }
        func path(_ key: String) -> ItemPath? {
            if case .string(let encoded)? = object[key + "_b64"], let bytes = Base64.decode(encoded) {
                return ItemPath(bytes: bytes)
            }
            guard case .string(let text)? = object[key] else { return nil }
            return ItemPath(text)
        }
        func string(_ key: String) -> String? {
            guard case .string(let text)? = object[key] else { return nil }
            return text
        }
        func integer(_ key: String) -> Int64? {
            guard case .integer(let value)? = object[key] else { return nil }
            return value
        }
        let kind: ItemKind? =
            switch string("kind") {
            case "file": .file
            case "directory": .directory
            case "symlink": .symlink
            case "other": .other
            default: nil
            }
        let id = string("id").flatMap(ItemID.init)
        func item() -> ChangedItem? {
            guard let path = path("path"), let id, let kind else { return nil }
            var writing = false
            if case .bool(let value)? = object["writing"] { writing = value }
            return ChangedItem(path: path, id: id, kind: kind, size: integer("size") ?? 0, isWriting: writing)
        }
        switch string("type") {
        case "scan-started":
            guard let root = string("root") else { return nil }
            self = .scanStarted(root: root)
        case "scan-completed":
            guard let root = string("root"), let items = integer("items"), let elapsed = integer("elapsed_ms") else {
                return nil
            }
            self = .scanCompleted(root: root, items: Int(items), elapsedMilliseconds: Int(elapsed))
        case "added":
            guard let item = item() else { return nil }
            self = .added(item)
        case "modified":
            guard let item = item() else { return nil }
            self = .modified(item)
        case "duplicated":
            guard let item = item(), let source = path("source") else { return nil }
            self = .duplicated(item, source: source)
        case "finished":
            guard let path = path("path"), let id, let size = integer("size") else { return nil }
            self = .finished(path: path, id: id, size: size)
        case "removed":
            guard let path = path("path"), let id, let kind else { return nil }
            self = .removed(path: path, id: id, kind: kind)
        case "renamed":
            guard let from = path("from"), let to = path("to"), let id, let kind else { return nil }
            self = .renamed(from: from, to: to, id: id, kind: kind)
        case "moved":
            guard let from = path("from"), let to = path("to"), let id, let kind else { return nil }
            self = .moved(from: from, to: to, id: id, kind: kind)
        case "rescanned":
            guard let path = path("path"), let reason = string("reason") else { return nil }
            self = .rescanned(path: path, reason: reason)
        case "degraded":
            guard let path = path("path"), let reason = string("reason"), let hint = string("hint") else { return nil }
            self = .degraded(path: path, reason: reason, hint: hint)
        case "error":
            guard let message = string("message") else { return nil }
            self = .error(message: message, path: path("path"))
        case "root-removed":
            guard let root = string("root") else { return nil }
            self = .rootRemoved(root: root)
        default:
            return nil
        }
    }
}

/// A JSON object whose values are strings, integers, booleans or null: the
/// shape of every event object. Anything else (nesting, fractions, bad
/// escapes, trailing text) is refused rather than guessed at.
struct FlatJSONObject {
    enum Value: Equatable {
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    private var fields: [String: Value] = [:]

    subscript(key: String) -> Value? { fields[key] }

    init?(_ text: String) {
        let bytes = Array(text.utf8)
        var index = 0
        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[index..<(index + 4)] {
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x61...0x66: digit = byte - 0x61 + 10
                case 0x41...0x46: digit = byte - 0x41 + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }
        func string() -> String? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard var scalar = hex4() else { return nil }
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                                bytes[index + 1] == UInt8(ascii: "u")
                            else { return nil }
                            index += 2
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { return nil }
                        out.append(contentsOf: String(Character(unicode)).utf8)
                    default: return nil
                    }
                case 0..<0x20: return nil
                default: out.append(byte)
                }
            }
            return nil
        }
        func value() -> Value? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                for (word, result) in [("true", Value.bool(true)), ("false", .bool(false)), ("null", .null)]
                where bytes[index...].starts(with: word.utf8) {
                    index += word.utf8.count
                    return result
                }
                return nil
            default:
                let start = index
                if bytes[index] == UInt8(ascii: "-") { index += 1 }
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
                return Int64(String(decoding: bytes[start..<index], as: UTF8.self)).map(Value.integer)
            }
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        skipSpace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                guard let key = string(), expect(UInt8(ascii: ":")), let value = value() else { return nil }
                fields[key] = value
                if expect(UInt8(ascii: ",")) { continue }
                guard expect(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        skipSpace()
        guard index == bytes.count else { return nil }
    }
}

extension Base64 {
    /// Decodes standard base64 (padding optional); `nil` for any other character.
    public static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - 71)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte + 4)
            case UInt8(ascii: "+"): values.append(62)
            case UInt8(ascii: "/"): values.append(63)
            case UInt8(ascii: "="): continue
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 1 < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            let a = UInt32(chunk[chunk.startIndex]), b = UInt32(chunk[chunk.startIndex + 1])
            let c = chunk.count > 2 ? UInt32(chunk[chunk.startIndex + 2]) : 0
            let d = chunk.count > 3 ? UInt32(chunk[chunk.startIndex + 3]) : 0
            let n = a << 18 | b << 12 | c << 6 | d
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            index += 4
        }
        return out
    }
}
