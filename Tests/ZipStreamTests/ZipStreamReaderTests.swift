import FileshareTestSupport
import Foundation
import Testing
import ZipStream

/// Archives written to real files and read back by Info-ZIP `unzip` and
/// Python's `zipfile`, each test in its own temporary folder.
@Suite("Archives read by unzip and Python's zipfile")
struct ZipStreamReaderTests {
    /// Checks `archive` with `unzip -t`, `unzip -l`, Python's `zipfile` and the
    /// strict inspector; returns Python's report and the inspector.
    @discardableResult
    func checkWithReaders(
        _ archive: String, _ entries: [TestEntry], in folder: TemporaryFolder,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (python: PythonZipfile.Report, inspector: ZipInspector) {
        let tested = try InfoZip.test(archive, in: folder)
        if entries.isEmpty {
            // Info-ZIP warns (status 1) about an archive with no entries.
            #expect(
                (tested.output + tested.errorOutput).contains("zipfile is empty"), "\(tested)",
                sourceLocation: sourceLocation)
        } else {
            #expect(tested.status == 0, "\(tested)", sourceLocation: sourceLocation)
            #expect(tested.output.contains("No errors detected"), "\(tested)", sourceLocation: sourceLocation)
        }
        if !entries.isEmpty {
            let listed = try InfoZip.list(archive, in: folder)
            #expect(listed.result.status == 0, "\(listed.result)", sourceLocation: sourceLocation)
            #expect(listed.total == entries.count, "\(listed.result)", sourceLocation: sourceLocation)
            #expect(listed.names == entries.map(\.storedName), sourceLocation: sourceLocation)
        }
        let report = try PythonZipfile.check(archive, PythonZipfile.expectations(for: entries), in: folder)
        #expect(report.errors == [], sourceLocation: sourceLocation)
        #expect(report.count == entries.count, sourceLocation: sourceLocation)
        let inspector = try ZipInspector(Array(try Data(contentsOf: URL(fileURLWithPath: archive))))
        #expect(inspector.entries.map(\.name) == entries.map(\.storedName), sourceLocation: sourceLocation)
        return (report, inspector)
    }

    /// A mix of files and folders, with times before 1980, after 2038 and odd seconds.
    static let mixedEntries: [TestEntry] = [
        .folder("docs"),
        .file("docs/readme.txt", Array("Hello, ZIP.\n".utf8)),
        .file("docs/empty.txt"),
        .folder("docs/sub/", modified: 1_600_000_000),
        .file("docs/sub/old.bin", [0, 1, 2, 3, 255], modified: 0),
        .file("future.txt", Array("in 2100".utf8), modified: 4_102_444_801),
        TestEntry(
            name: "run.sh", modified: 1_234_567_891, content: Array("#!/bin/sh\necho hi\n".utf8), permissions: 0o755),
        .folder("empty folder", modified: 1_000_000_001),
        .file("top.txt", SeededBytes.bytes(100_000, seed: 7), modified: 1_700_000_000),
    ]

    @Test("an empty archive is the 22-byte end record, and both readers accept it")
    func emptyArchive() throws {
        let folder = try TemporaryFolder()
        let archive = folder("empty.zip")
        let zip = try writeArchive([], to: archive)
        #expect(zip.bytesWritten == 22)
        #expect(zip.entryCount == 0)
        let (report, inspector) = try checkWithReaders(archive, [], in: folder)
        #expect(report.zip64End == false)
        #expect(inspector.entries.isEmpty)
    }

    @Test("one empty file")
    func oneEmptyFile() throws {
        let folder = try TemporaryFolder()
        let archive = folder("one.zip")
        let entries = [TestEntry.file("empty.txt")]
        try writeArchive(entries, to: archive)
        let (report, inspector) = try checkWithReaders(archive, entries, in: folder)
        #expect(report.zip64End == false)
        #expect(report.zip64Entries == 0)
        #expect(inspector.entries.first?.descriptorLength == 16)
        #expect(inspector.entries.first?.localZip64 == false)
    }

    @Test(
        "files and folders, classic and with every ZIP64 structure forced: both readers agree, unzip extracts them",
        arguments: [false, true])
    func filesAndFolders(forceZip64: Bool) throws {
        let folder = try TemporaryFolder()
        let archive = folder("mixed.zip")
        let entries = Self.mixedEntries
        try writeArchive(entries, to: archive, forceZip64: forceZip64)
        let (report, inspector) = try checkWithReaders(archive, entries, in: folder)

        #expect(report.zip64End == forceZip64)
        #expect(report.zip64Entries == (forceZip64 ? entries.count : 0))
        for (found, entry) in zip(inspector.entries, entries) {
            let isFile = entry.kind == .file
            #expect(found.localZip64 == (forceZip64 && isFile), "\(found.name)")
            #expect(found.descriptorLength == (isFile ? (forceZip64 ? 24 : 16) : 0), "\(found.name)")
            #expect(found.centralZip64Fields == (forceZip64 ? 3 : 0), "\(found.name)")
            #expect(found.flags == (isFile ? 0x0808 : 0x0800), "\(found.name)")
            #expect(found.localVersion == (forceZip64 && isFile ? 45 : isFile ? 10 : 20), "\(found.name)")
        }
        if forceZip64 {
            #expect(inspector.endFields == (0xFFFF, 0xFFFF_FFFF, 0xFFFF_FFFF))
        }

        // Extract with unzip: contents, modification times (from the extended
        // timestamp) and permissions come back.
        let destination = folder("out")
        let extracted = try InfoZip.extract(archive, to: destination, in: folder)
        #expect(extracted.status == 0, "\(extracted)")
        for entry in entries {
            let path = destination + "/" + entry.name
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), "\(path)")
            #expect(isDirectory.boolValue == (entry.kind == .directory), "\(path)")
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == entry.mode & 0o7777, "\(path)")
            if entry.kind == .file {
                #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == entry.content, "\(path)")
                if Int32(exactly: entry.modified) != nil {
                    let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970
                    #expect(modified == Double(entry.modified), "\(path)")
                }
            }
        }
    }

    @Test("UTF-8 names come back the same, flagged as UTF-8")
    func utf8Names() throws {
        let folder = try TemporaryFolder()
        let archive = folder("utf8.zip")
        let entries: [TestEntry] = [
            .folder("Été"),
            .file("Été/naïve ☃.txt", Array("snow".utf8)),
            .file("日本語/ファイル.txt", Array("ファイル".utf8)),
            .file("emoji 🎉/😀.txt"),
            .file("Ünïcödé – “quotes” and spaces.md", Array("# title\n".utf8)),
        ]
        try writeArchive(entries, to: archive)
        let (_, inspector) = try checkWithReaders(archive, entries, in: folder)
        #expect(inspector.entries.allSatisfy { $0.flags & 0x0800 != 0 })

        let destination = folder("out")
        #expect(try InfoZip.extract(archive, to: destination, in: folder).status == 0)
        #expect(
            Array(try Data(contentsOf: URL(fileURLWithPath: destination + "/Été/naïve ☃.txt"))) == Array("snow".utf8))
    }

    @Test("a file of a few MiB, in uneven chunks, classic and forced ZIP64", arguments: [false, true])
    func fewMebibytes(forceZip64: Bool) throws {
        let folder = try TemporaryFolder()
        let archive = folder("big.zip")
        var random = SeededBytes(seed: 42)
        let entries: [TestEntry] = [
            .file("before.txt", Array("before".utf8)),
            .file("media/clip.bin", random.bytes(5 << 20 + 12_345)),
            .file("after.txt", Array("after".utf8)),
        ]
        try writeArchive(entries, to: archive, forceZip64: forceZip64, chunkSize: 100_003)
        try checkWithReaders(archive, entries, in: folder)

        let destination = folder("out")
        #expect(try InfoZip.extract(archive, to: destination, in: folder).status == 0)
        #expect(
            Array(try Data(contentsOf: URL(fileURLWithPath: destination + "/media/clip.bin"))) == entries[1].content)
    }

    @Test("files of unknown size are written in ZIP64 form from the local header on; both readers accept it")
    func unknownSizes() throws {
        let folder = try TemporaryFolder()
        let archive = folder("unknown.zip")
        let entries = Self.mixedEntries
        try writeArchive(entries, to: archive, passExpectedSizes: false)
        let (report, inspector) = try checkWithReaders(archive, entries, in: folder)
        #expect(report.zip64End == false)
        for (found, entry) in zip(inspector.entries, entries) {
            #expect(found.localZip64 == (entry.kind == .file), "\(found.name)")
            #expect(found.descriptorLength == (entry.kind == .file ? 24 : 0), "\(found.name)")
            // The central header keeps the sizes in the ZIP64 field, like the local header.
            #expect(found.centralZip64Fields == (entry.kind == .file ? 2 : 0), "\(found.name)")
        }
    }

    @Test("more than 65,535 entries: ZIP64 end records, read by both readers")
    func manyEntries() throws {
        let folder = try TemporaryFolder()
        let archive = folder("many.zip")
        var entries: [TestEntry] = []
        entries.reserveCapacity(70_100)
        for group in 0..<70 {
            entries.append(.folder("g\(group)"))
            for index in 0..<1_000 { entries.append(.file("g\(group)/\(index)")) }
        }
        #expect(entries.count > 65_535)
        let zip = try writeArchive(entries, to: archive)
        #expect(zip.entryCount == UInt64(entries.count))

        let tested = try InfoZip.test(archive, in: folder)
        #expect(tested.status == 0, "\(tested)")
        let listed = try InfoZip.list(archive, in: folder)
        #expect(listed.total == entries.count, "\(listed.result)")
        #expect(listed.names.count == entries.count)
        let report = try PythonZipfile.check(archive, PythonZipfile.expectations(for: entries), in: folder)
        #expect(report.errors == [])
        #expect(report.count == entries.count)
        #expect(report.zip64End)
        #expect(report.zip64Entries == 0)
        let inspector = try ZipInspector(Array(try Data(contentsOf: URL(fileURLWithPath: archive))))
        #expect(inspector.hasZip64End)
        #expect(inspector.endFields.count == 0xFFFF)
        #expect(inspector.entries.count == entries.count)
    }
}
