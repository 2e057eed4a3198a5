import FileWatching
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import ChangeLog

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The change log on disk")
struct FileChangeLogTests {
    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    static func entry(_ index: Int, time: Int64 = 1_764_000_000_000_000_000, origin: ChangeOrigin? = nil)
        -> ChangeLogEntry
    {
        ChangeLogEntry(
            .added(
                ChangedItem(
                    path: ItemPath("file \(index).txt"), id: ItemID(rawValue: UInt64(index)), kind: .file,
                    size: Int64(index), isWriting: false)),
            time: time, origin: origin)
    }

    static func open(
        _ folder: TemporaryFolder, mode: FileChangeLog.Mode = .writing, options: FileChangeLog.Options = .init()
    )
        throws -> FileChangeLog
    {
        try FileChangeLog(folder: folder("changes"), mode: mode, options: options, logger: logger)
    }

    /// Every record after `cursor`, read page by page.
    static func readAll(_ log: any ChangeLog, after cursor: UInt64? = nil, page: Int = 1000) async throws
        -> [ChangeRecord]
    {
        var records: [ChangeRecord] = []
        var cursor = cursor
        while true {
            guard case .records(let found, let next) = try await log.read(after: cursor, limit: page) else {
                Issue.record("the log said the cursor expired")
                return records
            }
            if found.isEmpty { return records }
            records += found
            cursor = next
        }
    }

    @Test("a torn tail after a crash is cut back to the last whole record; numbering goes on from there")
    func tornTail() async throws {
        let folder = try TemporaryFolder()
        var log = try Self.open(folder)
        try log.append((1...5).map { Self.entry($0) })
        try await log.flush()
        log.close()
        let segment = folder("changes") + "/" + LogSegment.fileName(firstSeq: 1)
        let whole = try #require(FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        // Half of a sixth record, as a crash in the middle of a write leaves it.
        var sixth: [UInt8] = []
        RecordCodec.encode(ChangeRecord(seq: 6, entry: Self.entry(6)), into: &sixth)
        let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(sixth.prefix(sixth.count / 2)))
        try handle.close()
        // A reader leaves the file as it is.
        let reader = try Self.open(folder, mode: .reading)
        #expect(reader.latest == 5)
        #expect(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int == whole + sixth.count / 2)
        log = try Self.open(folder)
        #expect(log.latest == 5)
        #expect(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int == whole)
        #expect(try log.append([Self.entry(60)]).map(\.seq) == [6])
        try await log.flush()
        let records = try await Self.readAll(log)
        #expect(records.map(\.seq) == Array(1...6))
        #expect(records.last?.event.contains("file 60.txt") == true)
        log.close()
    }

    @Test("a damaged record ends what is trusted: the log goes on from the record before it")
    func damagedRecord() async throws {
        let folder = try TemporaryFolder()
        var log = try Self.open(folder)
        try log.append((1...4).map { Self.entry($0) })
        try await log.flush()
        log.close()
        let segment = folder("changes") + "/" + LogSegment.fileName(firstSeq: 1)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
        var frames: [UInt8] = []
        for seq in 1...2 { RecordCodec.encode(ChangeRecord(seq: UInt64(seq), entry: Self.entry(seq)), into: &frames) }
        bytes[RecordCodec.headerSize + frames.count + 20] ^= 0xFF  // inside the third record's body
        try writeFile(Data(bytes), to: segment)
        log = try Self.open(folder)
        #expect(log.latest == 2)
        #expect(try await Self.readAll(log).map(\.seq) == [1, 2])
        log.close()
    }

    @Test("many segments: reads cross them from the files, by checkpoints, in order")
    func segments() async throws {
        let folder = try TemporaryFolder()
        let options = FileChangeLog.Options(segmentBytes: 16 * 1024, memoryRecords: 100)
        var log = try Self.open(folder, options: options)
        for batch in 0..<40 {
            try log.append((0..<50).map { Self.entry(batch * 50 + $0) })
            if batch % 7 == 0 { try await log.flush() }
        }
        try await log.flush()
        #expect(log.latest == 2000)
        // However many records the writer took per write, no segment passes its size.
        let sizes = try Self.segmentSizes(folder)
        #expect(sizes.allSatisfy { $0 <= 16 * 1024 }, "\(sizes)")
        #expect(sizes.count >= sizes.reduce(0, +) / (16 * 1024))
        #expect(try await Self.readAll(log, page: 77).map(\.seq) == Array(1...2000))
        // From the middle of an old segment, twice (the second time by checkpoint).
        for _ in 0..<2 {
            guard case .records(let page, _) = try await log.read(after: 1234, limit: 10) else {
                throw Failure("expired")
            }
            #expect(page.map(\.seq) == Array(1235...1244))
        }
        log.close()
        log = try Self.open(folder, options: options)
        #expect(try await Self.readAll(log, after: 999, page: 333).map(\.seq) == Array(1000...2000))
        log.close()
    }

    /// The sizes of the log's segment files, oldest first.
    static func segmentSizes(_ folder: TemporaryFolder) throws -> [Int] {
        try FileManager.default.contentsOfDirectory(atPath: folder("changes")).filter { $0.hasPrefix("seg-") }.sorted()
            .map {
                try #require(FileManager.default.attributesOfItem(atPath: folder("changes") + "/" + $0)[.size] as? Int)
            }
    }

    @Test("one append larger than a segment is split across segments; the count bound drops what it no longer needs")
    func largeAppend() async throws {
        let folder = try TemporaryFolder()
        let options = FileChangeLog.Options(
            retention: ChangeLogRetention(maxRecords: 50), segmentBytes: 4096, memoryRecords: 16)
        var log = try Self.open(folder, options: options)
        // As the observer hands over a burst: one append of 400 records.
        try log.append((1...400).map { Self.entry($0) })
        try await log.flush()
        #expect(log.latest == 400)
        let oldest = log.oldest
        // At least 50 kept, and no more than a segment's worth beyond them.
        #expect(oldest > 1 && 400 - oldest + 1 >= 50, "oldest \(oldest)")
        let sizes = try Self.segmentSizes(folder)
        #expect(sizes.allSatisfy { $0 <= 4096 }, "\(sizes)")
        #expect(sizes.count <= 4, "\(sizes.count) segments kept for 50 records")
        #expect(try await Self.readAll(log, after: oldest - 1).map(\.seq) == Array(oldest...400))
        // A record larger than a segment has one of its own.
        let big = ChangeLogEntry(
            .added(
                ChangedItem(
                    path: ItemPath(String(repeating: "n", count: 6000)), id: ItemID(rawValue: 9999), kind: .file,
                    size: 1, isWriting: false)),
            time: 1_764_000_000_000_000_000, origin: nil)
        try log.append([Self.entry(401), big, Self.entry(403)])
        try await log.flush()
        #expect(try Self.segmentSizes(folder).filter { $0 > 4096 }.count == 1)
        log.close()
        log = try Self.open(folder, options: options)
        let reopened = try await Self.readAll(log, after: log.oldest - 1)
        #expect(reopened.map(\.seq) == Array(log.oldest...403))
        #expect(reopened.first { $0.seq == 402 }?.event.contains(String(repeating: "n", count: 6000)) == true)
        log.close()
    }

    @Test("one writer at a time; readers beside it see what is durable")
    func oneWriter() async throws {
        let folder = try TemporaryFolder()
        let log = try Self.open(folder)
        try log.append([Self.entry(1), Self.entry(2)])
        try await log.flush()
        let busy = #expect(throws: ChangeLogError.self) { _ = try Self.open(folder) }
        #expect(busy?.code == .busy && busy?.message.contains("another fileshare process") == true)
        let reader = try Self.open(folder, mode: .reading)
        #expect(reader.latest == 2)
        guard case .records(let records, _) = try reader.readNow(after: nil, limit: 10) else {
            throw Failure("expired")
        }
        #expect(records.count == 2)
        #expect(throws: ChangeLogError.self) { try reader.append([Self.entry(3)]) }
        log.close()
        let missing = #expect(throws: ChangeLogError.self) { _ = try Self.open(try TemporaryFolder(), mode: .reading) }
        #expect(missing?.code == .notFound)
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension FileChangeLog {
    /// The first numbers of the segment files in a folder, oldest first.
    static func segmentFirstSeqs(in folder: String) -> [UInt64] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).compactMap(
            LogSegment.firstSeq(fileName:)
        ).sorted()
    }
}
