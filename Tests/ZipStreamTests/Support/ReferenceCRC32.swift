/// CRC-32 bit by bit, straight from the definition: the reference the fast
/// implementation is checked against.
func referenceCRC32(_ bytes: some Sequence<UInt8>, startingAt start: UInt32 = 0) -> UInt32 {
    var crc = ~start
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

/// Deterministic pseudo-random bytes (SplitMix64), so a failure can be replayed.
struct SeededBytes {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` bytes from a generator seeded with `seed`.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededBytes(seed: seed)
        return generator.bytes(count)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(count + 8)
        while result.count < count { withUnsafeBytes(of: next()) { result.append(contentsOf: $0) } }
        result.removeLast(result.count - count)
        return result
    }
}
