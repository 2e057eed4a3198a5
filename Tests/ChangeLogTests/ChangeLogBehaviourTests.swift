import FileWatching
import FileshareTestSupport
import Foundation
import Logging
import SharedState
import Synchronization
import Testing

@testable import ChangeLog

/// The implementations of ``ChangeLog`` the behaviour tests run against.
enum LogKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// ``FileChangeLog`` in a temporary folder.
    case file
    /// ``PostgresChangeLog`` in a throwaway PostgreSQL.
    case postgres

    var testDescription: String { rawValue }
}

/// What a behaviour test asks of a log, whatever keeps it.
struct LogSettings: Sendable {
    var retention = ChangeLogRetention()
    var memoryRecords = 65_536
    /// The file log's segment size (small ones let retention drop something).
    var segmentBytes = 32 << 20
    var now: @Sendable () -> Int64 = FileChangeLog.wallClock
}

/// Where logs of one kind are opened, again and again (a restart opens the same log anew).
struct LogPlace: Sendable {
    let kind: LogKind
    let folder: TemporaryFolder
    let database: Database?

    /// Opens the log of this place for writing.
    func open(_ settings: LogSettings = LogSettings()) async throws -> any ChangeLog {
        switch kind {
        case .file:
            return try FileChangeLog(
                folder: folder("changes"),
                options: FileChangeLog.Options(
                    retention: settings.retention, segmentBytes: settings.segmentBytes,
                    memoryRecords: settings.memoryRecords, now: settings.now),
                logger: FileChangeLogTests.logger)
        case .postgres:
            return try await PostgresChangeLog.open(
                folder: "test-folder", database: try #require(database),
                options: PostgresChangeLog.Options(
                    retention: settings.retention, memoryRecords: settings.memoryRecords, now: settings.now),
                logger: FileChangeLogTests.logger)
        }
    }

    /// Runs `body` with a place of `kind`: a temporary folder, and for
    /// PostgreSQL a throwaway server with the schema migrated.
    static func with(_ kind: LogKind, _ body: (LogPlace) async throws -> Void) async throws {
        let folder = try TemporaryFolder()
        switch kind {
        case .file:
            try await body(LogPlace(kind: kind, folder: folder, database: nil))
        case .postgres:
            try await withPostgres { server in
                try await Database.withRunning(try DatabaseURL(server.url), logger: FileChangeLogTests.logger) {
                    database in
                    try await database.migrate()
                    try await body(LogPlace(kind: kind, folder: folder, database: database))
                }
            }
        }
    }
}

/// What every change log does, run against each implementation.
@Suite("the change log's behaviour, on disk and in PostgreSQL")
struct ChangeLogBehaviourTests {
    static func entry(_ index: Int, time: Int64 = 1_764_000_000_000_000_000, origin: ChangeOrigin? = nil)
        -> ChangeLogEntry
    {
        FileChangeLogTests.entry(index, time: time, origin: origin)
    }

    static func readAll(_ log: any ChangeLog, after cursor: UInt64? = nil, page: Int = 1000) async throws
        -> [ChangeRecord]
    {
        try await FileChangeLogTests.readAll(log, after: cursor, page: page)
    }

    @Test(
        "records are numbered one by one and read back as events.md objects with seq, time and origin",
        arguments: LogKind.allCases)
    func appendAndRead(kind: LogKind) async throws {
        try await LogPlace.with(kind) { place in
            let log = try await place.open()
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
                            path: ItemPath("file 4.txt"), id: ItemID(rawValue: 4), kind: .file, size: 4,
                            isWriting: false)
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
    }

    @Test(
        "numbers go on across a restart, and every record is read back the same from where it is kept",
        arguments: LogKind.allCases)
    func reopen(kind: LogKind) async throws {
        try await LogPlace.with(kind) { place in
            // Few records in memory: the reads after the restart come from the files or the database.
            var log = try await place.open(LogSettings(memoryRecords: 2))
            try log.append(
                (1...5).map {
                    Self.entry($0, origin: $0 == 2 ? ChangeOrigin(face: "dav", client: "[::1]:1", method: "MOVE") : nil)
                })
            try await log.flush()
            let before = try await Self.readAll(log)
            log.close()
            log = try await place.open(LogSettings(memoryRecords: 2))
            #expect(log.latest == 5)
            #expect(try log.append([Self.entry(6), Self.entry(7)]).map(\.seq) == [6, 7])
            try await log.flush()
            let after = try await Self.readAll(log)
            #expect(after.map(\.seq) == Array(1...7))
            #expect(Array(after.prefix(5)) == before)
            log.close()
        }
    }

    @Test("readers waiting for records are woken by a durable append, and by cancellation", arguments: LogKind.allCases)
    func waiting(kind: LogKind) async throws {
        try await LogPlace.with(kind) { place in
            let log = try await place.open()
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
    }

    @Test(
        "retention by count drops old records; an older cursor is told to list again", arguments: LogKind.allCases)
    func retentionByCount(kind: LogKind) async throws {
        try await LogPlace.with(kind) { place in
            // The clock at the records' time: only the count bound applies.
            let log = try await place.open(
                LogSettings(
                    retention: ChangeLogRetention(maxRecords: 500), memoryRecords: 50, segmentBytes: 8 * 1024,
                    now: { 1_764_000_000_000_000_000 }))
            for batch in 0..<30 {
                try log.append((0..<50).map { Self.entry(batch * 50 + $0) })
                try await log.flush()
            }
            try await log.trim()
            #expect(log.latest == 1500)
            let oldest = log.oldest
            #expect(oldest > 1 && 1500 - oldest + 1 >= 500, "oldest \(oldest)")
            guard case .expired(let said, let latest) = try await log.read(after: 0, limit: 10) else {
                throw Failure("not expired")
            }
            #expect(said == oldest && latest == 1500)
            guard case .expired = try await log.read(after: oldest - 2, limit: 10) else {
                throw Failure("not expired")
            }
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
    }

    @Test("retention by age, on an injected clock", arguments: LogKind.allCases)
    func retentionByAge(kind: LogKind) async throws {
        try await LogPlace.with(kind) { place in
            let day: Int64 = 86_400 * 1_000_000_000
            let now = Atomic<Int64>(100 * day)
            let settings = LogSettings(
                retention: ChangeLogRetention(maxAgeSeconds: 7 * 86_400), memoryRecords: 10, segmentBytes: 4 * 1024,
                now: { now.load(ordering: .relaxed) })
            var log = try await place.open(settings)
            // Ten days of changes, 40 a day.
            for dayIndex in 0..<10 {
                try log.append(
                    (0..<40).map { Self.entry(dayIndex * 40 + $0, time: (90 + Int64(dayIndex)) * day + Int64($0)) })
                try await log.flush()
            }
            log.close()
            // A restart learns the records' times from where they are kept.
            log = try await place.open(settings)
            try await log.trim()
            let oldest = log.oldest
            guard case .records(let first, _) = try await log.read(after: oldest - 1, limit: 1) else {
                throw Failure("expired")
            }
            let kept = try #require(first.first)
            // Nothing younger than seven days went; what is older went, but
            // (on disk) for what shares a segment with younger records.
            #expect(kept.time <= 93 * day && kept.time >= 91 * day, "kept from day \(kept.time / day)")
            #expect(oldest > 1)
            now.store(1000 * day, ordering: .relaxed)
            try await log.trim()
            switch kind {
            case .file:
                #expect(
                    log.oldest == FileChangeLog.segmentFirstSeqs(in: place.folder("changes")).last!,
                    "only the newest segment stays")
            case .postgres:
                #expect(log.oldest == 401 && log.latest == 400, "nothing stays")
                guard case .records(let none, let next) = try await log.read(after: 400, limit: 5) else {
                    throw Failure("expired")
                }
                #expect(none.isEmpty && next == 400)
            }
            // Numbers are never handed out again, whatever retention removed.
            #expect(try log.append([Self.entry(999)]).map(\.seq) == [401])
            try await log.flush()
            log.close()
        }
    }

    @Test(
        "appends from many tasks at once: numbers are unique, gapless and in append order where they are kept",
        arguments: LogKind.allCases)
    func concurrentAppends(kind: LogKind) async throws {
        try await LogPlace.with(kind) { place in
            let log = try await place.open(LogSettings(memoryRecords: 64, segmentBytes: 64 * 1024))
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
}
