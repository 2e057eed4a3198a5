import ChangeLog
import FileWatching
import Testing

@testable import Versions

@Suite("Record codec (pure)")
struct RecordCodecTests {
    static let origin = ChangeOrigin(face: "dav", client: "[::1]:5", user: "zoë \"q\"", method: "PUT")

    @Test(arguments: [origin, nil] as [ChangeOrigin?])
    func aVersionRoundTrips(origin: ChangeOrigin?) throws {
        let record = VersionRecord(
            version: StoreName.make(nanoseconds: 12), id: ItemID(rawValue: 99), path: "Docs/ü b.txt", size: 5,
            modified: -3, saved: 12, origin: origin, conflict: true)
        let bytes = RecordCodec.encode(record)
        #expect(try RecordCodec.version(bytes, version: record.version, id: record.id) == record)
    }

    @Test(arguments: [ItemKind.file, .directory, .symlink, .other])
    func aTrashRecordRoundTrips(kind: ItemKind) throws {
        let record = TrashRecord(
            trashId: StoreName.make(nanoseconds: 7), path: "a/b", id: kind == .file ? ItemID(rawValue: 1) : nil,
            kind: kind, size: 1 << 40, deleted: 7, by: Self.origin)
        #expect(try RecordCodec.trash(RecordCodec.encode(record), trashId: record.trashId) == record)
    }

    @Test(arguments: ["", "{", "[]", #"{"format":1}"#, #"{"path":"a","kind":"socket","size":1,"deleted":1}"#])
    func aDamagedRecordIsAnError(_ text: String) {
        #expect(throws: VersionError.self) {
            try RecordCodec.version(Array(text.utf8), version: "x", id: ItemID(rawValue: 1))
        }
        #expect(throws: VersionError.self) { try RecordCodec.trash(Array(text.utf8), trashId: "x") }
    }
}
