#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An MS-DOS date and time, as ZIP headers store them: local time, two-second
/// resolution, years 1980 to 2107.
struct DOSDateTime: Hashable, Sendable {
    /// Hours (5 bits), minutes (6 bits), seconds / 2 (5 bits).
    var time: UInt16
    /// Years since 1980 (7 bits), month (4 bits), day (5 bits).
    var date: UInt16

    /// 1980-01-01 00:00:00, the earliest time the format holds.
    static let earliest = DOSDateTime(time: 0, date: 1 << 5 | 1)
    /// 2107-12-31 23:59:58, the latest time the format holds.
    static let latest = DOSDateTime(time: 23 << 11 | 59 << 5 | 29, date: 127 << 9 | 12 << 5 | 31)

    init(time: UInt16, date: UInt16) {
        self.time = time
        self.date = date
    }

    /// The local time of this machine (its `TZ`) at `secondsSince1970`,
    /// rounded down to an even second, and clamped to the years the format holds.
    init(secondsSince1970 seconds: Int64) {
        var parts = tm()
        guard var clock = time_t(exactly: seconds), localtime_r(&clock, &parts) != nil else {
            self = seconds < 0 ? .earliest : .latest
            return
        }
        self.init(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
            hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// The given calendar date and time, clamped to the years the format holds.
    init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        if year < 1980 {
            self = .earliest
        } else if year > 2107 {
            self = .latest
        } else {
            // A leap second (60) becomes 58.
            time = UInt16(hour << 11 | minute << 5 | min(second, 59) / 2)
            date = UInt16((year - 1980) << 9 | month << 5 | day)
        }
    }
}
