/// Numbers written as ASCII digits straight into an answer's bytes: the one
/// place they are, for JSON, XML and the entity tags. A listing writes tens
/// of thousands, and `String(value, radix:)` made a string of each.
extension Array where Element == UInt8 {
    /// `value` in decimal, as `String(value)` writes it.
    mutating func appendDecimal(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        // Written backwards into 20 bytes on the stack (UInt64's most), then appended at once.
        var buffer: (UInt64, UInt64, UInt32) = (0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &buffer) { out in
            var rest = value.magnitude
            var start = 20
            repeat {
                start -= 1
                out[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            append(contentsOf: out[start..<20])
        }
    }

    /// `value` in lowercase hexadecimal, as `String(value, radix: 16)` writes
    /// it, with leading zeros up to `minimumDigits` (at most 16).
    mutating func appendHex(_ value: UInt64, minimumDigits: Int = 1) {
        let digits = Swift.max(minimumDigits, (64 - value.leadingZeroBitCount + 3) / 4, 1)
        // Written into 16 bytes on the stack, then appended at once.
        var buffer: (UInt64, UInt64) = (0, 0)
        Swift.withUnsafeMutableBytes(of: &buffer) { out in
            var rest = value
            for index in stride(from: digits - 1, through: 0, by: -1) {
                let nibble = UInt8(truncatingIfNeeded: rest) & 0xF
                out[index] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                rest >>= 4
            }
            append(contentsOf: out[..<digits])
        }
    }

    /// `value` in lowercase hexadecimal, with a `-` before a negative one, as
    /// `String(value, radix: 16)` writes it.
    mutating func appendHex(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendHex(value.magnitude)
    }
}
