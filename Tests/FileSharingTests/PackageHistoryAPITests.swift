import Documents
import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import FileSharing

/// A package document (a folder saved whole by the `Documents` library) in a
/// server's folder: its versions are folder versions in the server's store,
/// listed with their kind, downloaded as a ZIP, restored whole; deleted, it
/// goes to the trash whole and comes back with its id.
@Suite("Package documents through the API", .serialized, .holdsObservers, .timeLimit(.minutes(5)))
struct PackageHistoryAPITests {
    @Test("versions of a package: kind directory, a ZIP of the tree, a restore that keeps the tree it replaces")
    func packageVersions() async throws {
        let share = try ShareFixture()
        try FileManager.default.createDirectory(
            atPath: share.path("Story.pages/Data"), withIntermediateDirectories: true)
        try share.write("Story.pages/index.xml", "one")
        try share.write("Story.pages/Data/image.png", "PNG")
        await share.server.observer.sync()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let keeper = try VersionStoreKeeper(
            store: share.server.core.folder.history.versions, origin: nil, root: share.root)
        let workspace = DocumentWorkspace(
            folder: try DocumentFolder(root: share.root, keeper: keeper), observer: share.server.observer,
            options: DocumentWorkspace.Options(autosaveDelay: .seconds(60)), logger: logger)
        let document = try await workspace.open("Story.pages")
        var package = try #require(await document.package)
        try package.setFile("index.xml", Array("two".utf8))
        try await document.update(package)
        #expect(try await document.save() == .clean)
        try await share.test { (client: any TestClientProtocol) async throws in
            #expect(
                await DocumentActivityTests.waitUntil {
                    let listed = try? await HistoryAPITests.listedID(share, client, "Story.pages")
                    return await document.id?.description == listed
                })
            let versions = try await HistoryAPITests.versions(client, "Story.pages")
            #expect(versions.count == 1, "\(versions)")
            let version = try #require(versions.first)
            #expect(version["kind"] as? String == "directory" && version["size"] as? Int == 6)
            let name = try #require(version["version"] as? String)
            let zip = try await client.request("/api/versions/content?path=Story.pages&version=\(name)")
            #expect(zip.status == .ok && zip.headers[.contentType] == "application/zip")
            // Stored entries: the names and the bytes are in the archive as they are.
            let bytes = Array(zip.body.readableBytesView)
            #expect(bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]))
            for needle in ["Story.pages/index.xml", "Story.pages/Data/image.png", "one", "PNG"] {
                #expect(Self.contains(bytes, needle), "\(needle) is not in the ZIP")
            }
            #expect(!Self.contains(bytes, "two"))
            // Restore: the old tree is back whole; the tree it replaced is a version.
            let restored = try await client.request(
                "/api/versions/restore", .post, body: #"{"path":"Story.pages","version":"\#(name)"}"#)
            #expect(restored.status == .ok, "\(restored.text)")
            #expect(share.read("Story.pages/index.xml") == "one" && share.read("Story.pages/Data/image.png") == "PNG")
            let after = try await HistoryAPITests.versions(client, "Story.pages")
            #expect(after.count == 2 && after.allSatisfy { $0["kind"] as? String == "directory" }, "\(after)")
            let newest = try #require(after.first?["version"] as? String)
            let replaced = try await client.request("/api/versions/content?path=Story.pages&version=\(newest)")
            #expect(Self.contains(Array(replaced.body.readableBytesView), "two"))
            // A version of another item is not one of this path's.
            try share.write("plain.txt", "text")
            let refused = try await client.request(
                "/api/versions/restore", .post, body: #"{"path":"plain.txt","version":"\#(name)"}"#)
            #expect(refused.status == .notFound, "a version of another item")
            // Deleted: to the trash whole; restored with its versions. (The
            // package kept its id across its saves, so its inode is younger
            // than its id: restored, it gets the id its inode gives, as a
            // file saved by a rename does, and its versions move to it.)
            let id = try await HistoryAPITests.listedID(share, client, "Story.pages")
            #expect(try await client.request("/api/files/Story.pages", .delete).status == .noContent)
            let items = try await HistoryAPITests.trash(client)
            let entry = try #require(items.first)
            #expect(entry["kind"] as? String == "directory" && entry["size"] as? Int == 6)
            let trashId = try #require(entry["trashId"] as? String)
            let back = try await client.request("/api/trash/restore", .post, body: #"{"trashId":"\#(trashId)"}"#)
            #expect(back.status == .ok && back.json["path"] as? String == "Story.pages", "\(back.text)")
            #expect(share.read("Story.pages/index.xml") == "one")
            let restoredID = try await HistoryAPITests.listedID(share, client, "Story.pages")
            #expect(try await HistoryAPITests.versions(client, "Story.pages").count == 2, "\(id) → \(restoredID)")
        }
        await document.close()
        #expect(share.stagingContent().isEmpty, "\(share.stagingContent())")
    }

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard needle.count <= bytes.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}
