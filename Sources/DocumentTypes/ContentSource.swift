/// Where identification reads a file's content from: the bytes of a file, of
/// a prefix held in memory, or of anything else that can read at an offset.
///
/// Identification reads a bounded prefix, and, for some formats, a few small
/// ranges beyond it: the end of a ZIP archive and its central directory, the
/// bytes after an ID3 tag. It never reads a whole large file.
public protocol ContentSource {
    /// The size of the whole content in bytes, if known.
    var size: Int? { get }

    /// Reads up to `count` bytes at `offset`.
    ///
    /// Returns fewer bytes at the end of the content, or where the source
    /// does not have them (a prefix held in memory).
    ///
    /// - Throws: An error when the content cannot be read.
    func read(at offset: Int, count: Int) throws -> [UInt8]
}

/// Content held in memory: a whole file, or its first bytes.
public struct ContentBytes: ContentSource, Sendable {
    /// The bytes held.
    public var bytes: [UInt8]
    /// The size of the whole content, if known: `bytes.count` for a whole
    /// file, more for a prefix of a file whose size is known, `nil` for a
    /// prefix of unknown size.
    public var size: Int?

    /// Content held whole in memory.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.size = bytes.count
    }

    /// The first bytes of a content whose size is `totalSize` (or unknown).
    ///
    /// - Parameters:
    ///   - prefix: The first bytes of the content.
    ///   - totalSize: The size of the whole content, if known.
    public init(prefix: [UInt8], totalSize: Int?) {
        self.bytes = prefix
        self.size = totalSize.map { max($0, prefix.count) }
    }

    public func read(at offset: Int, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0, offset < bytes.count else { return [] }
        return Array(bytes[offset..<min(bytes.count, offset + count)])
    }
}

/// The content of `base` from `offset` on (the audio after an ID3 tag).
struct OffsetContent: ContentSource {
    var base: any ContentSource
    var offset: Int

    var size: Int? { base.size.map { max(0, $0 - offset) } }

    func read(at offset: Int, count: Int) throws -> [UInt8] {
        try base.read(at: self.offset + offset, count: count)
    }
}
