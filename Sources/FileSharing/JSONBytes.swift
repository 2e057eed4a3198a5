/// JSON written straight into bytes: the listing of a large folder is the
/// server's hottest path, and building it from many small strings spent most
/// of its time allocating and freeing them.
struct JSONBytes {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func integer(_ value: Int64) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            integer(value == .min ? Int64.max : -value)  // .min cannot occur for sizes and counts
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// A quoted, escaped string.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
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

    /// An RFC 3339 UTC time (seconds), quoted, computed without the C
    /// library's time-zone lock (days to civil date, as in Howard Hinnant's
    /// `civil_from_days`).
    mutating func time(nanoseconds: Int64) {
        var seconds = nanoseconds / 1_000_000_000
        if nanoseconds < 0 && nanoseconds % 1_000_000_000 != 0 { seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) {
            bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
            bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
        }
        bytes.append(UInt8(ascii: "\""))
        if (0...9999).contains(year) {
            two(year / 100)
            two(year % 100)
        } else {
            integer(year)
        }
        bytes.append(UInt8(ascii: "-"))
        two(month)
        bytes.append(UInt8(ascii: "-"))
        two(day)
        bytes.append(UInt8(ascii: "T"))
        two(secondOfDay / 3600)
        bytes.append(UInt8(ascii: ":"))
        two(secondOfDay / 60 % 60)
        bytes.append(UInt8(ascii: ":"))
        two(secondOfDay % 60)
        raw("Z\"")
    }
}
