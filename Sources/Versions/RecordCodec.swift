import ChangeLog
import FileWatching
import Foundation

/// The `meta.json` of a version or a trash entry. The name and the id are
/// not in it: they are the entry's folder names, so a record cannot
/// disagree with where it is.
enum RecordCodec {
    private struct Origin: Codable {
        var face: String
        var client: String
        var user: String?
        var method: String

        init(_ origin: ChangeOrigin) {
            face = origin.face
            client = origin.client
            user = origin.user
            method = origin.method
        }
        var origin: ChangeOrigin { ChangeOrigin(face: face, client: client, user: user, method: method) }
    }

    private struct VersionFields: Codable {
        var format = 1
        var path: String
        var size: Int64
        var modified: Int64
        var saved: Int64
        var origin: Origin?
        var conflict: Bool
        /// `file` or `directory`; absent in records written before folders were kept (all files).
        var kind: String?
    }

    private struct TrashFields: Codable {
        var format = 1
        var path: String
        var id: String?
        var kind: String
        var size: Int64
        var deleted: Int64
        var by: Origin?
    }

    static func encode(_ record: VersionRecord) -> [UInt8] {
        encode(
            VersionFields(
                path: record.path, size: record.size, modified: record.modified, saved: record.saved,
                origin: record.origin.map(Origin.init), conflict: record.conflict,
                kind: record.kind == .directory ? "directory" : "file"))
    }

    static func encode(_ record: TrashRecord) -> [UInt8] {
        encode(
            TrashFields(
                path: record.path, id: record.id?.description, kind: record.kind.description, size: record.size,
                deleted: record.deleted, by: record.by.map(Origin.init)))
    }

    static func version(_ bytes: [UInt8], version: String, id: ItemID) throws(VersionError) -> VersionRecord {
        let fields: VersionFields = try decode(bytes)
        return VersionRecord(
            version: version, id: id, path: fields.path, size: fields.size, modified: fields.modified,
            saved: fields.saved, origin: fields.origin?.origin, conflict: fields.conflict,
            kind: fields.kind == "directory" ? .directory : .file)
    }

    static func trash(_ bytes: [UInt8], trashId: String) throws(VersionError) -> TrashRecord {
        let fields: TrashFields = try decode(bytes)
        let kinds: [String: ItemKind] = ["file": .file, "directory": .directory, "symlink": .symlink, "other": .other]
        guard let kind = kinds[fields.kind] else {
            throw VersionError(.io, "the trash record \(trashId) has an unknown kind '\(fields.kind)'")
        }
        return TrashRecord(
            trashId: trashId, path: fields.path, id: fields.id.flatMap(ItemID.init), kind: kind, size: fields.size,
            deleted: fields.deleted, by: fields.by?.origin)
    }

    private static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every field is a string, a number or a Boolean: encoding cannot fail.
        return Array((try? encoder.encode(value)) ?? Data())
    }

    private static func decode<T: Decodable>(_ bytes: [UInt8]) throws(VersionError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw VersionError(.io, "a damaged record: \(error)")
        }
    }
}
