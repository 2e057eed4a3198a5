/// A UTC date and time computed without the C library (and its time-zone
/// lock): days to civil date as in Howard Hinnant's `civil_from_days`. The
/// server formats every listing's and every change record's times with it.
public struct CivilTime: Sendable {
    /// The year (proleptic Gregorian).
    public var year: Int64
    /// 1 to 12.
    public var month: Int64
    /// 1 to 31.
    public var day: Int64
    /// 0 to 23.
    public var hour: Int64
    /// 0 to 59.
    public var minute: Int64
    /// 0 to 59.
    public var second: Int64
    /// 0 to 999,999,999.
    public var nanosecond: Int64
    /// 0 for Sunday.
    public var weekday: Int64

    /// The civil time of an instant.
    /// - Parameter nanoseconds: Nanoseconds since 1970-01-01T00:00:00Z.
    public init(nanoseconds: Int64) {
        var seconds = nanoseconds / 1_000_000_000
        nanosecond = nanoseconds % 1_000_000_000
        if nanosecond < 0 {
            seconds -= 1
            nanosecond += 1_000_000_000
        }
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

    /// Writes `2026-11-22T03:04:05Z`, or with `fractionDigits` (1 to 9) of
    /// the second, `2026-11-22T03:04:05.123Z`.
    public func writeRFC3339(into bytes: inout [UInt8], fractionDigits: Int = 0) {
        writeYear(into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        CivilTime.two(month, into: &bytes)
        bytes.append(UInt8(ascii: "-"))
        CivilTime.two(day, into: &bytes)
        bytes.append(UInt8(ascii: "T"))
        writeClock(into: &bytes)
        if fractionDigits > 0 {
            bytes.append(UInt8(ascii: "."))
            var divisor: Int64 = 100_000_000
            for _ in 0..<min(fractionDigits, 9) {
                bytes.append(UInt8(ascii: "0") + UInt8(nanosecond / divisor % 10))
                divisor /= 10
            }
        }
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Writes `Sun, 22 Nov 2026 03:04:05 GMT` (RFC 9110 IMF-fixdate).
    public func writeHTTPDate(into bytes: inout [UInt8]) {
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
