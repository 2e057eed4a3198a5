import FileWatching
import FileshareTestSupport
import Foundation
import Testing
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// Folder versions: a package document's old tree, kept whole.
@Suite("Folder versions", .timeLimit(.minutes(5)))
struct FolderVersionTests {
    static let id = ItemID(rawValue: 0xf01d)

    func makeTree(_ fixture: StoreFixture, _ name: String, index: String) throws {
        mkdir(fixture.temporary("share/" + name), 0o755)
        mkdir(fixture.temporary("share/\(name)/Data"), 0o755)
        mkdir(fixture.temporary("share/\(name)/Empty"), 0o755)
        try fixture.temporary.write(index, to: "share/\(name)/index.xml")
        try fixture.temporary.write("PNG", to: "share/\(name)/Data/image.png")
    }

    @Test("a folder is moved in whole (the same inodes), recorded as a directory, and found again on reopening")
    func keptWhole() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        try makeTree(fixture, "Old.pages", index: "<one/>")
        let inode = fixture.inode("share/Old.pages/index.xml")
        let record = try store.keep("Old.pages", in: fixture.shareFD, id: Self.id, path: "Story.pages", origin: nil)
        #expect(record.kind == .directory && record.size == 9)
        let content = "share/.fileshare/versions/\(Self.id)/\(record.version)/content"
        #expect(fixture.inode(content + "/index.xml") == inode, "moved, not copied")
        #expect(fixture.read(content + "/Data/image.png") == "PNG")
        #expect(!FileManager.default.fileExists(atPath: fixture.temporary("share/Old.pages")))
        let reopened = try fixture.store()
        #expect(reopened.versions(of: Self.id) == [record])
    }

    @Test("copyTree puts a folder version's tree into an empty folder, empty folders too; a file version is refused")
    func copiedBack() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        try makeTree(fixture, "Old.pages", index: "<one/>")
        let record = try store.keep("Old.pages", in: fixture.shareFD, id: Self.id, path: "Story.pages", origin: nil)
        mkdir(fixture.temporary("share/Back.pages"), 0o755)
        let out = open(fixture.temporary("share/Back.pages"), O_RDONLY | O_DIRECTORY)
        defer { close(out) }
        try store.copyTree(record.version, of: Self.id, into: out)
        #expect(fixture.read("share/Back.pages/index.xml") == "<one/>")
        #expect(fixture.read("share/Back.pages/Data/image.png") == "PNG")
        var isFolder: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: fixture.temporary("share/Back.pages/Empty"), isDirectory: &isFolder))
        #expect(isFolder.boolValue)
        try fixture.write("plain", to: "a.txt")
        let file = try store.keep("a.txt", in: fixture.shareFD, id: Self.id, path: "a.txt", origin: nil)
        #expect(file.kind == .file)
        #expect(throws: VersionError.self) { try store.copyTree(file.version, of: Self.id, into: out) }
    }

    @Test("a copy of a folder that stays (keepCopy) leaves it in place")
    func copyOfAFolder() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        try makeTree(fixture, "Stays.pages", index: "<stays/>")
        let fd = open(fixture.temporary("share/Stays.pages"), O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        let record = try store.keepCopy(of: fd, id: Self.id, path: "Stays.pages", origin: nil)
        #expect(record.kind == .directory)
        #expect(fixture.read("share/Stays.pages/index.xml") == "<stays/>")
        #expect(
            fixture.read("share/.fileshare/versions/\(Self.id)/\(record.version)/content/index.xml") == "<stays/>")
    }
}
