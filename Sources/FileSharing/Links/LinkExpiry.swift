import Foundation

/// When a link ends, as `POST /api/shares` takes it: an ISO 8601 duration
/// from now (`P7D`, `PT1H`, `P1DT12H`, `P2W`) or an RFC 3339 time.
enum LinkExpiry {
    /// Seconds since the epoch; `nil` when `text` is neither form (or not after `now`).
    static func parse(_ text: String, now: Int64) -> Int64? {
        if text.hasPrefix("P") {
            guard let seconds = duration(text), seconds > 0 else { return nil }
            return now + seconds
        }
        guard let date = time(text) else { return nil }
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        return seconds > now ? seconds : nil
    }

    /// The seconds of an ISO 8601 duration (years and months are not taken: their length varies).
    static func duration(_ text: String) -> Int64? {
        var total: Int64 = 0
        var number = ""
        var inTime = false
        var any = false
        for character in text.dropFirst() {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            if character == "T" {
                guard number.isEmpty, !inTime else { return nil }
                inTime = true
                continue
            }
            guard let value = Int64(number), value <= 100_000_000 else { return nil }
            number = ""
            let unit: Int64? =
                switch (character, inTime) {
                case ("W", false): 7 * 86400
                case ("D", false): 86400
                case ("H", true): 3600
                case ("M", true): 60
                case ("S", true): 1
                default: nil
                }
            guard let unit else { return nil }
            total += value * unit
            any = true
        }
        return any && number.isEmpty ? total : nil
    }

    private static func time(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
