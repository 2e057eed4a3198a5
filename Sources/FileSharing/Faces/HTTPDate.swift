import FileWatching
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP dates (RFC 9110, IMF-fixdate), formatted and parsed.
enum HTTPDate {
    /// A time as an HTTP date.
    static func format(nanoseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        CivilTime(nanoseconds: nanoseconds).writeHTTPDate(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); `nil` when it
    /// is not one, or when it lies outside what nanoseconds since the epoch
    /// can hold (1678 to 2261): a client's date never overflows.
    static func parse(_ text: String) -> Int64? {
        let fields = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard fields.count == 6, fields[5] == "GMT", let day = Int32(fields[1]), (1...31).contains(day),
            let month = months.firstIndex(of: String(fields[2])), let year = Int32(fields[3]),
            (1678...2261).contains(year)
        else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = clock[0]
        parts.tm_min = clock[1]
        parts.tm_sec = clock[2]
        let (nanoseconds, overflow) = Int64(timegm(&parts)).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? nil : nanoseconds
    }
}

extension HTTPDate {
    /// The current time as an HTTP date, formatted once a second rather than
    /// once an answer: the `Date` field of every small read (the router's
    /// answers get theirs from Hummingbird, which keeps one the same way).
    final class Clock: Sendable {
        private let cached = Mutex<(second: Int64, text: String)>((-1, ""))

        func now() -> String {
            let nanoseconds = wallNanoseconds()
            let second = nanoseconds / 1_000_000_000
            return cached.withLock { cached in
                if cached.second != second { cached = (second, HTTPDate.format(nanoseconds: nanoseconds)) }
                return cached.text
            }
        }
    }
}
