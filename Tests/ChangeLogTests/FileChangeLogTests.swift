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
    static func readAll(_ log: FileChangeLog, after cursor: UInt64? = nil, page: Int = 1000) async throws
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

    @Test("records are numbered one by one and read back as events.md objects with seq, time and origin")
    func appendAndRead() async throws {
        let folder = try TemporaryFolder()
        let log = try Self.open(folder)
        let origin = ChangeOrigin(face: "api", client: "127.0.0.1:5000", user: "alice", method: "PUT")
        #expect(try log.append((1...3).map { Self.entry($0) }).map(\.seq) == [1, 2, 3])
        #expect(try log.append([Self.entry(4, origin: origin)]).map(\.seq) == [4])
        #expect(try log.append([]).isEmpty)
        try await log.flush()
        #expect(log.latest == 4 && log.oldest == 1)
        let records = try await Self.readAll(log)
        #expect(records.map(\.seq) == [1, 2, 3, 4])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(records[3].json)) as? [String: Any])
        #expect(object["seq"] as? Int == 4)
        #expect(object["time"] as? String == "2025-11-24T16:00:00.000Z")
        #expect(object["type"] as? String == "added")
        #expect(object["path"] as? String == "file 4.txt")
        #expect(object["kind"] as? String == "file")
        let madeBy = try #require(object["origin"] as? [String: String])
        #expect(
            madeBy == ["by": "server", "face": "api", "client": "127.0.0.1:5000", "user": "alice", "method": "PUT"])
        #expect(
            records[3].event
                == Change.added(
                    ChangedItem(
                        path: ItemPath("file 4.txt"), id: ItemID(rawValue: 4), kind: .file, size: 4, isWriting: false)
                ).jsonLine)
        #expect(records[0].origin == nil && !records[0].jsonLine.contains("origin"))
        // Paged: `next` is the cursor to go on with.
        guard case .records(let page, let next) = try await log.read(after: 1, limit: 2) else {
            throw Failure("expired")
        }
        #expect(page.map(\.seq) == [2, 3] && next == 3)
        guard case .records(let none, let same) = try await log.read(after: 4, limit: 2) else {
            throw Failure("expired")
        }
        #expect(none.isEmpty && same == 4)
        log.close()
    }

    @Test("numbers go on across a restart, and every record is read back the same from the files")
    func reopen() async throws {
        let folder = try TemporaryFolder()
        var log = try Self.open(folder)
        try log.append(
            (1...5).map {
                Self.entry($0, origin: $0 == 2 ? ChangeOrigin(face: "dav", client: "[::1]:1", method: "MOVE") : nil)
            })
        try await log.flush()
        let before = try await Self.readAll(log)
        log.close()
        log = try Self.open(folder)
        #expect(log.latest == 5)
        #expect(try log.append([Self.entry(6), Self.entry(7)]).map(\.seq) == [6, 7])
        try await log.flush()
        let after = try await Self.readAll(log)
        #expect(after.map(\.seq) == Array(1...7))
        #expect(Array(after.prefix(5)) == before)
        log.close()
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
        let handle = try #require(FileHandle(forWritingAtPath: segment))
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
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        log = try Self.open(folder)
        #expect(log.latest == 2)
        #expect(try await Self.readAll(log).map(\.seq) == [1, 2])
        log.close()
    }

    @Test("readers waiting for records are woken by a durable append, and by cancellation")
    func waiting() async throws {
        let folder = try TemporaryFolder()
        let log = try Self.open(folder)
        let woken = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    await log.waitForRecords(after: 0)
                    return 1
                }
            }
            try log.append([Self.entry(1)])
            return try await group.reduce(0, +)
        }
        #expect(woken == 20)
        #expect(log.latest == 1)
        // Waiting after the newest record waits, until cancelled.
        let waiter = Task { await log.waitForRecords(after: 1) }
        waiter.cancel()
        await waiter.value
        // Closing wakes every reader.
        let closing = Task { await log.waitForRecords(after: 1) }
        log.close()
        await closing.value
        #expect(throws: ChangeLogError.self) { try log.append([Self.entry(2)]) }
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
        let segmentCount = try FileManager.default.contentsOfDirectory(atPath: folder("changes")).filter {
            $0.hasPrefix("seg-")
        }.count
        #expect(segmentCount > 10)
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

    @Test("retention by count drops whole old segments; an older cursor is told to list again")
    func retentionByCount() async throws {
        let folder = try TemporaryFolder()
        let options = FileChangeLog.Options(
            retention: ChangeLogRetention(maxRecords: 500), segmentBytes: 8 * 1024, memoryRecords: 50)
        let log = try Self.open(folder, options: options)
        for batch in 0..<30 {
            try log.append((0..<50).map { Self.entry(batch * 50 + $0) })
            try await log.flush()
        }
        #expect(log.latest == 1500)
        let oldest = log.oldest
        #expect(oldest > 1 && 1500 - oldest + 1 >= 500, "oldest \(oldest)")
        guard case .expired(let said, let latest) = try await log.read(after: 0, limit: 10) else {
            throw Failure("not expired")
        }
        #expect(said == oldest && latest == 1500)
        guard case .expired = try await log.read(after: oldest - 2, limit: 10) else { throw Failure("not expired") }
        // Right at the edge: the reader has everything before the oldest.
        guard case .records(let page, _) = try await log.read(after: oldest - 1, limit: 10) else {
            throw Failure("expired")
        }
        #expect(page.first?.seq == oldest)
        #expect(try await Self.readAll(log).map(\.seq) == Array(oldest...1500))
        // A cursor from the future (another log) must list again too.
        guard case .expired = try await log.read(after: 99_999, limit: 10) else { throw Failure("not expired") }
        log.close()
    }

    @Test("retention by age, on an injected clock")
    func retentionByAge() async throws {
        let folder = try TemporaryFolder()
        let day: Int64 = 86_400 * 1_000_000_000
        let now = Atomic<Int64>(100 * day)
        let options = FileChangeLog.Options(
            retention: ChangeLogRetention(maxAgeSeconds: 7 * 86_400), segmentBytes: 4 * 1024, memoryRecords: 10,
            now: { now.load(ordering: .relaxed) })
        var log = try Self.open(folder, options: options)
        // Ten days of changes, 40 a day.
        for dayIndex in 0..<10 {
            try log.append(
                (0..<40).map { Self.entry(dayIndex * 40 + $0, time: (90 + Int64(dayIndex)) * day + Int64($0)) })
            try await log.flush()
        }
        log.close()
        // A restart reads the segments' times from the files.
        log = try Self.open(folder, options: options)
        try await log.trim()
        let oldest = log.oldest
        guard case .records(let first, _) = try await log.read(after: oldest - 1, limit: 1) else {
            throw Failure("expired")
        }
        let kept = try #require(first.first)
        // Nothing younger than seven days went; what is older went, but for
        // what shares a segment with younger records.
        #expect(kept.time <= 93 * day && kept.time >= 91 * day, "kept from day \(kept.time / day)")
        #expect(oldest > 1)
        now.store(1000 * day, ordering: .relaxed)
        try await log.trim()
        #expect(
            log.oldest == FileChangeLog.segmentFirstSeqs(in: folder("changes")).last!, "only the newest segment stays")
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

    @Test("appends from many tasks at once: numbers are unique, gapless and in append order in the files")
    func concurrentAppends() async throws {
        let folder = try TemporaryFolder()
        let log = try Self.open(folder, options: .init(segmentBytes: 64 * 1024, memoryRecords: 64))
        try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var given: [UInt64] = []
                    for index in 0..<250 {
                        let records = try log.append([Self.entry(task * 1000 + index)])
                        given.append(try #require(records.first).seq)
                        if index % 50 == 0 { try await log.flush() }
                    }
                    return given
                }
            }
            var all: [UInt64] = []
            for try await given in group { all += given }
            #expect(all.sorted() == Array(1...2000))
        }
        try await log.flush()
        #expect(try await Self.readAll(log, page: 500).map(\.seq) == Array(1...2000))
        log.close()
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
