extension ServeSetting {
    /// Why `text` is not a value of this setting, in words that name the
    /// setting; `nil` when it is one.
    func problem(with text: String) -> String? {
        let fits: Bool =
            switch kind {
            case .text: true
            case .onOff: ServeSetting.switchValue(text) != nil
            case .count(let range): Int(text).map { range.contains($0) } ?? false
            case .size(let optional): ServeSetting.sizeValue(text, optional: optional) != nil
            case .duration(let most, let optional):
                ServeSetting.durationValue(text, most: most, optional: optional) != nil
            }
        return fits ? nil : "'\(key)' takes \(kindDescription), not '\(text)'"
    }

    /// `true`, `yes`, `on`, `1` and their opposites; `nil` for anything else.
    static func switchValue(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": true
        case "false", "no", "off", "0": false
        default: nil
        }
    }

    /// A size: `.some(nil)` for `unlimited` (when `optional`), the bytes
    /// otherwise; `nil` for what is not a size.
    static func sizeValue(_ text: String, optional: Bool) -> Int64?? {
        if optional && text.lowercased() == "unlimited" { return .some(nil) }
        return parseSize(text).map { .some($0) }
    }

    /// Bytes from `500`, `500K`, `500M`, `2G` or `1T` (powers of 1,024); `nil`
    /// for anything else, or past what 63 bits hold.
    static func parseSize(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.uppercased().last, let found = units[last] {
            unit = found
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let value = Int64(digits) else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    /// A length of time: `.some(nil)` for `unlimited` (when `optional`), the
    /// duration otherwise (more than 0, at most `most` seconds); `nil` for
    /// anything else.
    static func durationValue(_ text: String, most: Int64, optional: Bool) -> Duration?? {
        if optional && text.lowercased() == "unlimited" { return .some(nil) }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text)
        var unit = 1.0
        if let last = text.last, let found = units[last] {
            unit = found
            number = number.dropLast()
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCIIDigit || $0 == "." }), let value = Double(number)
        else { return nil }
        let seconds = value * unit
        guard seconds > 0, seconds <= Double(most) else { return nil }
        return .some(.milliseconds(Int64((seconds * 1000).rounded())))
    }
}

extension Character {
    /// Whether this is one of `0` to `9`.
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension Duration {
    /// Nanoseconds, as the version and trash retentions count.
    var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
