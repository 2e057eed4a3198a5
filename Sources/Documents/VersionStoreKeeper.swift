public import ChangeLog
public import FileWatching
import Glibc
public import Versions

/// Keeps what a save replaced in the shared folder's version store: the
/// document's own earlier content as an ordinary version, someone else's as a
/// conflict version — the same store the server's faces keep theirs in, so a
/// document's history and the page's are one.
public struct VersionStoreKeeper: ReplacedContentKeeper {
    public let store: VersionStore
    /// Who saves (recorded with each version).
    public let origin: ChangeOrigin?
    /// Where content goes that has no id to be kept under (a name the observer does not report).
    private let fallback: ConflictCopies

    public init(store: VersionStore, origin: ChangeOrigin?, root: String) throws(DocumentsError) {
        self.store = store
        self.origin = origin
        fallback = try ConflictCopies(root: root)
    }

    public func keep(_ name: String, in folder: Int32, path: ItemPath, id: ItemID?, conflict: Bool)
        throws(DocumentsError) -> String?
    {
        guard let id else { return try fallback.keep(name, in: folder, path: path, id: nil, conflict: conflict) }
        let record: VersionRecord
        do {
            record = try store.keep(
                name, in: folder, id: id, path: path.description, origin: origin, conflict: conflict)
        } catch {
            throw DocumentsError(.system, "keeping the replaced content of '\(path)': \(error)")
        }
        // The store linked, moved or copied it: what is left at the staging name can go.
        try? PackageTree.remove(name, in: folder)
        return record.version
    }

    public func reattach(from old: ItemID, to new: ItemID) {
        // A version left under the old id is still whole and listed there: nothing is lost.
        try? store.moveVersions(of: old, to: new)
    }

    public func resolve(_ id: ItemID, discarding: [String]) throws(DocumentsError) {
        let keep = store.versions(of: id).filter { $0.conflict && !discarding.contains($0.version) }.map(\.version)
        do {
            try store.resolve(id, keep: keep)
        } catch {
            throw DocumentsError(.system, "resolving the conflict of \(id): \(error)")
        }
    }
}
