import FileWatching
public import Foundation

/// One access, as the audit keeps it: who (a user, `link ID`, or `-`
/// without a users file), from where, what, when, and how it ended. It
/// never holds a password or a link's token: the faces give only names,
/// paths and link ids.
public struct AuditEvent: Sendable, Codable, Equatable {
    /// When, RFC 3339 in UTC with milliseconds.
    public var time: String
    /// What: `signin`, `download`, `upload`, `delete`, `move`, `mkdir`,
    /// `lock`, `unlock`, `link-create`, `link-revoke`, `link-open`, …
    public var action: String
    /// Who: the user name, `link ID`, or `-`.
    public var who: String
    /// The client's address.
    public var address: String
    /// The shared path it was about, if any.
    public var path: String?
    /// `ok`, or why not (`failed`, `throttled`, `denied`, `410 expired`, an HTTP status…).
    public var outcome: String
    /// More about it (a move's destination, a link's id and access).
    public var detail: String?

    /// Creates an event at `time` (now by default).
    public init(
        action: String, who: String, address: String, path: String?, outcome: String, detail: String? = nil,
        time: Date = Date()
    ) {
        self.time = AuditEvent.format(time)
        self.action = action
        self.who = who
        self.address = address
        self.path = path
        self.outcome = outcome
        self.detail = detail
    }

    /// The event's JSON line (no newline).
    public var jsonLine: String {
        var json = JSONBytes(capacity: 160)
        writeJSONLine(into: &json)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Appends the event's JSON line (no newline) to `json`: the audit's
    /// writer puts every waiting event into one buffer this way (a string
    /// per part, then per line, then their bytes, was 3 % of a small read's
    /// samples in the profile).
    func writeJSONLine(into json: inout JSONBytes) {
        json.raw("{\"time\":")
        json.string(time)
        Self.writeJSONFields(
            into: &json, action: action, who: who, address: address, path: path, outcome: outcome, detail: detail)
    }

    /// Appends the JSON line (no newline) of an event at `nanoseconds`
    /// since 1970 (UTC) made of these parts, as ``writeJSONLine(into:)``
    /// writes the event: its time as ``format(_:)`` has it. Every
    /// download is recorded this way, the small reads' among them: without
    /// the event's time string, its `Date` and the copies of its parts
    /// (about 2 % of a small GET's user time in the profile, and one
    /// allocation).
    static func writeJSONLine(
        into json: inout JSONBytes, nanoseconds: Int64, action: String, who: String, address: String,
        path: String?, outcome: String, detail: String?
    ) {
        json.raw("{\"time\":")
        // To the millisecond rounded down, as `format` writes a date (before 1970 too).
        json.time(nanoseconds: nanoseconds, fractionDigits: 3)
        writeJSONFields(
            into: &json, action: action, who: who, address: address, path: path, outcome: outcome, detail: detail)
    }

    /// The line's fields after its time, and its end.
    private static func writeJSONFields(
        into json: inout JSONBytes, action: String, who: String, address: String, path: String?, outcome: String,
        detail: String?
    ) {
        json.raw(",\"action\":")
        json.string(action)
        json.raw(",\"who\":")
        json.string(who)
        json.raw(",\"address\":")
        json.string(address)
        if let path {
            json.raw(",\"path\":")
            json.string(path)
        }
        json.raw(",\"outcome\":")
        json.string(outcome)
        if let detail {
            json.raw(",\"detail\":")
            json.string(detail)
        }
        json.raw("}")
    }

    /// The time as the log writes it: `2026-11-25T01:23:45.678Z`.
    ///
    /// Written by hand (`CivilTime`), not by Foundation's ISO 8601 format
    /// style: every download is an event, and the format style took 8 % of
    /// a small read's time in the profile (README, "Small requests").
    public static func format(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        // Nanoseconds since 1970 hold 1678 to 2261; Foundation writes what lies beyond.
        guard abs(milliseconds) < 9e12 else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        CivilTime(nanoseconds: Int64(milliseconds) * 1_000_000).writeRFC3339(into: &bytes, fractionDigits: 3)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses an RFC 3339 time (with or without fractions of a second).
    public static func parseTime(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        return try? Date(text, strategy: .iso8601)
    }
}
