import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import Versions

@testable import FileSharing

/// Versions and the trash through every face, on real folders: what an
/// overwrite or a delete replaced can be read back and restored, with the
/// item's id as the listing gives it.
@Suite("Versions and trash")
struct HistoryAPITests {
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!

    /// The id `/api/list` gives the item at `path`.
    /// The id the listing gives `path`, once the observer knows of every
    /// change made before the call (a file written on disk a moment ago
    /// may not be known yet on a busy machine).
    static func listedID(_ share: ShareFixture, _ client: any TestClientProtocol, _ path: String) async throws
        -> String?
    {
        await share.server.observer.sync()
        let parent = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : ""
        let list = try await client.request("/api/list?path=" + parent)
        let items = list.json["items"] as? [[String: Any]] ?? []
        return items.first { $0["path"] as? String == path }?["id"] as? String
    }

    static func versions(_ client: any TestClientProtocol, _ path: String) async throws -> [[String: Any]] {
        let response = try await client.request("/api/versions?path=" + path)
        #expect(response.status == .ok, "\(response.text)")
        return response.json["versions"] as? [[String: Any]] ?? []
    }

    static func trash(_ client: any TestClientProtocol) async throws -> [[String: Any]] {
        try await client.request("/api/trash").json["items"] as? [[String: Any]] ?? []
    }

    static func versionContent(_ client: any TestClientProtocol, _ path: String, _ version: Any?) async throws
        -> String?
    {
        let response = try await client.request("/api/versions/content?path=\(path)&version=\(version ?? "")")
        return response.status == .ok ? response.text : nil
    }

    @Test("API PUT over a file keeps the old bytes; GET, ranges and restore; the id stays the listed one")
    func apiOverwrite() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/a.txt", .put, body: "first").status == .created)
                let id = try await Self.listedID(share, client, "a.txt")
                #expect(try await client.request("/api/files/a.txt", .put, body: "second!").status == .ok)
                #expect(try await Self.listedID(share, client, "a.txt") == id)
                let listing = try await client.request("/api/versions?path=a.txt")
                #expect(listing.json["id"] as? String == id && listing.json["path"] as? String == "a.txt")
                let versions = listing.json["versions"] as? [[String: Any]] ?? []
                #expect(versions.count == 1)
                let version = try #require(versions.first)
                #expect(version["size"] as? Int == 5 && version["conflict"] as? Bool == false)
                #expect((version["saved"] as? String)?.hasSuffix("Z") == true)
                let origin = version["origin"] as? [String: Any]
                #expect(origin?["face"] as? String == "api" && origin?["method"] as? String == "PUT")
                #expect(origin?["user"] as? String == "alice")
                let content = try await client.request(
                    "/api/versions/content?path=a.txt&version=\(version["version"]!)")
                #expect(content.status == .ok && content.text == "first")
                #expect(content.headers[.eTag] != nil && content.headers[.contentType]?.hasPrefix("text/plain") == true)
                let range = try await client.request(
                    "/api/versions/content?path=a.txt&version=\(version["version"]!)", headers: [.range: "bytes=1-2"])
                #expect(range.status == .partialContent && range.text == "ir")
                // Restore: the content it replaces becomes a version, the id stays.
                let restored = try await client.request(
                    "/api/versions/restore", .post, body: #"{"path":"a.txt","version":"\#(version["version"]!)"}"#)
                #expect(restored.status == .ok, "\(restored.text)")
                #expect(share.read("a.txt") == "first")
                #expect(try await Self.listedID(share, client, "a.txt") == id)
                let after = try await Self.versions(client, "a.txt")
                #expect(after.count == 2)
                #expect(try await Self.versionContent(client, "a.txt", after.first?["version"]) == "second!")
                #expect(try await Self.versionContent(client, "a.txt", after.last?["version"]) == "first")
            }
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("a resumable upload finishing over a file keeps the old bytes")
    func resumableOverwrite() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("r.bin", "old content")
            // Known to the observer first: a file another program made a
            // moment ago may be replaced before the observer gives it its id,
            // and its version is then kept under the id it had on disk.
            #expect(await eventually { share.server.observer.item(at: ItemPath("r.bin"))?.isWriting == false })
            try await share.test { (client: any TestClientProtocol) async throws in
                let start = try await client.request(
                    "/api/uploads?path=r.bin", .post, headers: [Self.uploadLength: "3"])
                #expect(start.status == .created)
                let token = try #require(start.json["upload"] as? String)
                let done = try await client.send(
                    "/api/uploads/\(token)", .patch, Array("new".utf8), headers: [Self.uploadOffset: "0"])
                #expect(done.status == .noContent || done.status == .ok, "\(done.text)")
                #expect(share.read("r.bin") == "new")
                let versions = try await Self.versions(client, "r.bin")
                #expect(versions.count == 1)
                #expect(try await Self.versionContent(client, "r.bin", versions.first?["version"]) == "old content")
            }
        }
    }

    @Test("WebDAV PUT, MOVE and COPY over a file keep it; DELETE puts it in the trash")
    func webDAV() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("d/a.txt", "one")
            try share.write("d/b.txt", "bee")
            try share.write("d/c.txt", "sea")
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/dav/d/a.txt", .put, body: "two").status == .noContent)
                #expect(
                    try await Self.versionContent(client, "d/a.txt", Self.versions(client, "d/a.txt").first?["version"])
                        == "one")
                let origin = try await Self.versions(client, "d/a.txt").first?["origin"] as? [String: Any]
                #expect(origin?["face"] as? String == "dav")
                // MOVE b over a: a's "two" is kept, under a's id.
                let id = try await Self.listedID(share, client, "d/a.txt")
                let moved = try await client.request(
                    "/dav/d/b.txt", .move, headers: [.destination: "/dav/d/a.txt", .overwrite: "T"])
                #expect(moved.status == .noContent)
                #expect(try await Self.listedID(share, client, "d/a.txt") == id)
                #expect(try await Self.versions(client, "d/a.txt").count == 2)
                #expect(
                    try await Self.versionContent(client, "d/a.txt", Self.versions(client, "d/a.txt").first?["version"])
                        == "two")
                // COPY c over a: "bee" is kept.
                let copied = try await client.request(
                    "/dav/d/c.txt", .copy, headers: [.destination: "/dav/d/a.txt", .overwrite: "T"])
                #expect(copied.status == .noContent)
                #expect(share.read("d/a.txt") == "sea")
                #expect(
                    try await Self.versionContent(client, "d/a.txt", Self.versions(client, "d/a.txt").first?["version"])
                        == "bee")
                // DELETE: into the trash, by WebDAV.
                #expect(try await client.request("/dav/d/c.txt", .delete).status == .noContent)
                let items = try await Self.trash(client)
                #expect(items.count == 1)
                #expect(items.first?["path"] as? String == "d/c.txt" && items.first?["kind"] as? String == "file")
                #expect((items.first?["by"] as? [String: Any])?["face"] as? String == "dav")
            }
            #expect(share.visibleTree() == ["d", "d/a.txt"])
        }
    }

    @Test("a delete goes to the trash whole and comes back with its id, or beside a newcomer")
    func trashRoundTrip() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/Docs/a.txt", .put, body: "alpha").status == .created)
                #expect(try await client.request("/api/files/Docs/sub/b.txt", .put, body: "beta").status == .created)
                let folderID = try await Self.listedID(share, client, "Docs")
                let fileID = try await Self.listedID(share, client, "Docs/a.txt")
                #expect(try await client.request("/api/files/Docs", .delete).status == .noContent)
                #expect(share.visibleTree().isEmpty)
                var items = try await Self.trash(client)
                #expect(items.count == 1)
                let entry = try #require(items.first)
                #expect(entry["kind"] as? String == "directory" && entry["size"] as? Int == 9)
                #expect(entry["id"] as? String == folderID)
                #expect((entry["by"] as? [String: Any])?["method"] as? String == "DELETE")
                let trashId = try #require(entry["trashId"] as? String)
                let restored = try await client.request(
                    "/api/trash/restore", .post, body: #"{"trashId":"\#(trashId)"}"#)
                #expect(restored.status == .ok && restored.json["path"] as? String == "Docs", "\(restored.text)")
                #expect(share.read("Docs/sub/b.txt") == "beta")
                #expect(try await Self.listedID(share, client, "Docs") == folderID)
                #expect(try await Self.listedID(share, client, "Docs/a.txt") == fileID)
                // The change feed says the same: the folder was added back under its old id, by the restore.
                let added = share.printed.all.last {
                    $0.contains(#""type":"added""#) && $0.contains(#""path":"Docs""#)
                }
                #expect(added?.contains(#""id":"\#(folderID ?? "")""#) == true, "\(added ?? "no added event")")
                #expect(added?.contains(#""method":"POST""#) == true)
                #expect(try await Self.trash(client).isEmpty)
                // A file deleted, and a new one made at its name: the old comes back beside it.
                #expect(try await client.request("/api/files/Docs/a.txt", .delete).status == .noContent)
                #expect(try await client.request("/api/files/Docs/a.txt", .put, body: "newcomer").status == .created)
                items = try await Self.trash(client)
                let second = try #require(items.first?["trashId"] as? String)
                let beside = try await client.request("/api/trash/restore", .post, body: #"{"trashId":"\#(second)"}"#)
                #expect(beside.json["path"] as? String == "Docs/a 2.txt")
                #expect(share.read("Docs/a 2.txt") == "alpha" && share.read("Docs/a.txt") == "newcomer")
                #expect(try await Self.listedID(share, client, "Docs/a 2.txt") == fileID)
                // Purged for good.
                #expect(
                    try await client.request(
                        "/api/files/Docs/a 2.txt".replacingOccurrences(of: " ", with: "%20"), .delete
                    ).status == .noContent)
                let third = try #require(try await Self.trash(client).first?["trashId"] as? String)
                #expect(try await client.request("/api/trash/\(third)", .delete).status == .noContent)
                #expect(try await client.request("/api/trash/\(third)", .delete).status == .notFound)
                #expect(try await Self.trash(client).isEmpty)
            }
        }
    }

    @Test("a file replaced, deleted and restored gets its inode's id, and its versions go with it")
    func restoredAfterReplace() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/r.txt", .put, body: "one").status == .created)
                #expect(try await client.request("/api/files/r.txt", .put, body: "two").status == .ok)
                let id = try #require(try await Self.listedID(share, client, "r.txt"))
                #expect(try await client.request("/api/files/r.txt", .delete).status == .noContent)
                let entry = try #require(try await Self.trash(client).first)
                #expect(entry["id"] as? String == id)
                let restored = try await client.request(
                    "/api/trash/restore", .post, body: #"{"trashId":"\#(entry["trashId"]!)"}"#)
                #expect(restored.status == .ok)
                #expect(share.read("r.txt") == "two")
                // The id was kept across the replace, so it is not the one the
                // inode gives: the observer cannot pair them (http-api.md says so).
                let now = try #require(try await Self.listedID(share, client, "r.txt"))
                #expect(now != id)
                let versions = try await Self.versions(client, "r.txt")
                #expect(versions.count == 1)
                #expect(try await Self.versionContent(client, "r.txt", versions.first?["version"]) == "one")
            }
        }
    }

    @Test("what a killed keep or delete left half-made is dropped when the server starts")
    func crashLeftovers() async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let root = folder.path + "/share"
            // The first server stays referenced: a fixture removes its folder when it goes.
            let first = try ShareFixture(root: root)
            try first.write("a.txt", "one")
            try await first.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/a.txt", .put, body: "two").status == .ok)
            }
            let kept = try #require(first.server.core.folder.history.versions.allVersions.first?.version)
            first.stop()
            let manager = FileManager.default
            let id = try #require(try manager.contentsOfDirectory(atPath: root + "/.fileshare/versions").first)
            // A keep killed before its rename, one whose record never came, a delete killed before its item moved in.
            try manager.createDirectory(
                atPath: root + "/.fileshare/versions/.tmp-killed", withIntermediateDirectories: true)
            try writeFile("half".utf8, to: root + "/.fileshare/versions/.tmp-killed/content")
            let recordless = root + "/.fileshare/versions/\(id)/" + StoreName.make(nanoseconds: 7)
            try manager.createDirectory(atPath: recordless, withIntermediateDirectories: true)
            try writeFile("x".utf8, to: recordless + "/content")
            let itemless = root + "/.fileshare/trash/" + StoreName.make(nanoseconds: 9)
            try manager.createDirectory(atPath: itemless, withIntermediateDirectories: true)
            try writeFile("{}".utf8, to: itemless + "/meta.json")
            let share = try ShareFixture(root: root)
            try await share.test { (client: any TestClientProtocol) async throws in
                let versions = try await Self.versions(client, "a.txt")
                #expect(versions.map { $0["version"] as? String } == [kept])
                #expect(try await Self.versionContent(client, "a.txt", kept) == "one")
                #expect(try await Self.trash(client).isEmpty)
            }
            #expect(!manager.fileExists(atPath: root + "/.fileshare/versions/.tmp-killed"))
            #expect(!manager.fileExists(atPath: recordless) && !manager.fileExists(atPath: itemless))
            withExtendedLifetime(first) {}
        }
    }

    @Test("live: WebDAV PUT and DELETE over sockets keep the old bytes")
    func webDAVLive() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("live.txt", "before")
            try await share.test(.live) { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/dav/live.txt", .put, body: "after").status == .noContent)
                let versions = try await Self.versions(client, "live.txt")
                #expect(try await Self.versionContent(client, "live.txt", versions.first?["version"]) == "before")
                #expect(try await client.request("/dav/live.txt", .delete).status == .noContent)
                let entry = try #require(try await Self.trash(client).first)
                #expect(entry["path"] as? String == "live.txt" && entry["size"] as? Int == 5)
                #expect((entry["by"] as? [String: Any])?["method"] as? String == "DELETE")
            }
        }
    }

    @Test("the retention is applied by age on the hourly trim too, not only at the next save")
    func trimByAge() async throws {
        try await MachineSettings.shared {
            let second: Int64 = 1_000_000_000
            let share = try ShareFixture(
                history: HistoryOptions(
                    versions: VersionRetention(maximumAge: 5 * second), trash: TrashRetention(maximumAge: 5 * second)))
            try share.write("a.txt", "one")
            try share.write("b.txt", "bee")
            try await share.test { (client: any TestClientProtocol) async throws in
                let kept = ContinuousClock.now
                #expect(try await client.request("/api/files/a.txt", .put, body: "two").status == .ok)
                #expect(try await client.request("/api/files/b.txt", .delete).status == .noContent)
                await share.server.core.trimHistory()
                let versions = try await Self.versions(client, "a.txt").count
                let items = try await Self.trash(client).count
                // Younger than five seconds: both stay (when this machine got here in time to tell).
                if ContinuousClock.now - kept < .seconds(4) {
                    #expect(versions == 1 && items == 1)
                }
                let expired = await eventuallyTrue {
                    await share.server.core.trimHistory()
                    let versions = try await Self.versions(client, "a.txt")
                    let items = try await Self.trash(client)
                    return versions.isEmpty && items.isEmpty
                }
                #expect(expired)
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: share.path(".fileshare/trash"))
            #expect(left.isEmpty)
        }
    }

    @Test("resolve ends a conflict: the kept conflict versions stay, the others go")
    func resolve() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("c.txt", "current")
            try await share.test { (client: any TestClientProtocol) async throws in
                let id = try #require(try await Self.listedID(share, client, "c.txt"))
                let store = share.server.core.folder.history.versions
                let fd = open(share.path("c.txt"), O_RDONLY)
                defer { close(fd) }
                let mine = try store.keepCopy(of: fd, id: ItemID(id)!, path: "c.txt", origin: nil, conflict: true)
                let theirs = try store.keepCopy(of: fd, id: ItemID(id)!, path: "c.txt", origin: nil, conflict: true)
                #expect(try await Self.versions(client, "c.txt").filter { $0["conflict"] as? Bool == true }.count == 2)
                let unknown = try await client.request(
                    "/api/versions/resolve", .post,
                    body: #"{"path":"c.txt","keep":["\#(StoreName.make(nanoseconds: 1))"]}"#)
                #expect(unknown.status == .notFound)
                let resolved = try await client.request(
                    "/api/versions/resolve", .post, body: #"{"path":"c.txt","keep":["\#(mine.version)"]}"#)
                #expect(resolved.status == .ok, "\(resolved.text)")
                let versions = try await Self.versions(client, "c.txt")
                #expect(versions.map { $0["version"] as? String } == [mine.version])
                #expect(versions.first?["conflict"] as? Bool == false)
                #expect(!versions.contains { $0["version"] as? String == theirs.version })
            }
        }
    }

    @Test(
        "hostile names answer 400 or 404 and touch nothing",
        arguments: [
            ("/api/versions?path=../etc/passwd", HTTPRequest.Method.get, nil),
            ("/api/versions?path=.fileshare/versions", .get, nil),
            ("/api/versions/content?path=a.txt&version=../../../etc/passwd", .get, nil),
            ("/api/versions/content?path=a.txt&version=00000000000000000001", .get, nil),
            ("/api/versions/content?path=a.txt", .get, nil),
            ("/api/versions/restore", .post, #"{"path":"a.txt","version":"../x"}"#),
            ("/api/versions/restore", .post, #"{"path":"../a.txt","version":"00000000000000000001"}"#),
            ("/api/versions/resolve", .post, #"{"path":"a.txt","keep":["a/../b"]}"#),
            ("/api/trash/restore", .post, #"{"trashId":"../00000000000000000001"}"#),
            ("/api/trash/restore", .post, #"{"trashId":"00000000000000000001"}"#),
            ("/api/trash/..%2f..%2fversions", .delete, nil),
            ("/api/trash/00000000000000000001", .delete, nil),
        ] as [(String, HTTPRequest.Method, String?)])
    func hostile(uri: String, method: HTTPRequest.Method, body: String?) async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("a.txt", "one")
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/a.txt", .put, body: "two").status == .ok)
                #expect(try await client.request("/api/files/a.txt", .delete).status == .noContent)
                #expect(try await client.request("/api/files/a.txt", .put, body: "three").status == .created)
                let before = share.privateTree()
                let response = try await client.request(uri, method, body: body)
                #expect([400, 403, 404].contains(response.status.code), "\(uri): \(response.status) \(response.text)")
                #expect(response.json["error"] is String)
                #expect(share.privateTree() == before)
                #expect(share.read("a.txt") == "three")
            }
        }
    }

    @Test("an exact path is not given the methods of a token pattern beside it")
    func routeShape() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let wrong = try await client.request("/api/trash/restore", .delete)
                #expect(wrong.status == .methodNotAllowed && wrong.headers[.allow] == "POST")
                let options = try await client.request("/api/trash/restore", .options)
                #expect(options.headers[.allow] == "POST")
            }
        }
    }

    @Test("a read-only share lists versions and the trash but refuses their writes")
    func readOnly() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(readOnly: true)
            try share.write("a.txt", "one")
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/versions?path=a.txt").status == .ok)
                #expect(try await client.request("/api/trash").status == .ok)
                let writes: [(String, HTTPRequest.Method, String?)] = [
                    ("/api/versions/restore", .post, #"{"path":"a.txt","version":"00000000000000000001"}"#),
                    ("/api/versions/resolve", .post, #"{"path":"a.txt","keep":[]}"#),
                    ("/api/trash/restore", .post, #"{"trashId":"00000000000000000001"}"#),
                    ("/api/trash/00000000000000000001", .delete, nil),
                ]
                for (uri, method, body) in writes {
                    #expect(try await client.request(uri, method, body: body).status == .forbidden)
                }
            }
        }
    }
}

extension ShareFixture {
    /// The server's private folder, file by file with sizes (what a request must not change).
    func privateTree() -> [String] {
        let base = root + "/.fileshare"
        let enumerator = FileManager.default.enumerator(atPath: base)
        var result: [String] = []
        while let item = enumerator?.nextObject() as? String {
            // The change log and the audit record requests by design, hostile ones too.
            if item.hasPrefix("changes") || item.hasPrefix("observer-state") || item.hasPrefix("audit") { continue }
            let size = (try? FileManager.default.attributesOfItem(atPath: base + "/" + item))?[.size] as? Int ?? -1
            result.append("\(item) \(size)")
        }
        return result.sorted()
    }
}
