import FileshareTestSupport
import Foundation
import Testing
import ZipStream

/// The writer in memory: the calls it refuses, the ZIP64 choices it makes,
/// and the exact bytes of its records.
@Suite("ZipStreamWriter in memory")
struct ZipStreamWriterTests {
    /// Drives a writer through `entries` in memory.
    func archive(
        _ entries: [TestEntry], forceZip64: Bool = false, chunkSize: Int = 1000,
        expectedSize: (TestEntry) -> UInt64? = {
            UInt64($0.content.count)
        }
    ) throws -> [UInt8] {
        var zip = ZipStreamWriter(forceZip64: forceZip64)
        var bytes: [UInt8] = []
        for entry in entries {
            bytes += try zip.beginEntry(
                name: entry.name, kind: entry.kind, modified: entry.modified, expectedSize: expectedSize(entry),
                permissions: entry.permissions)
            var start = 0
            while start < entry.content.count {
                let chunk = entry.content[start..<min(start + chunkSize, entry.content.count)]
                zip.update(chunk)
                bytes += chunk
                start += chunk.count
            }
            bytes += try zip.endEntry()
        }
        bytes += try zip.finish()
        #expect(zip.bytesWritten == UInt64(bytes.count))
        return bytes
    }

    @Test("calls out of order throw invalidState, and the writer stays usable")
    func callOrder() throws {
        var zip = ZipStreamWriter()
        #expect(throws: ZipStreamError.self) { _ = try zip.endEntry() }
        _ = try zip.beginEntry(name: "a.txt", modified: 0, expectedSize: 3)
        let error = #expect(throws: ZipStreamError.self) { _ = try zip.beginEntry(name: "b.txt", modified: 0) }
        #expect(error?.code == .invalidState)
        #expect(error?.entryName == "b.txt")
        #expect(throws: ZipStreamError.self) { _ = try zip.finish() }
        zip.update([1, 2, 3])
        #expect(try zip.endEntry().count == 16)
        #expect(throws: ZipStreamError.self) { _ = try zip.endEntry() }
        _ = try zip.finish()
        #expect(zip.entryCount == 1)
        let afterFinish = #expect(throws: ZipStreamError.self) { _ = try zip.beginEntry(name: "c.txt", modified: 0) }
        #expect(afterFinish?.code == .invalidState)
        #expect(throws: ZipStreamError.self) { _ = try zip.finish() }
    }

    @Test("an invalid name leaves no entry open and writes nothing")
    func invalidNameWritesNothing() throws {
        var zip = ZipStreamWriter()
        let error = #expect(throws: ZipStreamError.self) { _ = try zip.beginEntry(name: "../evil", modified: 0) }
        #expect(error?.code == .invalidName)
        #expect(zip.bytesWritten == 0)
        _ = try zip.beginEntry(name: "fine", modified: 0)
        _ = try zip.endEntry()
        _ = try zip.finish()
        #expect(zip.entryCount == 1)
    }

    @Test(
        "the local header is ZIP64 when the size is unknown, 3 GiB or more, or forced",
        arguments: [
            (UInt64?.none, false, true), (UInt64(0), false, false), (UInt64(3 << 30) - 1, false, false),
            (UInt64(3 << 30), false, true), (UInt64(5) << 30, false, true), (UInt64(10), true, true),
        ])
    func zip64Choice(expectedSize: UInt64?, force: Bool, isZip64: Bool) throws {
        var zip = ZipStreamWriter(forceZip64: force)
        let header = try zip.beginEntry(name: "f", modified: 1_700_000_000, expectedSize: expectedSize)
        // 30 fixed bytes, the name, then the extra fields: ZIP64 (4 + 16) first, then the timestamp (4 + 5).
        #expect(header.count == 30 + 1 + (isZip64 ? 20 : 0) + 9)
        #expect(Array(header[4..<6]) == (isZip64 ? [45, 0] : [10, 0]))
        #expect(
            Array(header[18..<26]) == (isZip64 ? [UInt8](repeating: 0xFF, count: 8) : [UInt8](repeating: 0, count: 8)))
        if isZip64 {
            #expect(Array(header[31..<35]) == [0x01, 0x00, 16, 0])
            #expect(Array(header[35..<51]) == [UInt8](repeating: 0, count: 16))
        }
        zip.update([UInt8](repeating: 7, count: 10))
        let descriptor = try zip.endEntry()
        #expect(descriptor.count == (isZip64 ? 24 : 16))
        #expect(Array(descriptor[0..<4]) == [0x50, 0x4B, 0x07, 0x08])
    }

    @Test("the exact bytes of a one-file archive")
    func exactBytes() throws {
        let bytes = try archive([.file("a", Array("abc".utf8), modified: 1_700_000_001)])
        let crc: [UInt8] = [0xC2, 0x41, 0x24, 0x35]  // CRC-32 of "abc", 0x352441C2
        // 2023-11-14 22:13:21 UTC, in this machine's time zone, to the even second below.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: 1_700_000_001))
        let dosTime = UInt16(parts.hour! << 11 | parts.minute! << 5 | parts.second! / 2)
        let dosDate = UInt16((parts.year! - 1980) << 9 | parts.month! << 5 | parts.day!)
        let time: [UInt8] = [UInt8(dosTime & 0xFF), UInt8(dosTime >> 8)]
        let date: [UInt8] = [UInt8(dosDate & 0xFF), UInt8(dosDate >> 8)]
        let mtime: [UInt8] = [0x01, 0xF1, 0x53, 0x65]  // 1_700_000_001
        let local: [UInt8] =
            [0x50, 0x4B, 0x03, 0x04, 10, 0, 0x08, 0x08, 0, 0] + time + date
            + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9, 0, UInt8(ascii: "a")]
            + [0x55, 0x54, 5, 0, 1] + mtime
        let descriptor: [UInt8] = [0x50, 0x4B, 0x07, 0x08] + crc + [3, 0, 0, 0, 3, 0, 0, 0]
        let central: [UInt8] =
            [0x50, 0x4B, 0x01, 0x02, 63, 3, 10, 0, 0x08, 0x08, 0, 0] + time + date + crc
            + [3, 0, 0, 0, 3, 0, 0, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0xA4, 0x81]  // external attributes: 0o100644 << 16
            + [0, 0, 0, 0, UInt8(ascii: "a")] + [0x55, 0x54, 5, 0, 1] + mtime
        let end: [UInt8] =
            [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0, 1, 0, 1, 0] + [UInt8(central.count), 0, 0, 0]
            + [UInt8(local.count + 3 + descriptor.count), 0, 0, 0, 0, 0]
        #expect(bytes == local + Array("abc".utf8) + descriptor + central + end)
    }

    @Test("forced ZIP64 end records: the record, then the locator pointing at it, then the end record of all ones")
    func forcedEndRecords() throws {
        let bytes = try archive([.folder("d")], forceZip64: true)
        let inspector = try ZipInspector(bytes)
        #expect(inspector.hasZip64End)
        #expect(inspector.endFields == (0xFFFF, 0xFFFF_FFFF, 0xFFFF_FFFF))
        // Central header of the folder: sizes and offset all in the ZIP64 field.
        #expect(inspector.entries.first?.centralZip64Fields == 3)
        #expect(inspector.entries.first?.externalAttributes == UInt32(0o040755) << 16 | 0x10)
        #expect(inspector.entries.first?.descriptorLength == 0)
    }

    @Test("the output does not depend on how the content is split into chunks")
    func chunkingIsInvisible() throws {
        var random = SeededBytes(seed: 3)
        let entries: [TestEntry] = [.file("x", random.bytes(10_000)), .folder("d"), .file("d/y", random.bytes(333))]
        let whole = try archive(entries, chunkSize: 1 << 20)
        for chunkSize in [1, 7, 16, 17, 4096] {
            #expect(try archive(entries, chunkSize: chunkSize) == whole)
        }
        #expect(try ZipInspector(whole).entries.count == 3)
    }

    @Test("a Date gives the same header as its whole seconds; times out of range are clamped or left out")
    func modificationTimes() throws {
        var zip = ZipStreamWriter()
        let fromDate = try zip.beginEntry(name: "a", modified: Date(timeIntervalSince1970: 1_700_000_001.9))
        _ = try zip.endEntry()
        var other = ZipStreamWriter()
        let fromSeconds = try other.beginEntry(name: "a", modified: 1_700_000_001)
        #expect(fromDate == fromSeconds)

        // Before 1970 (negative): DOS 1980-01-01, Unix time kept.
        var early = ZipStreamWriter()
        let earlyHeader = try early.beginEntry(name: "a", modified: -86_400, expectedSize: 0)
        #expect(Array(earlyHeader[10..<14]) == [0, 0, 0x21, 0])
        #expect(earlyHeader.count == 30 + 1 + 9)
        // Past 2107: DOS 2107-12-31 23:59:58, no Unix time (it does not fit in 32 bits).
        var late = ZipStreamWriter()
        let lateHeader = try late.beginEntry(name: "a", modified: 5_000_000_000, expectedSize: 0)
        #expect(Array(lateHeader[10..<14]) == [0x7D, 0xBF, 0x9F, 0xFF])
        #expect(lateHeader.count == 30 + 1)
        for extreme in [Date.distantFuture, .distantPast, Date(timeIntervalSince1970: .greatestFiniteMagnitude)] {
            var writer = ZipStreamWriter()
            #expect(try writer.beginEntry(name: "a", modified: extreme, expectedSize: 0).count == 30 + 1)
        }
        var writer = ZipStreamWriter()
        #expect(try writer.beginEntry(name: "a", modified: Int64.max, expectedSize: 0).count == 30 + 1)
    }
}
