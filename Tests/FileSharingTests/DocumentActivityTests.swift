import Documents
import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing

@testable import FileSharing

/// A server and a `Documents` workspace in one process, on one folder and
/// one observer: what the server's clients do reaches the documents as
/// UIDocument's states — `editingDisabled` while another client holds a
/// WebDAV lock, `progressAvailable` while a new version is uploaded.
@Suite("Server activity into documents", .serialized, .holdsObservers, .timeLimit(.minutes(3)))
struct DocumentActivityTests {
    /// The glue `ShareServer.activities()` documents, as an app would write it.
    static func feed(_ server: ShareServer, into workspace: DocumentWorkspace) -> Task<Void, Never> {
        let activities = server.activities()
        return Task {
            for await activity in activities {
                let path = ItemPath(activity.path)
                switch activity.kind {
                case .locked(let below):
                    await workspace.lockChanged(at: path, coversBelow: below, held: true)
                case .unlocked(let below):
                    await workspace.lockChanged(at: path, coversBelow: below, held: false)
                case .receiving(let offset, let length):
                    await workspace.progressChanged(at: path, offset: offset, length: length)
                case .received:
                    await workspace.progressChanged(at: path, offset: nil, length: nil)
                }
            }
        }
    }

    static func workspace(_ share: ShareFixture) -> DocumentWorkspace {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        // The server's own observer: one per folder.
        return DocumentWorkspace(
            folder: try! DocumentFolder(root: share.root), observer: share.server.observer,
            options: DocumentWorkspace.Options(autosaveDelay: .milliseconds(50)), logger: logger)
    }

    /// Polls an async condition for up to 20 s.
    static func waitUntil(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<2000 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

    static func lockBody() -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype><D:owner>someone else</D:owner></D:lockinfo>
        """
    }

    @Test("a WebDAV lock by another client disables editing; the autosave waits, and runs once it is released")
    func lockDisablesEditing() async throws {
        let share = try ShareFixture()
        try share.write("d.txt", "first")
        await share.server.observer.sync()
        let workspace = Self.workspace(share)
        let feeding = Self.feed(share.server, into: workspace)
        defer { feeding.cancel() }
        let document = try await workspace.open("d.txt")
        try await share.test(.live) { client in
            let lock = try await client.request(
                "/dav/d.txt", HTTPRequest.Method("LOCK")!, headers: [HTTPField.Name("Timeout")!: "Second-600"],
                body: Self.lockBody())
            #expect(lock.status == .ok, "\(lock.text)")
            let token = try #require(lock.headers[HTTPField.Name("Lock-Token")!])
            #expect(await Self.waitUntil { await document.state.contains(.editingDisabled) })
            // Edited meanwhile: nothing is written while the lock holds.
            try await document.update(Array("mine".utf8))
            // What must not happen needs a window: six autosave delays.
            try await Task.sleep(for: .milliseconds(300))
            #expect(share.read("d.txt") == "first")
            let unlock = try await client.request(
                "/dav/d.txt", HTTPRequest.Method("UNLOCK")!, headers: [HTTPField.Name("Lock-Token")!: token])
            #expect(unlock.status == .noContent)
            #expect(await Self.waitUntil { await !document.state.contains(.editingDisabled) })
            #expect(await Self.waitUntil { share.read("d.txt") == "mine" })
        }
        await document.close()
    }

    @Test("an upload of a new version shows progress, with its offset and length, until it ends")
    func uploadProgress() async throws {
        let share = try ShareFixture()
        try share.write("p.bin", "old")
        await share.server.observer.sync()
        let workspace = Self.workspace(share)
        let feeding = Self.feed(share.server, into: workspace)
        defer { feeding.cancel() }
        let document = try await workspace.open("p.bin")
        try await share.test(.live) { client in
            let connection = try RawConnection(port: try #require(client.port))
            let length = 3_000_000
            await connection.send(
                "PUT /api/files/p.bin HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\nContent-Length: \(length)\r\n\r\n"
            )
            // The first 2 MiB: written in 1 MiB parts, so progress is told.
            await connection.send([UInt8](repeating: 66, count: 2 << 20))
            #expect(await Self.waitUntil { await document.state.contains(.progressAvailable) })
            #expect(await Self.waitUntil { await (document.progress?.offset ?? 0) >= 1 << 20 })
            let progress = await document.progress
            #expect(progress?.length == Int64(length), "\(String(describing: progress))")
            await connection.send([UInt8](repeating: 66, count: length - (2 << 20)))
            #expect(await connection.receive(until: "}").hasPrefix("HTTP/1.1 200"))
            #expect(await Self.waitUntil { await !document.state.contains(.progressAvailable) })
            #expect(await document.progress.map { _ in true } == nil)
        }
        await document.close()
    }
}
