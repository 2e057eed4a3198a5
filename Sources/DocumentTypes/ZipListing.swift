/// The entries of a ZIP archive, as far as bounded reads can tell: from the
/// central directory at the end of the archive when the source has it, or
/// else from the local headers in the prefix read.
struct ZipListing: Sendable {
    /// An entry: its name, and where its data lies if its local header was read.
    struct Entry: Sendable {
        var name: String
        var method: UInt16
        var compressedSize: Int
        var localHeaderOffset: Int
    }

    /// The entries, in the order of the directory (or of the file).
    var entries: [Entry]
    /// Whether every entry of the archive is listed.
    var isComplete: Bool

    /// The most bytes of central directory read (about 12,000 entries with short names).
    static let maximumDirectoryLength = 1 << 20
    /// The end record (22 bytes) follows a comment of at most 65,535 bytes.
    static let maximumEndRecordSearch = 22 + 65_535

    /// Lists the entries of the archive in `source`, whose first bytes are `head`.
    static func read(from source: any ContentSource, head: [UInt8]) throws -> ZipListing {
        if let size = source.size, size >= 22, let listing = try centralDirectory(of: source, size: size) {
            return listing
        }
        return localHeaders(in: head)
    }

    /// The central directory, located from the end record in the last
    /// 64 KiB, or `nil` when the source does not have the end of the
    /// archive or it is damaged.
    private static func centralDirectory(of source: any ContentSource, size: Int) throws -> ZipListing? {
        let tailLength = min(size, maximumEndRecordSearch)
        let tailStart = size - tailLength
        let tail = try source.read(at: tailStart, count: tailLength)
        guard tail.count == tailLength else { return nil }
        var position = tail.count - 22
        var endRecord: Int?
        while position >= 0 {
            if tail[position] == 0x50, tail[position + 1] == 0x4B, tail[position + 2] == 0x05,
                tail[position + 3] == 0x06, position + 22 + Int(le16(tail, position + 20)) <= tail.count
            {
                endRecord = position
                break
            }
            position -= 1
        }
        guard let end = endRecord else { return nil }
        var entryCount = Int(le16(tail, end + 10))
        var directoryLength = Int(le32(tail, end + 12))
        var directoryOffset = Int(le32(tail, end + 16))
        var directoryEnd = tailStart + end
        if entryCount == 0xFFFF || directoryLength == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF,
            end >= 20, tail[end - 20] == 0x50, tail[end - 19] == 0x4B, tail[end - 18] == 0x06, tail[end - 17] == 0x07
        {
            // ZIP64: the locator before the end record gives the ZIP64 end record.
            let zip64End = Int(clamping: le64(tail, end - 20 + 8))
            let record = try source.read(at: zip64End, count: 56)
            guard record.count == 56, record[0] == 0x50, record[1] == 0x4B, record[2] == 0x06, record[3] == 0x06
            else { return nil }
            entryCount = Int(clamping: le64(record, 32))
            directoryLength = Int(clamping: le64(record, 40))
            directoryOffset = Int(clamping: le64(record, 48))
            directoryEnd = zip64End
        }
        // Data before the archive (a self-extractor's stub) shifts every offset.
        if directoryOffset + directoryLength != directoryEnd, directoryEnd - directoryLength >= 0 {
            directoryOffset = directoryEnd - directoryLength
        }
        guard directoryOffset >= 0, directoryLength >= 0 else { return nil }
        let directory = try source.read(at: directoryOffset, count: min(directoryLength, maximumDirectoryLength))
        var entries: [Entry] = []
        var cursor = 0
        while cursor + 46 <= directory.count, entries.count < entryCount {
            guard directory[cursor] == 0x50, directory[cursor + 1] == 0x4B, directory[cursor + 2] == 0x01,
                directory[cursor + 3] == 0x02
            else { break }
            let nameLength = Int(le16(directory, cursor + 28))
            let extraLength = Int(le16(directory, cursor + 30))
            let commentLength = Int(le16(directory, cursor + 32))
            guard cursor + 46 + nameLength <= directory.count else { break }
            entries.append(
                Entry(
                    name: String(decoding: directory[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self),
                    method: le16(directory, cursor + 10), compressedSize: Int(le32(directory, cursor + 20)),
                    localHeaderOffset: Int(le32(directory, cursor + 42))))
            cursor += 46 + nameLength + extraLength + commentLength
        }
        if entries.isEmpty && entryCount > 0 { return nil }
        return ZipListing(entries: entries, isComplete: entries.count == entryCount)
    }

    /// The entries whose local headers lie in `head`, walking from the
    /// start; complete when the walk reaches the central directory.
    static func localHeaders(in head: [UInt8]) -> ZipListing {
        var entries: [Entry] = []
        var cursor = 0
        while cursor + 30 <= head.count {
            guard head[cursor] == 0x50, head[cursor + 1] == 0x4B else { break }
            if head[cursor + 2] == 0x01 && head[cursor + 3] == 0x02
                || head[cursor + 2] == 0x05 && head[cursor + 3] == 0x06
            {
                return ZipListing(entries: entries, isComplete: true)
            }
            guard head[cursor + 2] == 0x03, head[cursor + 3] == 0x04 else { break }
            let flags = le16(head, cursor + 6)
            let compressedSize = le32(head, cursor + 18)
            let nameLength = Int(le16(head, cursor + 26))
            let extraLength = Int(le16(head, cursor + 28))
            guard cursor + 30 + nameLength <= head.count else { break }
            let name = String(decoding: head[(cursor + 30)..<(cursor + 30 + nameLength)], as: UTF8.self)
            let dataStart = cursor + 30 + nameLength + extraLength
            let sizeKnown = flags & 0x08 == 0 || (compressedSize != 0 && compressedSize != 0xFFFF_FFFF)
            entries.append(
                Entry(
                    name: name, method: le16(head, cursor + 8), compressedSize: sizeKnown ? Int(compressedSize) : -1,
                    localHeaderOffset: cursor))
            if sizeKnown && compressedSize != 0xFFFF_FFFF {
                cursor = dataStart + Int(compressedSize)
                if flags & 0x08 != 0 {
                    // The data descriptor, with or without its signature.
                    let signed =
                        cursor + 4 <= head.count && head[cursor] == 0x50 && head[cursor + 1] == 0x4B
                        && head[cursor + 2] == 0x07 && head[cursor + 3] == 0x08
                    cursor += signed ? 16 : 12
                }
            } else if let next = dataDescriptorEnd(in: head, dataStart: dataStart) {
                entries[entries.count - 1].compressedSize = next.dataLength
                cursor = next.end
            } else {
                break
            }
        }
        return ZipListing(entries: entries, isComplete: false)
    }

    /// Where the signed data descriptor that closes data starting at
    /// `dataStart` ends: the first `PK 07 08` whose size field equals the
    /// distance from the data's start.
    private static func dataDescriptorEnd(in head: [UInt8], dataStart: Int) -> (end: Int, dataLength: Int)? {
        var position = dataStart
        while position + 16 <= head.count {
            if head[position] == 0x50, head[position + 1] == 0x4B, head[position + 2] == 0x07,
                head[position + 3] == 0x08
            {
                // A classic descriptor is 16 bytes, a ZIP64 one 24: take the
                // one whose sizes match and after which a record starts.
                let length = position - dataStart
                var ends: [Int] = []
                if Int(le32(head, position + 8)) == length { ends.append(position + 16) }
                if position + 24 <= head.count, le64(head, position + 8) == UInt64(length) {
                    ends.append(position + 24)
                }
                let followed = ends.first { end in
                    end == head.count || (end + 2 <= head.count && head[end] == 0x50 && head[end + 1] == 0x4B)
                }
                if let end = followed ?? ends.first { return (end, length) }
            }
            position += 1
        }
        return nil
    }
}

func le16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
    UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
}

func le32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    UInt32(le16(bytes, offset)) | UInt32(le16(bytes, offset + 2)) << 16
}

func le64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
    UInt64(le32(bytes, offset)) | UInt64(le32(bytes, offset + 4)) << 32
}

func be32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
    UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
        | UInt32(bytes[offset + 3])
}
