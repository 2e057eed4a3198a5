import FileshareTestSupport
import Foundation
import Logging
import Testing

@testable import FileSharing

/// The audit's files: appended off the request path, rotated by size,
/// every event either written or counted as dropped, read back filtered.
@Suite("The audit's files", .timeLimit(.minutes(5)))
struct AuditLogTests {
    static func event(_ index: Int, who: String = "alice", path: String = "Team/a.txt") -> AuditEvent {
        AuditEvent(
            action: "download", who: who, address: "192.0.2.1", path: path, outcome: "ok", detail: "n\(index)",
            time: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)))
    }

    @Test(
        "event times: RFC 3339 in UTC to the millisecond, read back to the same millisecond",
        arguments: [
            (0, "1970-01-01T00:00:00.000Z"), (1_764_033_825.678, "2025-11-25T01:23:45.678Z"),
            (1_764_033_825.0005, "2025-11-25T01:23:45.000Z"), (951_782_400.999, "2000-02-29T00:00:00.999Z"),
            (-86_400.25, "1969-12-30T23:59:59.750Z"), (4_102_444_800, "2100-01-01T00:00:00.000Z"),
            // Beyond what nanoseconds since 1970 hold: Foundation writes it.
            (9.5e9, "2271-01-16T16:53:20.000Z"),
        ] as [(Double, String)])
    func eventTimes(seconds: Double, written: String) throws {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(AuditEvent.format(date) == written)
        let back = try #require(AuditEvent.parseTime(written))
        #expect(abs(back.timeIntervalSince1970 - seconds) < 0.001)
    }

    @Test("an event's JSON line: its fields in order, escaped, optional ones left out, read back the same")
    func jsonLine() throws {
        let plain = Self.event(1)
        #expect(
            plain.jsonLine
                == #"{"time":"2023-11-14T22:13:21.000Z","action":"download","who":"alice","address":"192.0.2.1","path":"Team/a.txt","outcome":"ok","detail":"n1"}"#
        )
        let bare = AuditEvent(
            action: "signin", who: "-", address: "::1", path: nil, outcome: "denied",
            time: Date(timeIntervalSince1970: 0))
        #expect(
            bare.jsonLine
                == #"{"time":"1970-01-01T00:00:00.000Z","action":"signin","who":"-","address":"::1","outcome":"denied"}"#
        )
        let odd = AuditEvent(
            action: "move", who: "b\"o\\b", address: "192.0.2.1", path: "a\nb\u{1}/Été ☃.txt", outcome: "ok",
            detail: "tab\there")
        #expect(odd.jsonLine.contains(#""who":"b\"o\\b""#))
        #expect(odd.jsonLine.contains(#""path":"a\nb\u0001/Été ☃.txt""#))
        for event in [plain, bare, odd] {
            #expect(try JSONDecoder().decode(AuditEvent.self, from: Data(event.jsonLine.utf8)) == event)
        }
    }

    @Test(
        "a line written from its parts is the event's line, time to the millisecond rounded down",
        arguments: [
            0, 1_764_033_825_678_400_000, 1_764_033_825_000_500_000, 951_782_400_999_000_001, -86_400_250_000_000,
            -1_500_000, 4_102_444_800_000_000_000,
        ] as [Int64])
    func lineFromParts(nanoseconds: Int64) {
        let date = Date(timeIntervalSince1970: TimeInterval(nanoseconds) / 1e9)
        for (path, detail) in [("Team/a \"b\".txt", "tab\there"), (nil, nil)] as [(String?, String?)] {
            let event = AuditEvent(
                action: "download", who: "b\"o", address: "::1", path: path, outcome: "ok", detail: detail, time: date)
            var json = JSONBytes(capacity: 160)
            AuditEvent.writeJSONLine(
                into: &json, nanoseconds: nanoseconds, action: "download", who: "b\"o", address: "::1", path: path,
                outcome: "ok", detail: detail)
            #expect(String(decoding: json.bytes, as: UTF8.self) == event.jsonLine)
        }
    }

    @Test("a download recorded from its parts reads back as the event, at the time it was recorded")
    func recordedFromParts() async throws {
        let folder = try TemporaryFolder()
        let audit = AuditLog(folder: folder("audit"), logger: Logger(label: "test"))
        let before = Date()
        audit.record(
            action: "download", who: "alice", address: "192.0.2.1", path: "Team/a.txt", outcome: "ok", detail: nil)
        audit.record(Self.event(1))
        await audit.close()
        let events = AuditReader.read(folder: folder("audit"))
        let recorded = try #require(events.first { $0.detail == nil })
        #expect(
            recorded.action == "download" && recorded.who == "alice" && recorded.address == "192.0.2.1"
                && recorded.path == "Team/a.txt" && recorded.outcome == "ok")
        let time = try #require(AuditEvent.parseTime(recorded.time))
        #expect(time.timeIntervalSince(before) > -0.002 && time.timeIntervalSinceNow <= 0.001)
        #expect(events.count == 2)
    }

    @Test("rotated by size, the newest kept files read back in order, each file private")
    func rotation() async throws {
        let folder = try TemporaryFolder()
        let audit = AuditLog(
            folder: folder("audit"), options: .init(maxFileBytes: 600, keepFiles: 2, bufferCapacity: 10_000),
            logger: Logger(label: "test"))
        for index in 0..<60 { audit.record(Self.event(index)) }
        await audit.close()
        let files = AuditReader.files(in: folder("audit"))
        #expect(files.map { ($0 as NSString).lastPathComponent } == ["audit.2.jsonl", "audit.1.jsonl", "audit.jsonl"])
        for file in files {
            let size = try #require(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
            #expect(size <= 600)
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        }
        let events = AuditReader.read(folder: folder("audit"))
        // The oldest went with the rotated-out files; what is kept is the latest, in order.
        #expect(events.last?.detail == "n59")
        #expect(events.count < 60 && events.count > 3)
        let numbers = events.compactMap { $0.detail.flatMap { Int($0.dropFirst()) } }
        #expect(numbers == numbers.sorted() && numbers == Array(numbers.first!...59))
    }

    @Test("a full buffer drops events without waiting; every event is written or counted as dropped")
    func drops() async throws {
        let folder = try TemporaryFolder()
        let audit = AuditLog(
            folder: folder("audit"), options: .init(bufferCapacity: 4), logger: Logger(label: "test"))
        let total = 5000
        for index in 0..<total { audit.record(Self.event(index)) }
        await audit.close()
        let events = AuditReader.read(folder: folder("audit"))
        let written = events.filter { $0.action == "download" }.count
        let dropped = events.filter { $0.action == "audit-dropped" }.compactMap {
            $0.detail.flatMap { Int($0.split(separator: " ")[0]) }
        }.reduce(0, +)
        #expect(written + dropped == total, "written \(written), dropped \(dropped)")
        #expect(written >= 4)
    }

    @Test("events arriving while the writer waits out its window are one write; flush does not wait for the window")
    func batches() async throws {
        let folder = try TemporaryFolder()
        let audit = AuditLog(
            folder: folder("audit"), options: .init(batchWindow: .seconds(30)), logger: Logger(label: "test"))
        // The first event wakes the writer at once.
        audit.record(Self.event(0))
        #expect(await eventually { audit.batchesWritten == 1 })
        #expect(AuditReader.read(folder: folder("audit")).map(\.detail) == ["n0"])
        // The rest arrive inside its 30 s window: one write, when a reader asks.
        for index in 1...1000 { audit.record(Self.event(index)) }
        let start = ContinuousClock.now
        await audit.flush()
        #expect(ContinuousClock.now - start < .seconds(20), "flush waited out the window")
        #expect(AuditReader.read(folder: folder("audit")).count == 1001)
        #expect(audit.batchesWritten == 2)
        await audit.close()
        // After the end, a flush returns at once.
        await audit.flush()
    }

    @Test("a buffer half full is written without waiting out the window, so a burst is not dropped")
    func halfFull() async throws {
        let folder = try TemporaryFolder()
        let audit = AuditLog(
            folder: folder("audit"), options: .init(bufferCapacity: 100, batchWindow: .seconds(60)),
            logger: Logger(label: "test"))
        // The first event wakes the writer at once; then it waits out its 60 s window.
        audit.record(Self.event(0))
        #expect(await eventually { audit.batchesWritten == 1 })
        // The fiftieth after it fills half the buffer: written now, long
        // before the window ends (fewer wait for it: `batches`).
        for index in 1...50 { audit.record(Self.event(index)) }
        #expect(await eventually { audit.batchesWritten == 2 })
        #expect(audit.waiting.events == 0)
        // Three more buffers' worth, half at a time, as the writer keeps up: none dropped.
        for index in 51...350 {
            audit.record(Self.event(index))
            if audit.waiting.events >= 50 { _ = await eventually { audit.waiting.events < 50 } }
        }
        await audit.close()
        let events = AuditReader.read(folder: folder("audit"))
        #expect(events.count == 351)
        #expect(!events.contains { $0.action == "audit-dropped" })
    }

    @Test("read back filtered by time, user, path and limit; the table for people")
    func filters() async throws {
        let folder = try TemporaryFolder()
        let audit = AuditLog(folder: folder("audit"), logger: Logger(label: "test"))
        audit.record(Self.event(0, who: "alice", path: "Team/a.txt"))
        audit.record(Self.event(10, who: "bob", path: "Team/Sub/b.txt"))
        audit.record(Self.event(20, who: "link 0123456789ab", path: "Teams/c.txt"))
        audit.record(Self.event(30, who: "alice", path: "Other/d.txt"))
        await audit.close()
        let path = folder("audit")
        #expect(AuditReader.read(folder: path, filter: .init(user: "alice")).map(\.detail) == ["n0", "n30"])
        #expect(AuditReader.read(folder: path, filter: .init(path: "/Team")).map(\.detail) == ["n0", "n10"])
        #expect(AuditReader.read(folder: path, filter: .init(user: "link 0123456789ab")).count == 1)
        #expect(AuditReader.read(folder: path, filter: .init(limit: 2)).map(\.detail) == ["n20", "n30"])
        var since = AuditReader.Filter()
        let parsed = since.setSince("2023-11-14T22:13:35Z")
        #expect(parsed)
        #expect(AuditReader.read(folder: path, filter: since).map(\.detail) == ["n20", "n30"])
        let refused = since.setSince("yesterday")
        #expect(!refused)
        let back = since.setSince("P1D", now: Date(timeIntervalSince1970: 1_700_086_400 + 15))
        #expect(back)
        #expect(AuditReader.read(folder: path, filter: since).map(\.detail) == ["n20", "n30"])
        let table = AuditReader.table(AuditReader.read(folder: path))
        #expect(table.split(separator: "\n").count == 5)
        #expect(table.hasPrefix("TIME") && table.contains("Team/Sub/b.txt (n10)"))
        // A damaged line is skipped, the rest read.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "/audit.jsonl"))
        handle.seekToEndOfFile()
        handle.write(Data("{not json\n".utf8))
        try handle.close()
        #expect(AuditReader.read(folder: path).count == 4)
    }
}
