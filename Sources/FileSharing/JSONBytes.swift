import FileWatching

/// JSON written straight into bytes: the listing of a large folder is the
/// server's hottest path, and building it from many small strings spent most
/// of its time allocating and freeing them.
struct JSONBytes: Sendable {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends JSON text made elsewhere (an origin's object).
    mutating func rawText(_ text: String) { bytes.append(contentsOf: text.utf8) }

    mutating func integer(_ value: Int64) { bytes.appendDecimal(value) }

    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// A quoted, escaped string.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            // Most names need no escape: appended whole, not byte by byte.
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case UInt8(ascii: "\n"): raw("\\n")
                case UInt8(ascii: "\r"): raw("\\r")
                case UInt8(ascii: "\t"): raw("\\t")
                case 0..<0x20:
                    raw("\\u00")
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Text given as its UTF-8 bytes (a path's, a name's), quoted and
    /// escaped. Printable ASCII with nothing to escape, what nearly every
    /// name is, is appended as it is; anything else is read as text first,
    /// so bytes that are not UTF-8 come out as U+FFFD, as `string(_:)`
    /// writes them.
    mutating func string(utf8 text: some Collection<UInt8>) {
        guard text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else {
            string(String(decoding: text, as: UTF8.self))
            return
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// An item's id, quoted: its 16 hexadecimal digits, as `ItemID.description` writes them.
    mutating func id(_ id: ItemID) {
        bytes.append(UInt8(ascii: "\""))
        bytes.appendHex(id.rawValue, minimumDigits: 16)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A file's entity tag (`FileStatus.entityTag`, quotes and all) as a JSON string.
    mutating func entityTag(inode: UInt64, size: Int64, modified: Int64) {
        raw("\"\\\"")
        FileStatus.writeEntityTagBody(inode: inode, size: size, modified: modified, into: &bytes)
        raw("\\\"\"")
    }

    /// An RFC 3339 UTC time, quoted: in seconds, or with `fractionDigits`
    /// of the second (cut, not rounded: a time before 1970 too).
    mutating func time(nanoseconds: Int64, fractionDigits: Int = 0) {
        bytes.append(UInt8(ascii: "\""))
        CivilTime(nanoseconds: nanoseconds).writeRFC3339(into: &bytes, fractionDigits: fractionDigits)
        bytes.append(UInt8(ascii: "\""))
    }
}
