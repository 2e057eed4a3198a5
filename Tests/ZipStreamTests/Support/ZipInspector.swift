import ZipStream

/// A strict reader of a whole archive's structure, stricter than the
/// readers in the wild: every record where the others say it is, every
/// ZIP64 field exactly where APPNOTE.TXT puts it, local headers, data
/// descriptors and central headers agreeing, entries back to back.
struct ZipInspector {
    /// An entry as the inspector found it.
    struct Entry {
        var name: String
        var flags: UInt16
        var crc: UInt32
        var size: UInt64
        var headerOffset: UInt64
        /// "Version needed to extract" in the local header.
        var localVersion: UInt16
        /// "Version needed to extract" in the central header.
        var centralVersion: UInt16
        /// Whether the local header carries the ZIP64 extra field.
        var localZip64: Bool
        /// How many 8-byte fields the central ZIP64 extra field holds (0 when absent).
        var centralZip64Fields: Int
        /// 0 (none), 16 or 24 bytes.
        var descriptorLength: Int
        /// The Unix time of the extended timestamp field, in the central header.
        var unixTime: Int32?
        var externalAttributes: UInt32
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private(set) var entries: [Entry] = []
    /// Whether the archive ends with the ZIP64 end of central directory record and locator.
    private(set) var hasZip64End = false
    /// The end of central directory record's entry count, size and offset fields.
    private(set) var endFields: (count: UInt16, size: UInt32, offset: UInt32) = (0, 0, 0)

    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        try inspect()
    }

    private func fail(_ message: String) -> Failure { Failure(description: message) }

    private func read<T: FixedWidthInteger>(_: T.Type, at offset: Int) throws -> T {
        guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else {
            throw fail("read of \(T.self) at \(offset) past the end (\(bytes.count))")
        }
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    /// Splits an extra field into (id, data), requiring it to be exactly covered.
    private func extraFields(at start: Int, length: Int) throws -> [(id: UInt16, data: ArraySlice<UInt8>)] {
        var fields: [(UInt16, ArraySlice<UInt8>)] = []
        var offset = start
        while offset < start + length {
            let id = try read(UInt16.self, at: offset)
            let size = Int(try read(UInt16.self, at: offset + 2))
            guard offset + 4 + size <= start + length else { throw fail("extra field \(id) overruns") }
            fields.append((id, bytes[(offset + 4)..<(offset + 4 + size)]))
            offset += 4 + size
        }
        return fields
    }

    private static func little<T: FixedWidthInteger>(_ slice: ArraySlice<UInt8>, _: T.Type) -> T {
        slice.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(as: T.self)) }
    }

    private mutating func inspect() throws {
        // End of central directory record, with no comment.
        let endOffset = bytes.count - 22
        guard endOffset >= 0, try read(UInt32.self, at: endOffset) == 0x0605_4B50 else {
            throw fail("no end of central directory record at the end")
        }
        guard try read(UInt16.self, at: endOffset + 20) == 0 else { throw fail("unexpected comment") }
        guard try read(UInt16.self, at: endOffset + 4) == 0, try read(UInt16.self, at: endOffset + 6) == 0 else {
            throw fail("disk numbers are not 0")
        }
        let count16 = try read(UInt16.self, at: endOffset + 8)
        guard try read(UInt16.self, at: endOffset + 10) == count16 else { throw fail("entry counts differ") }
        let size32 = try read(UInt32.self, at: endOffset + 12)
        let offset32 = try read(UInt32.self, at: endOffset + 16)
        endFields = (count16, size32, offset32)

        var count = UInt64(count16)
        var directorySize = UInt64(size32)
        var directoryOffset = UInt64(offset32)
        var directoryEnd = endOffset
        let locatorOffset = endOffset - 20
        if locatorOffset >= 0, try read(UInt32.self, at: locatorOffset) == 0x0706_4B50 {
            hasZip64End = true
            guard try read(UInt32.self, at: locatorOffset + 4) == 0, try read(UInt32.self, at: locatorOffset + 16) == 1
            else { throw fail("ZIP64 locator: disk fields") }
            let recordOffset = Int(try read(UInt64.self, at: locatorOffset + 8))
            guard recordOffset + 56 == locatorOffset else {
                throw fail("ZIP64 end record not right before the locator")
            }
            guard try read(UInt32.self, at: recordOffset) == 0x0606_4B50 else {
                throw fail("ZIP64 end record signature")
            }
            guard try read(UInt64.self, at: recordOffset + 4) == 44 else { throw fail("ZIP64 end record size field") }
            guard try read(UInt16.self, at: recordOffset + 14) >= 45 else { throw fail("ZIP64 end record version") }
            guard try read(UInt32.self, at: recordOffset + 16) == 0, try read(UInt32.self, at: recordOffset + 20) == 0
            else { throw fail("ZIP64 end record disk fields") }
            let count64 = try read(UInt64.self, at: recordOffset + 24)
            guard try read(UInt64.self, at: recordOffset + 32) == count64 else { throw fail("ZIP64 counts differ") }
            let size64 = try read(UInt64.self, at: recordOffset + 40)
            let offset64 = try read(UInt64.self, at: recordOffset + 48)
            guard count16 == 0xFFFF || UInt64(count16) == count64, size32 == 0xFFFF_FFFF || UInt64(size32) == size64,
                offset32 == 0xFFFF_FFFF || UInt64(offset32) == offset64
            else { throw fail("end record fields disagree with the ZIP64 end record") }
            guard count16 == 0xFFFF || size32 == 0xFFFF_FFFF || offset32 == 0xFFFF_FFFF else {
                throw fail("ZIP64 end record present but no end record field is 0xFFFF or 0xFFFFFFFF")
            }
            (count, directorySize, directoryOffset) = (count64, size64, offset64)
            directoryEnd = recordOffset
        } else if count16 == 0xFFFF || size32 == 0xFFFF_FFFF || offset32 == 0xFFFF_FFFF {
            throw fail("end record field set to all ones without ZIP64 end records")
        }
        guard directoryOffset + directorySize == UInt64(directoryEnd) else {
            throw fail("central directory does not end where the end records start")
        }

        // Central directory.
        var offset = Int(directoryOffset)
        for _ in 0..<count {
            guard try read(UInt32.self, at: offset) == 0x0201_4B50 else {
                throw fail("central header signature at \(offset)")
            }
            let centralVersion = try read(UInt16.self, at: offset + 6)
            let flags = try read(UInt16.self, at: offset + 8)
            guard try read(UInt16.self, at: offset + 10) == 0 else { throw fail("method is not stored") }
            let time = try read(UInt16.self, at: offset + 12)
            let date = try read(UInt16.self, at: offset + 14)
            let crc = try read(UInt32.self, at: offset + 16)
            let compressed32 = try read(UInt32.self, at: offset + 20)
            let uncompressed32 = try read(UInt32.self, at: offset + 24)
            let nameLength = Int(try read(UInt16.self, at: offset + 28))
            let extraLength = Int(try read(UInt16.self, at: offset + 30))
            guard try read(UInt16.self, at: offset + 32) == 0, try read(UInt16.self, at: offset + 34) == 0 else {
                throw fail("central comment or disk number")
            }
            let external = try read(UInt32.self, at: offset + 38)
            let offset32 = try read(UInt32.self, at: offset + 42)
            let name = String(decoding: bytes[(offset + 46)..<(offset + 46 + nameLength)], as: UTF8.self)
            let extras = try extraFields(at: offset + 46 + nameLength, length: extraLength)

            var uncompressed = UInt64(uncompressed32)
            var compressed = UInt64(compressed32)
            var headerOffset = UInt64(offset32)
            let expectedZip64Fields = [uncompressed32, compressed32, offset32].filter { $0 == 0xFFFF_FFFF }.count
            let zip64 = extras.filter { $0.id == 0x0001 }
            guard zip64.count <= 1 else { throw fail("\(name): two ZIP64 extra fields") }
            if let field = zip64.first?.data {
                guard field.count == 8 * expectedZip64Fields else {
                    throw fail("\(name): central ZIP64 field of \(field.count) bytes for \(expectedZip64Fields) fields")
                }
                var cursor = field.startIndex
                func next() -> UInt64 {
                    defer { cursor += 8 }
                    return Self.little(field[cursor..<(cursor + 8)], UInt64.self)
                }
                if uncompressed32 == 0xFFFF_FFFF { uncompressed = next() }
                if compressed32 == 0xFFFF_FFFF { compressed = next() }
                if offset32 == 0xFFFF_FFFF { headerOffset = next() }
                guard centralVersion >= 45 else { throw fail("\(name): ZIP64 with version \(centralVersion)") }
            } else if expectedZip64Fields > 0 {
                throw fail("\(name): field set to 0xFFFFFFFF without a ZIP64 extra field")
            }
            guard compressed == uncompressed else { throw fail("\(name): stored sizes differ") }
            var unixTime: Int32?
            if let timestamp = extras.first(where: { $0.id == 0x5455 })?.data {
                guard timestamp.count == 5, timestamp.first == 1 else { throw fail("\(name): extended timestamp") }
                unixTime = Self.little(timestamp.dropFirst(), Int32.self)
            }
            let entry = Entry(
                name: name, flags: flags, crc: crc, size: uncompressed, headerOffset: headerOffset,
                localVersion: 0, centralVersion: centralVersion, localZip64: false,
                centralZip64Fields: expectedZip64Fields, descriptorLength: 0, unixTime: unixTime,
                externalAttributes: external)
            entries.append(try checkLocal(entry, time: time, date: date))
            offset += 46 + nameLength + extraLength
        }
        guard offset == directoryEnd else { throw fail("central directory size does not match its headers") }

        // Entries back to back from the start, up to the central directory.
        var expected: UInt64 = 0
        for entry in entries {
            guard entry.headerOffset == expected else { throw fail("\(entry.name): not where the previous entry ends") }
            let local = Int(entry.headerOffset)
            let nameLength = UInt64(try read(UInt16.self, at: local + 26))
            let extraLength = UInt64(try read(UInt16.self, at: local + 28))
            expected = entry.headerOffset + 30 + nameLength + extraLength + entry.size + UInt64(entry.descriptorLength)
        }
        guard expected == directoryOffset else { throw fail("the last entry does not end at the central directory") }
    }

    /// Checks the local header and data descriptor of `entry` against its
    /// central header; returns it with what the local header says.
    private func checkLocal(_ entry: Entry, time: UInt16, date: UInt16) throws -> Entry {
        var entry = entry
        let offset = Int(entry.headerOffset)
        let name = entry.name
        guard try read(UInt32.self, at: offset) == 0x0403_4B50 else { throw fail("\(name): local header signature") }
        entry.localVersion = try read(UInt16.self, at: offset + 4)
        guard try read(UInt16.self, at: offset + 6) == entry.flags else { throw fail("\(name): flags differ") }
        guard try read(UInt16.self, at: offset + 8) == 0 else { throw fail("\(name): local method") }
        guard try read(UInt16.self, at: offset + 10) == time, try read(UInt16.self, at: offset + 12) == date else {
            throw fail("\(name): local date and time differ")
        }
        let crc = try read(UInt32.self, at: offset + 14)
        let compressed = try read(UInt32.self, at: offset + 18)
        let uncompressed = try read(UInt32.self, at: offset + 22)
        let nameLength = Int(try read(UInt16.self, at: offset + 26))
        let extraLength = Int(try read(UInt16.self, at: offset + 28))
        guard String(decoding: bytes[(offset + 30)..<(offset + 30 + nameLength)], as: UTF8.self) == name else {
            throw fail("\(name): local name differs")
        }
        let extras = try extraFields(at: offset + 30 + nameLength, length: extraLength)
        let zip64 = extras.filter { $0.id == 0x0001 }
        entry.localZip64 = !zip64.isEmpty
        if let field = zip64.first?.data {
            // APPNOTE 4.5.3: in a local header, both sizes, and only with both fields all ones.
            guard zip64.count == 1, field.count == 16, compressed == 0xFFFF_FFFF, uncompressed == 0xFFFF_FFFF else {
                throw fail("\(name): local ZIP64 extra field")
            }
            guard entry.localVersion >= 45 else {
                throw fail("\(name): local ZIP64 with version \(entry.localVersion)")
            }
        } else if compressed == 0xFFFF_FFFF || uncompressed == 0xFFFF_FFFF {
            throw fail("\(name): local size all ones without ZIP64 extra field")
        }
        let dataStart = offset + 30 + nameLength + extraLength
        let dataEnd = dataStart + Int(entry.size)
        guard dataEnd <= bytes.count else { throw fail("\(name): data past the end") }
        var actual = CRC32()
        bytes.withUnsafeBytes { actual.update(UnsafeRawBufferPointer(rebasing: $0[dataStart..<dataEnd])) }
        guard actual.value == entry.crc else { throw fail("\(name): data CRC differs from the central header") }

        if entry.flags & 0x0008 != 0 {
            guard crc == 0 else { throw fail("\(name): CRC in the local header with bit 3") }
            if !entry.localZip64 {
                guard compressed == 0, uncompressed == 0 else {
                    throw fail("\(name): sizes in the local header with bit 3")
                }
            }
            guard try read(UInt32.self, at: dataEnd) == 0x0807_4B50 else {
                throw fail("\(name): data descriptor signature")
            }
            guard try read(UInt32.self, at: dataEnd + 4) == entry.crc else { throw fail("\(name): descriptor CRC") }
            if entry.localZip64 {
                guard try read(UInt64.self, at: dataEnd + 8) == entry.size,
                    try read(UInt64.self, at: dataEnd + 16) == entry.size
                else { throw fail("\(name): ZIP64 descriptor sizes") }
                entry.descriptorLength = 24
            } else {
                guard try read(UInt32.self, at: dataEnd + 8) == UInt32(entry.size),
                    try read(UInt32.self, at: dataEnd + 12) == UInt32(entry.size)
                else { throw fail("\(name): descriptor sizes") }
                entry.descriptorLength = 16
            }
        } else {
            guard crc == entry.crc, UInt64(uncompressed) == entry.size, UInt64(compressed) == entry.size else {
                throw fail("\(name): local CRC or sizes differ without bit 3")
            }
        }
        return entry
    }
}
