import FileshareTestSupport
import Foundation
import Testing
import ZipStream

/// Archives with more than 4 GiB of content, written to a real file and read
/// by both readers. They write about 4.3 GB each and take a minute or so:
/// they run only when `ZIPSTREAM_LARGE=1` is set.
@Suite(
    "Archives over 4 GiB (ZIPSTREAM_LARGE=1)",
    .enabled(if: ProcessInfo.processInfo.environment["ZIPSTREAM_LARGE"] == "1"),
    .serialized)
struct LargeArchiveTests {
    static let fourGiB: UInt64 = 1 << 32

    /// Writes `size` bytes of a repeated 1 MiB pattern as the content of the open entry.
    func writeContent(size: UInt64, to out: OutputFile, through zip: inout ZipStreamWriter) throws {
        let pattern = SeededBytes.bytes(1 << 20, seed: 9)
        var remaining = size
        while remaining > 0 {
            let chunk = pattern.prefix(Int(min(remaining, UInt64(pattern.count))))
            zip.update(chunk)
            try out.write(chunk)
            remaining -= UInt64(chunk.count)
        }
    }

    func check(
        _ archive: String, _ expected: [PythonZipfile.Expected], zip64Entries: Int, in folder: TemporaryFolder
    ) throws {
        let tested = try InfoZip.test(archive, in: folder)
        #expect(tested.status == 0, "\(tested)")
        #expect(tested.output.contains("No errors detected"), "\(tested)")
        let listed = try InfoZip.list(archive, in: folder)
        #expect(listed.result.status == 0, "\(listed.result)")
        #expect(listed.names == expected.map(\.name))
        let report = try PythonZipfile.check(archive, expected, in: folder)
        #expect(report.errors == [])
        #expect(report.count == expected.count)
        #expect(report.zip64End)
        #expect(report.zip64Entries == zip64Entries)
    }

    @Test("a file over 4 GiB, then entries that start past 4 GiB")
    func largeFile() throws {
        let folder = try TemporaryFolder()
        let archive = folder("large.zip")
        let bigSize = Self.fourGiB + (1 << 20) + 7
        let out = try OutputFile(path: archive)
        var zip = ZipStreamWriter()
        try out.write(zip.beginEntry(name: "before.txt", modified: 1_700_000_000, expectedSize: 6))
        zip.update(Array("before".utf8))
        try out.write(Array("before".utf8))
        try out.write(zip.endEntry())
        try out.write(zip.beginEntry(name: "big/data.bin", modified: 1_700_000_002, expectedSize: bigSize))
        try writeContent(size: bigSize, to: out, through: &zip)
        let descriptor = try zip.endEntry()
        #expect(descriptor.count == 24)
        try out.write(descriptor)
        try out.write(zip.beginEntry(name: "after.txt", modified: 1_700_000_004, expectedSize: 5))
        zip.update(Array("after".utf8))
        try out.write(Array("after".utf8))
        try out.write(zip.endEntry())
        try out.write(zip.beginEntry(name: "folder", kind: .directory, modified: 1_700_000_006))
        try out.write(zip.endEntry())
        try out.write(zip.finish())
        try out.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: archive)
        #expect((attributes[.size] as? NSNumber)?.uint64Value == zip.bytesWritten)
        #expect(zip.bytesWritten > bigSize)

        try check(
            archive,
            [
                .init(
                    name: "before.txt", isDirectory: false, size: 6, crc: referenceCRC32(Array("before".utf8)),
                    mtime: 1_700_000_000, mode: 0o100644),
                .init(
                    name: "big/data.bin", isDirectory: false, size: bigSize, crc: nil, mtime: 1_700_000_002,
                    mode: 0o100644),
                .init(
                    name: "after.txt", isDirectory: false, size: 5, crc: referenceCRC32(Array("after".utf8)),
                    mtime: 1_700_000_004, mode: 0o100644),
                .init(name: "folder/", isDirectory: true, size: 0, crc: 0, mtime: 1_700_000_006, mode: 0o040755),
            ],
            // The big file for its sizes, the two entries after it for their offsets.
            zip64Entries: 3, in: folder)
    }

    @Test("a file announced small that grows past 4 GiB while it is read")
    func grownFile() throws {
        let folder = try TemporaryFolder()
        let archive = folder("grown.zip")
        let size = Self.fourGiB + 5
        let out = try OutputFile(path: archive)
        var zip = ZipStreamWriter()
        try out.write(zip.beginEntry(name: "grown.bin", modified: 1_700_000_000, expectedSize: 1000))
        try writeContent(size: size, to: out, through: &zip)
        let descriptor = try zip.endEntry()
        #expect(descriptor.count == 24)
        try out.write(descriptor)
        try out.write(zip.beginEntry(name: "tail.txt", modified: 1_700_000_002, expectedSize: 4))
        zip.update(Array("tail".utf8))
        try out.write(Array("tail".utf8))
        try out.write(zip.endEntry())
        try out.write(zip.finish())
        try out.close()

        try check(
            archive,
            [
                .init(
                    name: "grown.bin", isDirectory: false, size: size, crc: nil, mtime: 1_700_000_000,
                    mode: 0o100644),
                .init(
                    name: "tail.txt", isDirectory: false, size: 4, crc: referenceCRC32(Array("tail".utf8)),
                    mtime: 1_700_000_002, mode: 0o100644),
            ],
            zip64Entries: 2, in: folder)
    }
}
