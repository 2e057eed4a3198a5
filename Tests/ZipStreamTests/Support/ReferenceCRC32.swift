import FileshareTestSupport

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

/// Deterministic pseudo-random bytes, so a failure can be replayed.
typealias SeededBytes = SeededRandom
