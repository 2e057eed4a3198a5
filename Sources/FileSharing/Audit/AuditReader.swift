public import Foundation

/// Reads the audit back (`fileshare audit`, `GET /api/audit`): the files
/// oldest first, each line an ``AuditEvent``; a damaged line is skipped.
public enum AuditReader {
    /// What to keep.
    public struct Filter: Sendable {
        /// Only events at or after this time.
        public var since: Date?
        /// Only events of this user (or `link ID`).
        public var user: String?
        /// Only events about this path or what is under it.
        public var path: String?
        /// At most this many, the latest.
        public var limit: Int?

        public init(since: Date? = nil, user: String? = nil, path: String? = nil, limit: Int? = nil) {
            self.since = since
            self.user = user
            self.path = path
            self.limit = limit
        }

        /// Sets ``since`` from an RFC 3339 time or an ISO 8601 duration back from now (`P1D`: the last day);
        /// `false` when `text` is neither.
        public mutating func setSince(_ text: String, now: Date = Date()) -> Bool {
            if text.hasPrefix("P"), let seconds = LinkExpiry.duration(text) {
                since = now.addingTimeInterval(-TimeInterval(seconds))
                return true
            }
            guard let time = AuditEvent.parseTime(text) else { return false }
            since = time
            return true
        }

        func keeps(_ event: AuditEvent) -> Bool {
            if let user, event.who != user { return false }
            if let path {
                let trimmed = path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
                guard let eventPath = event.path else { return false }
                if !trimmed.isEmpty, eventPath != trimmed, !eventPath.hasPrefix(trimmed + "/") { return false }
            }
            if let since {
                guard let time = AuditEvent.parseTime(event.time), time >= since else { return false }
            }
            return true
        }
    }

    /// The audit's files in `folder`, oldest first.
    public static func files(in folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let numbered =
            names.compactMap { name -> (Int, String)? in
                let parts = name.split(separator: ".")
                guard parts.count == 3, parts[0] == "audit", parts[2] == "jsonl", let index = Int(parts[1]) else {
                    return nil
                }
                return (index, name)
            }
            .sorted { $0.0 > $1.0 }.map(\.1)
        return (numbered + (names.contains(AuditLog.currentName) ? [AuditLog.currentName] : [])).map {
            folder + "/" + $0
        }
    }

    /// The events in `folder` that `filter` keeps, oldest first.
    public static func read(folder: String, filter: Filter = Filter()) -> [AuditEvent] {
        let decoder = JSONDecoder()
        var events: [AuditEvent] = []
        for file in files(in: folder) {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            for line in data.split(separator: UInt8(ascii: "\n")) {
                guard let event = try? decoder.decode(AuditEvent.self, from: Data(line)), filter.keeps(event) else {
                    continue
                }
                events.append(event)
            }
        }
        if let limit = filter.limit, events.count > limit { events.removeFirst(events.count - limit) }
        return events
    }

    /// The audit's folder for the shared folder at `root`, whose state is inside it.
    public static func folder(forSharedFolder root: String) -> String {
        folder(forPrivateFolder: root + "/" + SharedFolder.privateFolder)
    }

    /// The audit's folder in the server's state folder at `privatePath`.
    public static func folder(forPrivateFolder privatePath: String) -> String { privatePath + "/audit" }

    /// The events as a table for people: time, who, address, action, path, outcome.
    public static func table(_ events: [AuditEvent]) -> String {
        let header = ["TIME", "WHO", "ADDRESS", "ACTION", "PATH", "OUTCOME"]
        let rows =
            [header]
            + events.map { event in
                [
                    event.time, event.who, event.address, event.action,
                    (event.path ?? "-") + (event.detail.map { " (\($0))" } ?? ""), event.outcome,
                ]
            }
        var widths = Array(repeating: 0, count: header.count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
