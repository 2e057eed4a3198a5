public import FileWatching

/// A change to append to a log: the event object of `events.md`, when it
/// happened, and who made it when it was made through fileshare.
public struct ChangeLogEntry: Sendable, Hashable {
    /// The event as one JSON object (`{"type":"added",…}`), without `seq`, `time` or `origin`.
    public var event: String
    /// When the change was seen, nanoseconds since 1970 (wall clock).
    public var time: Int64
    /// Who made it, for changes made through fileshare.
    public var origin: ChangeOrigin?

    /// Creates an entry from an event object's JSON text.
    public init(event: String, time: Int64, origin: ChangeOrigin? = nil) {
        self.event = event
        self.time = time
        self.origin = origin
    }

    /// Creates an entry from an observer's change.
    public init(_ change: Change, time: Int64, origin: ChangeOrigin? = nil) {
        self.init(event: change.jsonLine, time: time, origin: origin)
    }
}

/// One numbered change of a log: what `GET /api/changes`, `/api/events` and
/// `fileshare changes --since` hand out. Its JSON form is the event object
/// of `events.md` with `"seq"`, `"time"` (RFC 3339, UTC, milliseconds) and,
/// for changes made through fileshare, `"origin"`.
public struct ChangeRecord: Sendable, Hashable {
    /// The sequence number: one more than the record before it in the same
    /// log, never reused, also across restarts.
    public let seq: UInt64
    /// When the change was seen, nanoseconds since 1970.
    public let time: Int64
    /// Who made it, for changes made through fileshare.
    public let origin: ChangeOrigin?
    /// The record as a server-sent event, `id: SEQ\ndata: RECORD\n\n`, made
    /// once so that every reader (hundreds of event streams) copies bytes
    /// instead of formatting; ``json`` lies inside it.
    public let eventStreamFrame: [UInt8]
    /// Where the JSON object lies in ``eventStreamFrame``.
    private let jsonRange: Range<Int>
    /// Where the event's own fields lie in ``eventStreamFrame``.
    private let eventFields: Range<Int>

    /// Creates the record of an entry.
    public init(seq: UInt64, entry: ChangeLogEntry) {
        self.seq = seq
        self.time = entry.time
        self.origin = entry.origin
        var frame: [UInt8] = []
        frame.reserveCapacity(entry.event.utf8.count + 96 + (entry.origin == nil ? 0 : 96))
        frame.append(contentsOf: "id: ".utf8)
        frame.append(contentsOf: String(seq).utf8)
        frame.append(contentsOf: "\ndata: ".utf8)
        let jsonStart = frame.count
        frame.append(contentsOf: "{\"seq\":".utf8)
        frame.append(contentsOf: String(seq).utf8)
        frame.append(contentsOf: ",\"time\":\"".utf8)
        CivilTime(nanoseconds: entry.time).writeRFC3339(into: &frame, fractionDigits: 3)
        frame.append(UInt8(ascii: "\""))
        // The event's fields, without its braces.
        let utf8 = Array(entry.event.utf8)
        var start = frame.count
        var inner = utf8.dropFirst().dropLast()
        if utf8.first != UInt8(ascii: "{") || utf8.last != UInt8(ascii: "}") { inner = utf8[...] }
        if !inner.isEmpty {
            frame.append(UInt8(ascii: ","))
            start += 1
            frame.append(contentsOf: inner)
        }
        eventFields = start..<frame.count
        if let origin = entry.origin {
            frame.append(contentsOf: ",\"origin\":".utf8)
            frame.append(contentsOf: origin.json.utf8)
        }
        frame.append(UInt8(ascii: "}"))
        jsonRange = jsonStart..<frame.count
        frame.append(contentsOf: "\n\n".utf8)
        eventStreamFrame = frame
    }

    /// The record as one JSON object, UTF-8.
    public var json: ArraySlice<UInt8> { eventStreamFrame[jsonRange] }

    /// The event object alone, as `events.md` writes it.
    public var event: String {
        "{" + String(decoding: eventStreamFrame[eventFields], as: UTF8.self) + "}"
    }

    /// The entry this record was made from.
    public var entry: ChangeLogEntry { ChangeLogEntry(event: event, time: time, origin: origin) }

    /// The record as one line of JSON text (no newline).
    public var jsonLine: String { String(decoding: json, as: UTF8.self) }
}

extension ChangeRecord {
    /// The change the record holds, read back from its event object (`nil`
    /// for an event that is not an observer change).
    public var change: Change? { Change(jsonLine: event) }
}
