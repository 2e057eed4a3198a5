import ChangeLog
import FileWatching
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// A clock a test moves by hand.
final class TestClock: Sendable {
    private let time = Atomic<Int64>(1_700_000_000_000_000_000)
    var now: Int64 { time.load(ordering: .relaxed) }
    func advance(_ nanoseconds: Int64) { time.add(nanoseconds, ordering: .relaxed) }
    var function: @Sendable () -> Int64 { { self.now } }
}

/// A shared folder and its private store folders, in a fresh temporary folder.
struct StoreFixture {
    let temporary: TemporaryFolder
    let clock = TestClock()
    let logger = Logger(label: "versions-test")
    let shareFD: Int32

    init(function: String = #function) throws {
        temporary = try TemporaryFolder(function: function)
        mkdir(temporary("share"), 0o755)
        mkdir(temporary("share/.fileshare"), 0o700)
        shareFD = open(temporary("share"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    var versionsPath: String { temporary("share/.fileshare/versions") }
    var trashPath: String { temporary("share/.fileshare/trash") }

    func store(_ retention: VersionRetention = VersionRetention()) throws -> VersionStore {
        try VersionStore(path: versionsPath, retention: retention, logger: logger, clock: clock.function)
    }

    func trash(_ retention: TrashRetention = TrashRetention()) throws -> Trash {
        try Trash(path: trashPath, retention: retention, logger: logger, clock: clock.function)
    }

    /// Writes a new file at `name` (a new inode, as the server's renames
    /// make: a kept version shares the old one's).
    func write(_ text: String, to name: String) throws {
        unlink(temporary("share/" + name))
        try temporary.write(text, to: "share/" + name)
    }

    func read(_ relative: String) -> String? {
        (try? String(contentsOfFile: temporary(relative), encoding: .utf8))
    }

    func inode(_ relative: String) -> UInt64? {
        var info = stat()
        return stat(temporary(relative), &info) == 0 ? UInt64(info.st_ino) : nil
    }

    func content(of store: VersionStore, _ version: String, of id: ItemID) throws -> String {
        let fd = try store.openContent(version, of: id)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &bytes, bytes.count)
        return String(decoding: bytes[..<max(0, count)], as: UTF8.self)
    }
}

@Suite("Version store on disk")
struct VersionStoreTests {
    static let id = ItemID(rawValue: 0xabc)
    static let origin = ChangeOrigin(face: "api", client: "127.0.0.1:1", user: "me", method: "PUT")

    @Test func keepingLinksTheReplacedInodeAndSurvivesTheReplace() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        try fixture.write("first", to: "a.txt")
        let inode = fixture.inode("share/a.txt")
        let record = try store.keep("a.txt", in: fixture.shareFD, id: Self.id, path: "a.txt", origin: Self.origin)
        // The same inode: no byte copied.
        #expect(fixture.inode("share/.fileshare/versions/\(Self.id)/\(record.version)/content") == inode)
        try fixture.write("second", to: "new")
        #expect(rename(fixture.temporary("share/new"), fixture.temporary("share/a.txt")) == 0)
        #expect(try fixture.content(of: store, record.version, of: Self.id) == "first")
        #expect(record.size == 5 && record.origin == Self.origin && !record.conflict && record.path == "a.txt")
        // Read again from the disk, the record is the same.
        let reopened = try fixture.store()
        #expect(reopened.versions(of: Self.id) == [record])
    }

    @Test func aCopyIsKeptOfContentThatStays() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        try fixture.write("stays", to: "b.txt")
        let fd = open(fixture.temporary("share/b.txt"), O_RDONLY)
        defer { close(fd) }
        let record = try store.keepCopy(of: fd, id: Self.id, path: "b.txt", origin: nil, conflict: true)
        #expect(
            fixture.inode("share/.fileshare/versions/\(Self.id)/\(record.version)/content")
                != fixture.inode("share/b.txt"))
        #expect(try fixture.content(of: store, record.version, of: Self.id) == "stays")
        #expect(record.conflict)
    }

    @Test func versionsAreNewestFirstAndUniqueWithinANanosecond() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        for text in ["one", "two", "three"] {
            try fixture.write(text, to: "c.txt")
            let fd = open(fixture.temporary("share/c.txt"), O_RDONLY)
            defer { close(fd) }
            // The clock stands still: the names still differ.
            try store.keepCopy(of: fd, id: Self.id, path: "c.txt", origin: nil)
        }
        let versions = store.versions(of: Self.id)
        #expect(Set(versions.map(\.version)).count == 3)
        #expect(
            try versions.map { try fixture.content(of: store, $0.version, of: Self.id) } == ["three", "two", "one"])
    }

    @Test func retentionRunsAfterEachKeep() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store(VersionRetention(maximumCount: 2, maximumAge: 10_000_000_000, maximumBytes: nil))
        for index in 0..<4 {
            try fixture.write("v\(index)", to: "d.txt")
            try store.keep("d.txt", in: fixture.shareFD, id: Self.id, path: "d.txt", origin: nil)
            fixture.clock.advance(1_000_000_000)
        }
        #expect(
            try store.versions(of: Self.id).map { try fixture.content(of: store, $0.version, of: Self.id) } == [
                "v3", "v2",
            ])
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: fixture.temporary("share/.fileshare/versions/\(Self.id)")
            ).count == 2)
        // By age: eleven seconds on, only the one just kept of another item stays.
        fixture.clock.advance(11_000_000_000)
        try fixture.write("other", to: "e.txt")
        let other = ItemID(rawValue: 0xdef)
        try store.keep("e.txt", in: fixture.shareFD, id: other, path: "e.txt", origin: nil)
        #expect(store.versions(of: Self.id).isEmpty)
        #expect(store.versions(of: other).count == 1)
        #expect(!FileManager.default.fileExists(atPath: fixture.temporary("share/.fileshare/versions/\(Self.id)")))
    }

    @Test func aHalfMadeVersionIsDroppedOnStart() throws {
        let fixture = try StoreFixture()
        let kept: VersionRecord
        do {
            let store = try fixture.store()
            try fixture.write("whole", to: "f.txt")
            kept = try store.keep("f.txt", in: fixture.shareFD, id: Self.id, path: "f.txt", origin: nil)
        }
        // What a keep killed at each step leaves: a temporary folder with
        // content and no record, and a version folder without its record.
        let versions = fixture.versionsPath
        try FileManager.default.createDirectory(atPath: versions + "/.tmp-dead", withIntermediateDirectories: true)
        try fixture.temporary.write("partial", to: "share/.fileshare/versions/.tmp-dead/content")
        let broken = versions + "/\(Self.id)/" + StoreName.make(nanoseconds: 5)
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        try fixture.temporary.write(
            "no record", to: "share/.fileshare/versions/\(Self.id)/\(StoreName.make(nanoseconds: 5))/content")
        let store = try fixture.store()
        #expect(store.versions(of: Self.id) == [kept])
        #expect(!FileManager.default.fileExists(atPath: versions + "/.tmp-dead"))
        #expect(!FileManager.default.fileExists(atPath: broken))
    }

    @Test func resolveKeepsTheChosenAndDiscardsTheOtherConflicts() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        var records: [VersionRecord] = []
        for (text, conflict) in [("plain", false), ("mine", true), ("theirs", true)] {
            try fixture.write(text, to: "g.txt")
            let fd = open(fixture.temporary("share/g.txt"), O_RDONLY)
            defer { close(fd) }
            records.append(try store.keepCopy(of: fd, id: Self.id, path: "g.txt", origin: nil, conflict: conflict))
            fixture.clock.advance(1)
        }
        #expect(throws: VersionError.self) { try store.resolve(Self.id, keep: [StoreName.make(nanoseconds: 1)]) }
        #expect(store.versions(of: Self.id).filter(\.conflict).count == 2)
        let after = try store.resolve(Self.id, keep: [records[1].version])
        #expect(after.map(\.version) == [records[1].version, records[0].version])
        #expect(after.allSatisfy { !$0.conflict })
        // The mark is cleared on disk too.
        #expect(try fixture.store().versions(of: Self.id).allSatisfy { !$0.conflict })
    }

    @Test func versionsMoveToAnotherID() throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        let other = ItemID(rawValue: 0x123)
        for text in ["old", "older"] {
            try fixture.write(text, to: "h.txt")
            try store.keep("h.txt", in: fixture.shareFD, id: Self.id, path: "h.txt", origin: nil)
            fixture.clock.advance(1)
        }
        try store.moveVersions(of: Self.id, to: other)
        #expect(store.versions(of: Self.id).isEmpty)
        #expect(
            try store.versions(of: other).map { try fixture.content(of: store, $0.version, of: other) } == [
                "older", "old",
            ])
        #expect(try fixture.store().versions(of: other).count == 2)
        #expect(!FileManager.default.fileExists(atPath: fixture.versionsPath + "/\(Self.id)"))
    }

    @Test(arguments: ["../../x", "00000000000000000001/../..", "", "1"])
    func hostileVersionNamesAreRefusedBeforeTheDisk(_ name: String) throws {
        let fixture = try StoreFixture()
        let store = try fixture.store()
        #expect {
            try store.openContent(name, of: Self.id)
        } throws: { ($0 as? VersionError)?.code == .invalidName }
        #expect {
            try store.openContent(StoreName.make(nanoseconds: 1), of: Self.id)
        } throws: { ($0 as? VersionError)?.code == .notFound }
    }
}

@Suite("Trash on disk")
struct TrashTests {
    static let origin = ChangeOrigin(face: "dav", client: "127.0.0.1:2", method: "DELETE")

    @Test func aDeleteIsARenameAndARestorePutsTheSameInodeBack() throws {
        let fixture = try StoreFixture()
        let trash = try fixture.trash()
        try FileManager.default.createDirectory(
            atPath: fixture.temporary("share/dir/sub"), withIntermediateDirectories: true)
        try fixture.write("12345", to: "dir/sub/a")
        try fixture.write("123", to: "dir/b")
        let inode = fixture.inode("share/dir")
        let record = try trash.put("dir", in: fixture.shareFD, path: "dir", id: ItemID(rawValue: 7), by: Self.origin)
        #expect(record.kind == .directory && record.size == 8 && record.by == Self.origin && record.path == "dir")
        #expect(fixture.inode("share/dir") == nil)
        #expect(fixture.inode("share/.fileshare/trash/\(record.trashId)/item") == inode)
        #expect(try fixture.trash().items == [record])
        let (restored, name) = try trash.restore(record.trashId) { entry, item in
            #expect(renameat(entry, item, fixture.shareFD, "dir") == 0)
            return "dir"
        }
        #expect(restored == record && name == "dir")
        #expect(fixture.inode("share/dir") == inode && fixture.read("share/dir/sub/a") == "12345")
        #expect(trash.items.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.trashPath).isEmpty)
    }

    @Test func anEntryWithoutItsItemIsDroppedOnStart() throws {
        let fixture = try StoreFixture()
        let kept: TrashRecord
        do {
            let trash = try fixture.trash()
            try fixture.write("x", to: "x")
            kept = try trash.put("x", in: fixture.shareFD, path: "x", id: nil, by: nil)
        }
        // A delete killed after the record, before the item moved in.
        let half = fixture.trashPath + "/" + StoreName.make(nanoseconds: 3)
        try FileManager.default.createDirectory(atPath: half, withIntermediateDirectories: true)
        try fixture.temporary.write("{}", to: "share/.fileshare/trash/\(StoreName.make(nanoseconds: 3))/meta.json")
        try FileManager.default.createDirectory(
            atPath: fixture.trashPath + "/.tmp-1", withIntermediateDirectories: true)
        let trash = try fixture.trash()
        #expect(trash.items == [kept])
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.trashPath) == [kept.trashId])
    }

    @Test func purgeAndRetentionRemoveForGood() throws {
        let fixture = try StoreFixture()
        let trash = try fixture.trash(TrashRetention(maximumAge: 10_000_000_000, maximumBytes: 100))
        try fixture.write(String(repeating: "a", count: 60), to: "a")
        let a = try trash.put("a", in: fixture.shareFD, path: "a", id: nil, by: nil)
        fixture.clock.advance(1)
        try fixture.write(String(repeating: "b", count: 60), to: "b")
        let b = try trash.put("b", in: fixture.shareFD, path: "b", id: nil, by: nil)
        // Over 100 bytes: the older went.
        #expect(trash.items == [b])
        #expect(throws: VersionError.self) { try trash.item(a.trashId) }
        try trash.purge(b.trashId)
        #expect(trash.items.isEmpty)
        #expect(throws: VersionError.self) { try trash.purge("../" + b.trashId) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.trashPath).isEmpty)
    }
}
