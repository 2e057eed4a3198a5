/// A seeded generator (SplitMix64): the same numbers on every machine, so a
/// failing random sequence can be replayed from its seed.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next `count` bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(count + 8)
        while result.count < count { withUnsafeBytes(of: next()) { result.append(contentsOf: $0) } }
        result.removeLast(result.count - count)
        return result
    }

    /// `count` bytes from a generator seeded with `seed`.
    public static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededRandom(seed: seed)
        return generator.bytes(count)
    }
}
