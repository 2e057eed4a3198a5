/// The entry being written: what its records need.
struct OpenEntry: Sendable {
    /// The name's UTF-8 bytes (with a trailing `/` for a folder).
    var name: [UInt8]
    var kind: ZipEntryKind
    var modified: DOSDateTime
    /// The modification time for the extended timestamp field, if it fits.
    var unixTime: Int32?
    /// Unix permission bits.
    var mode: UInt16
    /// Where the local header starts in the archive.
    var headerOffset: UInt64
    /// Whether the local header carries the ZIP64 extra field, and so the data
    /// descriptor has 8-byte sizes.
    var isZip64: Bool
    var crc = CRC32()
    var size: UInt64 = 0
}

/// Signatures, versions, flags and sizes of APPNOTE.TXT (6.3.10).
enum ZipFormat {
    static let localHeaderSignature: UInt32 = 0x0403_4B50
    static let dataDescriptorSignature: UInt32 = 0x0807_4B50
    static let centralHeaderSignature: UInt32 = 0x0201_4B50
    static let zip64EndSignature: UInt32 = 0x0606_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    static let endSignature: UInt32 = 0x0605_4B50

    /// Unix (3) in the high byte, APPNOTE 6.3 in the low byte.
    static let versionMadeBy: UInt16 = 3 << 8 | 63
    /// 1.0: stored data.
    static let versionStored: UInt16 = 10
    /// 2.0: a folder.
    static let versionFolder: UInt16 = 20
    /// 4.5: ZIP64 structures.
    static let versionZip64: UInt16 = 45

    /// Bit 3: CRC-32 and sizes in a data descriptor after the data.
    static let flagDataDescriptor: UInt16 = 1 << 3
    /// Bit 11: name in UTF-8.
    static let flagUTF8: UInt16 = 1 << 11

    static let zip64ExtraID: UInt16 = 0x0001
    static let extendedTimestampID: UInt16 = 0x5455

    /// The value that sends a reader to the ZIP64 fields.
    static let sentinel32: UInt32 = 0xFFFF_FFFF
    static let sentinel16: UInt16 = 0xFFFF
}

extension OpenEntry {
    private var flags: UInt16 {
        kind == .file ? ZipFormat.flagUTF8 | ZipFormat.flagDataDescriptor : ZipFormat.flagUTF8
    }

    private var baseVersion: UInt16 { kind == .file ? ZipFormat.versionStored : ZipFormat.versionFolder }

    /// The extended timestamp field: modification time only (flag bit 0),
    /// the same in the local and central headers.
    private func appendTimestamp(to bytes: inout [UInt8]) {
        guard let unixTime else { return }
        bytes.appendLittleEndian(ZipFormat.extendedTimestampID)
        bytes.appendLittleEndian(UInt16(5))
        bytes.append(1)
        bytes.appendLittleEndian(unixTime)
    }

    /// The local file header. CRC-32 and sizes are zero (they follow in the
    /// data descriptor) for a file, and zero for a folder since it has no data.
    /// A ZIP64 header sets both 32-bit sizes to 0xFFFFFFFF and carries both
    /// 8-byte sizes, zero, in the ZIP64 extra field (APPNOTE 4.5.3: the local
    /// field must hold both).
    func localHeader() -> [UInt8] {
        var extra: [UInt8] = []
        if isZip64 {
            extra.appendLittleEndian(ZipFormat.zip64ExtraID)
            extra.appendLittleEndian(UInt16(16))
            extra.appendLittleEndian(UInt64(0))  // uncompressed size
            extra.appendLittleEndian(UInt64(0))  // compressed size
        }
        appendTimestamp(to: &extra)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(30 + name.count + extra.count)
        bytes.appendLittleEndian(ZipFormat.localHeaderSignature)
        bytes.appendLittleEndian(isZip64 ? ZipFormat.versionZip64 : baseVersion)
        bytes.appendLittleEndian(flags)
        bytes.appendLittleEndian(UInt16(0))  // stored
        bytes.appendLittleEndian(modified.time)
        bytes.appendLittleEndian(modified.date)
        bytes.appendLittleEndian(UInt32(0))  // CRC-32
        bytes.appendLittleEndian(isZip64 ? ZipFormat.sentinel32 : 0)  // compressed size
        bytes.appendLittleEndian(isZip64 ? ZipFormat.sentinel32 : 0)  // uncompressed size
        bytes.appendLittleEndian(UInt16(name.count))
        bytes.appendLittleEndian(UInt16(extra.count))
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: extra)
        return bytes
    }

    /// The data descriptor of a file, with its signature: 8-byte sizes when
    /// the local header was ZIP64 (and, as the only form that can hold them,
    /// for a file that grew past 4 GiB when it was not); none for a folder.
    func dataDescriptor() -> [UInt8] {
        guard kind == .file else { return [] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        bytes.appendLittleEndian(ZipFormat.dataDescriptorSignature)
        bytes.appendLittleEndian(crc.value)
        if isZip64 || size >= UInt64(ZipFormat.sentinel32) {
            bytes.appendLittleEndian(size)  // compressed size: stored, the same
            bytes.appendLittleEndian(size)
        } else {
            bytes.appendLittleEndian(UInt32(size))
            bytes.appendLittleEndian(UInt32(size))
        }
        return bytes
    }

    /// Appends the central directory header. The ZIP64 extra field holds, in
    /// the order of APPNOTE 4.5.3, exactly the fields set to 0xFFFFFFFF: both
    /// sizes (when 4 GiB or more, when the local header was ZIP64, or when
    /// forced) and the local header offset (when 4 GiB or more, or when forced).
    func appendCentralRecord(to bytes: inout [UInt8], forcingZip64: Bool) {
        let sizesInZip64 = forcingZip64 || isZip64 || size >= UInt64(ZipFormat.sentinel32)
        let offsetInZip64 = forcingZip64 || headerOffset >= UInt64(ZipFormat.sentinel32)
        var extra: [UInt8] = []
        if sizesInZip64 || offsetInZip64 {
            extra.appendLittleEndian(ZipFormat.zip64ExtraID)
            extra.appendLittleEndian(UInt16((sizesInZip64 ? 16 : 0) + (offsetInZip64 ? 8 : 0)))
            if sizesInZip64 {
                extra.appendLittleEndian(size)  // uncompressed size
                extra.appendLittleEndian(size)  // compressed size
            }
            if offsetInZip64 { extra.appendLittleEndian(headerOffset) }
        }
        appendTimestamp(to: &extra)
        let fileType: UInt32 = kind == .file ? 0o100000 : 0o040000
        let msdosAttributes: UInt32 = kind == .file ? 0 : 0x10
        // No reserveCapacity here: an exact reservation on every append would
        // defeat the array's geometric growth and make the directory quadratic.
        bytes.appendLittleEndian(ZipFormat.centralHeaderSignature)
        bytes.appendLittleEndian(ZipFormat.versionMadeBy)
        bytes.appendLittleEndian(sizesInZip64 || offsetInZip64 ? ZipFormat.versionZip64 : baseVersion)
        bytes.appendLittleEndian(flags)
        bytes.appendLittleEndian(UInt16(0))  // stored
        bytes.appendLittleEndian(modified.time)
        bytes.appendLittleEndian(modified.date)
        bytes.appendLittleEndian(crc.value)
        bytes.appendLittleEndian(sizesInZip64 ? ZipFormat.sentinel32 : UInt32(size))  // compressed size
        bytes.appendLittleEndian(sizesInZip64 ? ZipFormat.sentinel32 : UInt32(size))  // uncompressed size
        bytes.appendLittleEndian(UInt16(name.count))
        bytes.appendLittleEndian(UInt16(extra.count))
        bytes.appendLittleEndian(UInt16(0))  // comment length
        bytes.appendLittleEndian(UInt16(0))  // disk number start
        bytes.appendLittleEndian(UInt16(0))  // internal attributes
        bytes.appendLittleEndian((fileType | UInt32(mode)) << 16 | msdosAttributes)
        bytes.appendLittleEndian(offsetInZip64 ? ZipFormat.sentinel32 : UInt32(headerOffset))
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: extra)
    }
}

extension ZipStreamWriter {
    /// Appends the end records after the central directory: the ZIP64 end of
    /// central directory record and locator when a count, size or offset
    /// needs them (or when forced), then the end of central directory record,
    /// whose too-small fields are set to all ones.
    static func appendEndRecords(
        to bytes: inout [UInt8], entryCount: UInt64, directoryOffset: UInt64, directorySize: UInt64,
        forcingZip64: Bool
    ) {
        let countInZip64 = forcingZip64 || entryCount >= UInt64(ZipFormat.sentinel16)
        let sizeInZip64 = forcingZip64 || directorySize >= UInt64(ZipFormat.sentinel32)
        let offsetInZip64 = forcingZip64 || directoryOffset >= UInt64(ZipFormat.sentinel32)
        if countInZip64 || sizeInZip64 || offsetInZip64 {
            let recordOffset = directoryOffset + directorySize
            bytes.appendLittleEndian(ZipFormat.zip64EndSignature)
            bytes.appendLittleEndian(UInt64(44))  // size of the rest of the record
            bytes.appendLittleEndian(ZipFormat.versionMadeBy)
            bytes.appendLittleEndian(ZipFormat.versionZip64)
            bytes.appendLittleEndian(UInt32(0))  // this disk
            bytes.appendLittleEndian(UInt32(0))  // disk where the central directory starts
            bytes.appendLittleEndian(entryCount)  // entries on this disk
            bytes.appendLittleEndian(entryCount)  // entries in all
            bytes.appendLittleEndian(directorySize)
            bytes.appendLittleEndian(directoryOffset)

            bytes.appendLittleEndian(ZipFormat.zip64LocatorSignature)
            bytes.appendLittleEndian(UInt32(0))  // disk with the ZIP64 end record
            bytes.appendLittleEndian(recordOffset)
            bytes.appendLittleEndian(UInt32(1))  // number of disks
        }
        let count = countInZip64 ? ZipFormat.sentinel16 : UInt16(entryCount)
        bytes.appendLittleEndian(ZipFormat.endSignature)
        bytes.appendLittleEndian(UInt16(0))  // this disk
        bytes.appendLittleEndian(UInt16(0))  // disk where the central directory starts
        bytes.appendLittleEndian(count)  // entries on this disk
        bytes.appendLittleEndian(count)  // entries in all
        bytes.appendLittleEndian(sizeInZip64 ? ZipFormat.sentinel32 : UInt32(directorySize))
        bytes.appendLittleEndian(offsetInZip64 ? ZipFormat.sentinel32 : UInt32(directoryOffset))
        bytes.appendLittleEndian(UInt16(0))  // comment length
    }
}

extension [UInt8] {
    /// Appends `value` in little-endian byte order, as every ZIP field is stored.
    mutating func appendLittleEndian(_ value: some FixedWidthInteger) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
