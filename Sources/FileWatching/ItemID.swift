/// An opaque identity that names one item for as long as it exists under the
/// root: it survives renames and moves, and two items that exist at the same
/// time never share one.
public struct ItemID: Hashable, Sendable, CustomStringConvertible {
    /// The identity's bits.
    public var rawValue: UInt64

    /// Wraps raw bits.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses the form written by ``description`` (16 hexadecimal digits).
    public init?(_ string: String) {
        guard string.utf8.count == 16, let value = UInt64(string, radix: 16) else { return nil }
        self.rawValue = value
    }

    /// Sixteen lowercase hexadecimal digits.
    public var description: String {
        let digits = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Derives an identity from what the file system says makes a file
    /// itself: its device, inode and birth time (or generation), and a
    /// discriminator that tells apart the paths of one hard-linked inode.
    static func derived(from identity: FileIdentity, discriminator: UInt64) -> ItemID {
        var hash = Mixer(seed: 0x6669_6c65_7368_6172)  // "fileshar"
        hash.combine(identity.device)
        hash.combine(identity.inode)
        hash.combine(UInt64(bitPattern: identity.birth))
        // Only where known: ids derived before identities had handle
        // fingerprints stay what they were on a file system without handles.
        if identity.generation != 0 { hash.combine(UInt64(identity.generation) | 1 << 32) }
        hash.combine(discriminator)
        let value = hash.finalize()
        return ItemID(rawValue: value == 0 ? 1 : value)
    }
}

/// A small, stable 64-bit mixer (not `Hasher`, whose seed changes between
/// runs: identities must be the same in every run).
struct Mixer {
    private var state: UInt64
    init(seed: UInt64) { state = seed ^ 0x9E37_79B9_7F4A_7C15 }
    mutating func combine(_ value: UInt64) {
        state = Mixer.mix(state ^ value &+ 0x9E37_79B9_7F4A_7C15 &+ (state << 6) &+ (state >> 2))
    }
    func finalize() -> UInt64 { Mixer.mix(state) }
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
