import ChangeLog
import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// The change log through the server: `/api/changes`, restarts, retention, and `/api/events` by cursor.
@Suite("Change log over HTTP")
struct ChangeLogAPITests {
    /// The records of a `/api/changes` answer.
    static func records(_ response: TestResponse) -> [[String: Any]] {
        response.json["changes"] as? [[String: Any]] ?? []
    }

    @Test("/api/changes: every change numbered one by one, with time and origin; pages by next; bad cursors are 400")
    func numberedChanges() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/a.txt", .put, body: "hello").status == .created)
                #expect(try await client.request("/api/mkdir", .post, body: #"{"path":"F"}"#).status == .created)
                #expect(
                    try await client.request("/api/move", .post, body: #"{"from":"a.txt","to":"F/b.txt"}"#).status
                        == .ok)
                try share.write("disk.txt", "made on disk")
                // Until it is complete, so no change comes after those made here.
                #expect(await eventually { share.server.observer.item(at: "disk.txt")?.isWriting == false })
                await share.server.observer.sync()
                try await share.server.changeLog.flush()
                #expect(try await client.request("/api/files/F", .delete).status == .noContent)

                let all = try await client.request("/api/changes")
                #expect(all.status == .ok)
                let records = Self.records(all)
                #expect(records.map { $0["seq"] as? Int } == Array(1...records.count).map { $0 }, "\(records)")
                let summary = records.map { "\($0["type"]!) \($0["path"] ?? $0["to"]!)" }
                #expect(summary.first == "added a.txt" && summary.contains("removed F"), "\(summary)")
                #expect(
                    summary.contains("added F") && summary.contains("moved F/b.txt")
                        && summary.contains("added disk.txt"))
                let numbered = try #require(summary.firstIndex(of: "moved F/b.txt"))
                #expect(
                    summary.firstIndex(of: "added F")! < numbered && numbered < summary.firstIndex(of: "removed F")!)
                #expect(all.json["next"] as? Int == records.count)
                // The origin is data: face, client, user, method.
                let put = try #require(records.first)
                let origin = try #require(put["origin"] as? [String: String])
                #expect(
                    origin["face"] == "api" && origin["method"] == "PUT" && origin["user"] == "alice"
                        && origin["by"] == "server")
                let disk = try #require(records.first { $0["path"] as? String == "disk.txt" })
                #expect(disk["origin"] == nil)
                for record in records {
                    let time = try #require(record["time"] as? String)
                    #expect(time.count == 24 && time.hasSuffix("Z"), "\(time)")
                    #expect(record["id"] is String)
                }
                // Paged.
                let page = try await client.request("/api/changes?since=2&limit=1")
                #expect(Self.records(page).map { $0["seq"] as? Int } == [3] && page.json["next"] as? Int == 3)
                let end = try await client.request("/api/changes?since=\(records.count)")
                #expect(Self.records(end).isEmpty && end.json["next"] as? Int == records.count)
                for bad in ["since=abc", "since=-1", "limit=0", "limit=10001", "limit=x"] {
                    let answer = try await client.request("/api/changes?\(bad)")
                    #expect(answer.status == .badRequest && answer.json["error"] is String, "\(bad)")
                }
            }
        }
    }

    @Test("a cursor older than the retention, or from another log, answers 410 with resync and the oldest kept")
    func expiredCursor() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(
                changeLog: FileChangeLog.Options(
                    retention: ChangeLogRetention(maxRecords: 50), segmentBytes: 4096, memoryRecords: 16))
            for index in 0..<200 { try share.write("f\(index).txt", "x") }
            // Until every file is complete, so the log stays as it is below.
            #expect(
                await eventually {
                    (share.server.observer.children(of: .root) ?? []).filter { !$0.isWriting }.count == 200
                })
            await share.server.observer.sync()
            try await share.server.changeLog.flush()
            #expect(share.server.changeLog.latest >= 200)
            try await share.test { (client: any TestClientProtocol) async throws in
                let oldest = share.server.changeLog.oldest
                #expect(oldest > 1)
                let gone = try await client.request("/api/changes?since=0")
                #expect(gone.status == .gone)
                #expect(gone.json["resync"] as? Bool == true && gone.json["oldest"] as? Int == Int(oldest))
                #expect((gone.json["error"] as? String)?.contains("list the folder again") == true)
                let kept = try await client.request("/api/changes?since=\(oldest - 1)&limit=5")
                #expect(Self.records(kept).first?["seq"] as? Int == Int(oldest))
                // Without a cursor: from the oldest kept.
                let fromOldest = try await client.request("/api/changes?limit=1")
                #expect(Self.records(fromOldest).first?["seq"] as? Int == Int(oldest))
                let ahead = try await client.request("/api/changes?since=999999")
                #expect(ahead.status == .gone && (ahead.json["error"] as? String)?.contains("reset") == true)
            }
        }
    }

    @Test("what changed while the server was stopped is numbered at the next start, ids kept, before new changes")
    func changesWhileStopped() async throws {
        try await MachineSettings.shared {
            var template = Array("/tmp/fileshare-share-XXXXXX".utf8CString)
            let root = String(
                cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }))
            try "there before the first start".write(toFile: root + "/before.txt", atomically: false, encoding: .utf8)
            let share = try ShareFixture(root: root)
            let firstLatest = try await share.test { (client: any TestClientProtocol) async throws -> Int in
                // The first start numbers nothing of what was there.
                #expect(Self.records(try await client.request("/api/changes")).isEmpty)
                #expect(try await client.request("/api/files/a.txt", .put, body: "one").status == .created)
                let records = Self.records(try await client.request("/api/changes"))
                #expect(records.count == 1)
                return records.last?["seq"] as? Int ?? 0
            }
            let idOfA = try #require(share.server.observer.item(at: "a.txt")?.id.description)
            share.stop()
            // As a stopping server does: the observer's final state is on disk before another starts.
            try? await share.server.observer.waitUntilStopped()
            try FileManager.default.moveItem(atPath: share.path("a.txt"), toPath: share.path("renamed.txt"))
            try share.write("new-while-stopped.txt", "two")
            try FileManager.default.removeItem(atPath: share.path("before.txt"))

            let again = try ShareFixture(root: share.root)
            try await again.test { (client: any TestClientProtocol) async throws in
                await again.server.observer.sync()
                #expect(try await client.request("/api/files/after.txt", .put, body: "three").status == .created)
                let records = Self.records(try await client.request("/api/changes?since=\(firstLatest)"))
                #expect(
                    records.map { $0["seq"] as? Int }
                        == Array((firstLatest + 1)...(firstLatest + records.count)).map { $0 })
                let summary = records.map { "\($0["type"]!) \($0["to"] ?? $0["path"]!)" }
                // (new-while-stopped.txt may also be `finished` when the start came within the settle time.)
                #expect(
                    Set(summary.dropLast().filter { !$0.hasPrefix("finished") })
                        == ["renamed renamed.txt", "added new-while-stopped.txt", "removed before.txt"], "\(summary)")
                #expect(summary.last == "added after.txt")
                let renamed = try #require(records.first { $0["type"] as? String == "renamed" })
                #expect(renamed["id"] as? String == idOfA && renamed["from"] as? String == "a.txt")
            }
        }
    }

    @Test("events: id is the number; Last-Event-ID gives exactly what was missed, then the live stream")
    func resumeByLastEventID() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test(.live) { client in
                let port = try #require(client.port)
                for name in ["one", "two", "three"] {
                    #expect(try await client.request("/api/files/\(name).txt", .put, body: name).status == .created)
                }
                let stream = try RawConnection(port: port)
                await stream.send(
                    "GET /api/events HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\nLast-Event-ID: 1\r\n\r\n"
                )
                #expect(await eventually { share.server.changeStream.openStreams == 1 })
                #expect(try await client.request("/api/files/four.txt", .put, body: "4").status == .created)
                var text = ""
                for _ in 0..<3 where !text.contains("four.txt") { await text += stream.receive(until: "four.txt") }
                let ids = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("id: ") }.map {
                    Int($0.dropFirst(4).filter(\.isNumber))
                }
                #expect(ids == [2, 3, 4], "\(text.debugDescription)")
                let data = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("data: ") }
                #expect(
                    data.count == 3 && data[0].contains(#""seq":2"#) && data[0].contains("two.txt")
                        && data[2].contains("four.txt"))
                // A cursor the log does not have: a resync event, then on from the newest.
                let latest = share.server.changeLog.latest
                let stale = try RawConnection(port: port)
                await stale.send(
                    "GET /api/events?since=99 HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\n\r\n"
                )
                // Each read waits 20 s at most; a loaded machine may need more.
                var staleText = ""
                for _ in 0..<3 where !staleText.contains(#""resync":true"#) {
                    await staleText += stale.receive(until: #""resync":true"#)
                }
                #expect(
                    staleText.contains("event: resync\nid: \(latest)\ndata: {")
                        && staleText.contains(#""resync":true"#), "\(staleText)")
            }
        }
    }
}
