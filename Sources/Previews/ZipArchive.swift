import CFileshareShim
import CImageThumbnail

#if canImport(Glibc)
    import Glibc
#endif

/// The entries of a ZIP archive (a comic, a book) open at a descriptor,
/// read with bounded reads: the end record from the last 64 KiB, the
/// central directory up to ``maximumDirectoryBytes``, and one entry's data
/// up to ``maximumEntryBytes`` whatever its header claims. A damaged,
/// truncated or hostile archive is an error, never a large allocation.
struct ZipArchive {
    /// One entry of the central directory.
    struct Entry: Sendable, Equatable {
        var name: String
        var method: UInt16
        var compressedSize: Int64
        var size: Int64
        var localHeaderOffset: Int64
    }

    /// The most bytes of central directory read (some 20,000 entries).
    static let maximumDirectoryBytes = 2 << 20
    /// The largest entry read into memory, inflated.
    static let maximumEntryBytes = Int(CIT_MAX_INPUT)

    let fd: Int32
    let size: Int64
    /// The entries, in the directory's order.
    let entries: [Entry]

    /// Reads the central directory of the archive open at `fd`.
    /// - Throws: ``ThumbnailError`` (`failed`) when it is not a ZIP or its directory is damaged.
    init(fd: Int32) throws(ThumbnailError) {
        self.fd = fd
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size >= 22 else { throw ThumbnailError(.failed, "not a ZIP archive") }
        size = Int64(info.st_size)
        let tailLength = Int(min(size, 22 + 65_535))
        let tail = ZipArchive.read(fd, at: size - Int64(tailLength), count: tailLength)
        guard tail.count == tailLength,
            let end = stride(from: tail.count - 22, through: 0, by: -1).first(where: {
                tail[$0] == 0x50 && tail[$0 + 1] == 0x4B && tail[$0 + 2] == 0x05 && tail[$0 + 3] == 0x06
            })
        else { throw ThumbnailError(.failed, "no ZIP end record: not a ZIP archive, or a truncated one") }
        var count = Int64(le16(tail, end + 10))
        var directoryLength = Int64(le32(tail, end + 12))
        var directoryOffset = Int64(le32(tail, end + 16))
        if count == 0xFFFF || directoryLength == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF, end >= 20,
            tail[end - 20] == 0x50, tail[end - 19] == 0x4B, tail[end - 18] == 0x06, tail[end - 17] == 0x07
        {
            let record = ZipArchive.read(fd, at: Int64(bitPattern: le64(tail, end - 20 + 8)), count: 56)
            guard record.count == 56, record[0] == 0x50, record[1] == 0x4B, record[2] == 0x06, record[3] == 0x06
            else { throw ThumbnailError(.failed, "a damaged ZIP64 end record") }
            count = Int64(bitPattern: le64(record, 32))
            directoryLength = Int64(bitPattern: le64(record, 40))
            directoryOffset = Int64(bitPattern: le64(record, 48))
        }
        guard directoryOffset >= 0, directoryLength >= 0, directoryOffset + directoryLength <= size,
            directoryLength <= ZipArchive.maximumDirectoryBytes
        else { throw ThumbnailError(.failed, "the ZIP directory is damaged, or larger than a comic's") }
        let directory = ZipArchive.read(fd, at: directoryOffset, count: Int(directoryLength))
        var entries: [Entry] = []
        var cursor = 0
        while cursor + 46 <= directory.count, entries.count < count,
            le32(directory, cursor) == 0x0201_4B50
        {
            let nameLength = Int(le16(directory, cursor + 28))
            let extraLength = Int(le16(directory, cursor + 30))
            let commentLength = Int(le16(directory, cursor + 32))
            guard cursor + 46 + nameLength + extraLength <= directory.count else { break }
            var entry = Entry(
                name: String(decoding: directory[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self),
                method: le16(directory, cursor + 10), compressedSize: Int64(le32(directory, cursor + 20)),
                size: Int64(le32(directory, cursor + 24)), localHeaderOffset: Int64(le32(directory, cursor + 42)))
            // ZIP64: the fields at their maximum are in the extra field, in this order.
            var extra = cursor + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = le16(directory, extra)
                let length = Int(le16(directory, extra + 2))
                if id == 0x0001 {
                    var field = extra + 4
                    func next() -> Int64? {
                        guard field + 8 <= extra + 4 + length, field + 8 <= extraEnd else { return nil }
                        defer { field += 8 }
                        return Int64(bitPattern: le64(directory, field))
                    }
                    if entry.size == 0xFFFF_FFFF { entry.size = next() ?? -1 }
                    if entry.compressedSize == 0xFFFF_FFFF { entry.compressedSize = next() ?? -1 }
                    if entry.localHeaderOffset == 0xFFFF_FFFF { entry.localHeaderOffset = next() ?? -1 }
                }
                extra += 4 + length
            }
            entries.append(entry)
            cursor += 46 + nameLength + extraLength + commentLength
        }
        guard !entries.isEmpty else { throw ThumbnailError(.failed, "the ZIP archive lists no entry") }
        self.entries = entries
    }

    /// The entry named `name`, if any.
    func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// The entry's content, inflated with zlib where it is compressed.
    /// - Throws: ``ThumbnailError`` (`failed`) when the entry claims or
    ///   inflates to more than `limit` bytes, lies outside the archive, or is damaged.
    func data(of entry: Entry, zlib: OpaquePointer?, limit: Int = maximumEntryBytes) throws(ThumbnailError) -> [UInt8] {
        guard entry.size >= 0, entry.compressedSize >= 0, entry.localHeaderOffset >= 0 else {
            throw ThumbnailError(.failed, "'\(entry.name)' has a damaged directory entry")
        }
        guard entry.size <= limit else {
            throw ThumbnailError(
                .tooCostly, "'\(entry.name)' claims \(entry.size) bytes, more than the \(limit) an entry read may have")
        }
        let header = ZipArchive.read(fd, at: entry.localHeaderOffset, count: 30)
        guard header.count == 30, le32(header, 0) == 0x0403_4B50 else {
            throw ThumbnailError(.failed, "'\(entry.name)' has no local header where the directory says")
        }
        let start = entry.localHeaderOffset + 30 + Int64(le16(header, 26)) + Int64(le16(header, 28))
        guard start + entry.compressedSize <= size else {
            throw ThumbnailError(.failed, "'\(entry.name)' runs past the end of the archive (a truncated file)")
        }
        switch entry.method {
        case 0:
            guard entry.compressedSize == entry.size else {
                throw ThumbnailError(.failed, "'\(entry.name)' is stored with two different sizes")
            }
            let bytes = ZipArchive.read(fd, at: start, count: Int(entry.size))
            guard bytes.count == Int(entry.size) else { throw ThumbnailError(.failed, "'\(entry.name)' is cut short") }
            return bytes
        case 8:
            guard let zlib else { throw ThumbnailError(.failed, "zlib is not installed (Debian: zlib1g)") }
            // Inflated straight into the array, up to the size the directory
            // declares (more is a lie, or a bomb): the page is held once.
            var inflated = true
            let bytes = [UInt8](unsafeUninitializedCapacity: Int(entry.size)) { buffer, count in
                var written = 0
                inflated =
                    cit_inflate(zlib, fd, start, entry.compressedSize, buffer.baseAddress, Int(entry.size), &written)
                    == 0
                // What was not written is never read: the array ends where the data did.
                count = inflated ? written : 0
            }
            guard inflated else {
                throw ThumbnailError(.failed, "'\(entry.name)' does not inflate to its declared size")
            }
            return bytes
        default:
            throw ThumbnailError(.failed, "'\(entry.name)' is compressed with method \(entry.method), not DEFLATE")
        }
    }

    /// Up to `count` bytes at `offset` (fewer at the end of the file).
    static func read(_ fd: Int32, at offset: Int64, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let read = bytes.withUnsafeMutableBytes {
                cfs_pread(fd, $0.baseAddress! + done, count - done, offset + Int64(done))
            }
            if read <= 0 { break }
            done += read
        }
        bytes.removeSubrange(done...)
        return bytes
    }
}

private func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
private func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(le16(bytes, at)) | UInt32(le16(bytes, at + 2)) << 16
}
private func le64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
    UInt64(le32(bytes, at)) | UInt64(le32(bytes, at + 4)) << 32
}
