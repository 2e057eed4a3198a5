/// A path relative to the watched root: `/`-separated, with no leading `./`
/// and no trailing `/`; the root itself is the empty path.
///
/// File names on Linux are bytes, not text, so the path keeps its bytes. Its
/// ``description`` is text with U+FFFD where the bytes are not UTF-8.
public struct ItemPath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path's bytes.
    public var bytes: [UInt8]

    /// Creates a path from its bytes.
    public init(bytes: [UInt8]) { self.bytes = bytes }
    /// Creates a path from text.
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    /// Creates a path from a string literal.
    public init(stringLiteral value: String) { self.init(value) }

    /// The root.
    public static let root = ItemPath(bytes: [])

    /// Whether this is the root.
    public var isRoot: Bool { bytes.isEmpty }

    /// The path as text, with U+FFFD where the bytes are not UTF-8.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether the bytes are valid UTF-8.
    public var isValidUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// The last component.
    public var name: [UInt8] { Array(nameBytes) }

    /// The last component, as a slice of ``bytes`` (nothing copied: for
    /// work on many paths, such as a listing).
    public var nameBytes: ArraySlice<UInt8> {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return bytes[...] }
        return bytes[(slash + 1)...]
    }

    /// The path of the folder that holds this item (the root for a top-level item).
    public var parent: ItemPath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return .root }
        return ItemPath(bytes: Array(bytes[..<slash]))
    }

    /// The components, as byte arrays.
    public var components: [[UInt8]] {
        bytes.isEmpty ? [] : bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(Array.init)
    }

    /// This path with `name` appended.
    public func appending(_ name: [UInt8]) -> ItemPath {
        if bytes.isEmpty { return ItemPath(bytes: name) }
        var result = bytes
        result.reserveCapacity(bytes.count + 1 + name.count)
        result.append(UInt8(ascii: "/"))
        result.append(contentsOf: name)
        return ItemPath(bytes: result)
    }

    /// Whether `self` is `other` or lies under it.
    public func isSame(asOrUnder other: ItemPath) -> Bool {
        if other.isRoot { return true }
        guard bytes.count >= other.bytes.count, bytes.starts(with: other.bytes) else { return false }
        return bytes.count == other.bytes.count || bytes[other.bytes.count] == UInt8(ascii: "/")
    }

    public static func < (lhs: ItemPath, rhs: ItemPath) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
