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
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
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

    /// An RFC 3339 UTC time (seconds), quoted.
    mutating func time(nanoseconds: Int64) {
        bytes.append(UInt8(ascii: "\""))
        CivilTime(nanoseconds: nanoseconds).writeRFC3339(into: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A UTC date and time computed without the C library (and its time-zone
/// lock): days to civil date as in Howard Hinnant's `civil_from_days`.
struct CivilTime {
    var year: Int64
    var month: Int64
    var day: Int64
    var hour: Int64
    var minute: Int64
    var second: Int64
    /// 0 for Sunday.
    var weekday: Int64

    init(nanoseconds: Int64) {
        var seconds = nanoseconds / 1_000_000_000
        if nanoseconds < 0 && nanoseconds % 1_000_000_000 != 0 { seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = secondOfDay / 3600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
    }

    private static func two(_ value: Int64, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    private func writeYear(into bytes: inout [UInt8]) {
        if (0...9999).contains(year) {
            CivilTime.two(year / 100, into: &bytes)
            CivilTime.two(year % 100, into: &bytes)
        } else {
            bytes.append(contentsOf: String(year).utf8)
        }
    }

    private func writeClock(into bytes: inout [UInt8]) {
        CivilTime.two(hour, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        CivilTime.two(minute, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        CivilTime.two(second, into: &bytes)
    }

    /// `2026-11-22T03:04:05Z`.
    func writeRFC3339(into bytes: inout [UInt8]) {
        writeYear(into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        CivilTime.two(month, into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        CivilTime.two(day, into: &bytes)
        bytes.append(UInt8(ascii: "T"))
        writeClock(into: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `Sun, 22 Nov 2026 03:04:05 GMT` (RFC 9110 IMF-fixdate).
    func writeHTTPDate(into bytes: inout [UInt8]) {
        let days: StaticString = "SunMonTueWedThuFriSat"
        let months: StaticString = "JanFebMarAprMayJunJulAugSepOctNovDec"
        days.withUTF8Buffer { bytes.append(contentsOf: $0[Int(weekday) * 3..<Int(weekday) * 3 + 3]) }
        bytes.append(contentsOf: [UInt8(ascii: ","), UInt8(ascii: " ")])
        CivilTime.two(day, into: &bytes)
        bytes.append(UInt8(ascii: " "))
        months.withUTF8Buffer { bytes.append(contentsOf: $0[Int(month - 1) * 3..<Int(month - 1) * 3 + 3]) }
        bytes.append(UInt8(ascii: " "))
        writeYear(into: &bytes)
        bytes.append(UInt8(ascii: " "))
        writeClock(into: &bytes)
        bytes.append(contentsOf: " GMT".utf8)
    }
}
