/// What identification has read of one content: its prefix, and, computed
/// once when a signature first needs them, its text, its ISO media brands
/// and its ZIP entries.
final class ContentProbe {
    /// How much of the content is read first: 64 KiB.
    static let headLength = 64 * 1024

    let source: any ContentSource
    let head: [UInt8]
    private var textSample: TextSample?
    private var brandsRead = false
    private var brands: (major: [UInt8], compatible: [[UInt8]])?
    private var zipRead = false
    private var zipListing: ZipListing?

    init(_ source: any ContentSource) throws {
        self.source = source
        self.head = try source.read(at: 0, count: Self.headLength)
    }

    /// Whether the content holds nothing.
    var isEmpty: Bool { head.isEmpty }

    /// Whether the content is longer than what was read.
    var mayHaveMore: Bool { source.size.map { $0 > head.count } ?? (head.count == Self.headLength) }

    var text: TextSample {
        if let textSample { return textSample }
        let sample = TextSample(head)
        textSample = sample
        return sample
    }

    /// The bytes a pattern looks at: from the prefix, or read beyond it.
    func bytes(for pattern: BytePattern) throws -> [UInt8] {
        if pattern.reach <= head.count || !mayHaveMore { return head }
        // Read the window the pattern covers, placed at its offset.
        let window = try source.read(at: pattern.offset, count: pattern.reach - pattern.offset)
        return [UInt8](repeating: 0, count: pattern.offset) + window
    }

    /// The `ftyp` box's brands, if the content is ISO base media.
    var isoBrands: (major: [UInt8], compatible: [[UInt8]])? {
        if brandsRead { return brands }
        brandsRead = true
        guard head.count >= 16, head[4] == 0x66, head[5] == 0x74, head[6] == 0x79, head[7] == 0x70 else {
            return nil
        }
        let boxSize = Int(be32(head, 0))
        let end = min(boxSize >= 16 ? boxSize : head.count, head.count)
        var compatible: [[UInt8]] = []
        var position = 16
        while position + 4 <= end {
            compatible.append(Array(head[position..<(position + 4)]))
            position += 4
        }
        brands = (Array(head[8..<12]), compatible)
        return brands
    }

    /// The archive's entries, if the content starts as a ZIP archive.
    func zip() throws -> ZipListing? {
        if zipRead { return zipListing }
        zipRead = true
        guard head.count >= 4, head[0] == 0x50, head[1] == 0x4B, head[2] == 0x03, head[3] == 0x04 else {
            return nil
        }
        zipListing = try ZipListing.read(from: source, head: head)
        return zipListing
    }

    /// The text of the first entry if it is named `mimetype` and stored
    /// uncompressed, as EPUB and OpenDocument require; `expected` tells how
    /// long it is when its local header does not.
    func mimetypeEntry(expected: String) throws -> Bool {
        guard let listing = try zip(), head.count >= 30 else { return false }
        let nameLength = Int(le16(head, 26))
        let extraLength = Int(le16(head, 28))
        guard le16(head, 8) == 0, nameLength == 8, head.count >= 30 + nameLength,
            String(decoding: head[30..<38], as: UTF8.self) == "mimetype"
        else { return false }
        let dataStart = 30 + nameLength + extraLength
        let expectedBytes = Array(expected.utf8)
        // The size: from the local header, or its data descriptor, or the central directory.
        var size = ZipListing.localHeaders(in: head).entries.first?.compressedSize ?? -1
        if size < 0 || size == 0xFFFF_FFFF {
            size = listing.entries.first { $0.name == "mimetype" }?.compressedSize ?? -1
        }
        guard size >= expectedBytes.count, size <= expectedBytes.count + 2, dataStart + size <= head.count else {
            return false
        }
        // Tolerate a line break after the text, which some makers add.
        let data = head[dataStart..<(dataStart + size)]
        return data.starts(with: expectedBytes)
            && data.dropFirst(expectedBytes.count).allSatisfy { $0 == 0x0A || $0 == 0x0D }
    }
}
