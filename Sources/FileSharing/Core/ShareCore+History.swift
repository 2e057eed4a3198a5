import CFileshareShim
import ChangeLog
import DocumentTypes
import FileWatching
import Logging
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// Versions and the trash, as changes: a restore is made like every other
/// change through the server (`perform`), so it is held against other
/// changes of its path, carries its origin, and keeps what it replaces.
extension ShareCore {
    /// The id of the item at `path`, as the change feed names it.
    /// - Throws: ``FolderError`` when nothing is there.
    func itemID(at path: SharePath) async throws -> ItemID {
        let folder = self.folder
        return try await blocking { () throws(FolderError) -> ItemID in
            // The entry itself, as the observer sees it (a symbolic link is its own item).
            let directory = try folder.parent(of: path, creating: false)
            defer { close(directory) }
            let name = path.isRoot ? "." : path.name
            let status = try folder.metadataNoFollow(name: name, in: directory, path: path)
            return folder.history.id(of: path, status: status, name: name, in: directory)
        }
    }

    /// Puts a kept version's content back at `path` (a copy of it, sharing
    /// extents where the file system can: the version stays). The content it
    /// replaces becomes a version itself. A folder version (a package's tree)
    /// is copied into the staging folder whole and exchanged with the folder
    /// at `path` in one rename; the tree it replaces becomes a version.
    /// - Parameter conditions: What must hold of the file at `path` when it is replaced.
    /// - Returns: The item's id after: `id` for a file; for a folder, the
    ///   one the observer gives the folder put in place (its versions move to it).
    @discardableResult
    func restore(
        version: String, of id: ItemID, at path: SharePath, origin: ChangeOrigin, conditions: WritePreconditions
    ) async throws -> ItemID {
        let folder = self.folder
        let isFolder = try await blocking { () throws -> Bool in
            do throws(VersionError) {
                return try folder.history.versions.version(version, of: id).kind == .directory
            } catch {
                throw FolderHistory.folderError(error, path: path)
            }
        }
        if isFolder {
            return try await restore(folderVersion: version, of: id, at: path, origin: origin, conditions: conditions)
        }
        let staged = try await blocking { () throws -> StagedFile in
            let current = try folder.metadata(path)
            guard current.kind == .file else {
                throw FolderError(.isFolder, "'\(path)' is a folder", operation: .keepVersion, path: path)
            }
            let staged = try StagedFile.create(
                in: folder, prefix: "restore-", mode: mode_t(current.permissions & 0o7777))
            do throws(VersionError) {
                try folder.history.versions.copyContent(version, of: id, to: staged.descriptor)
            } catch {
                throw FolderHistory.folderError(error, path: path)
            }
            return staged
        }
        try await perform([path], origin: origin, conditions: conditions.isEmpty ? [:] : [path: conditions]) {
            _ = try staged.commit(to: path, replacing: .file, creatingParents: false)
        }
        return id
    }

    private func restore(
        folderVersion version: String, of id: ItemID, at path: SharePath, origin: ChangeOrigin,
        conditions: WritePreconditions
    ) async throws -> ItemID {
        let folder = self.folder
        let staged = try await blocking { () throws -> StagedFile in
            let current = try folder.metadata(path)
            guard current.kind == .directory else {
                throw FolderError(
                    .unsupportedKind, "'\(path)' is a file; a folder version restores over a folder",
                    operation: .keepVersion, path: path)
            }
            let staged = try StagedFile.makeFolder(in: folder, prefix: "restore-", mode: current.permissions & 0o7777)
            do throws(VersionError) {
                try folder.history.versions.copyTree(version, of: id, into: staged.descriptor)
            } catch {
                throw FolderHistory.folderError(error, path: path)
            }
            return staged
        }
        try await perform([path], origin: origin, conditions: conditions.isEmpty ? [:] : [path: conditions]) {
            try staged.exchangeFolder(at: path, id: id)
        }
        // The observer sees a new folder take the old one's place, and gives
        // it a new id: the versions go with it, or the listing loses them.
        await observer.sync()
        guard let new = observer.item(at: path.itemPath)?.id, new != id else { return id }
        let versions = folder.history.versions
        do {
            try await blocking { () throws in
                do throws(VersionError) { try versions.moveVersions(of: id, to: new) } catch {
                    throw FolderHistory.folderError(error, path: path)
                }
            }
        } catch {
            logger.warning(
                "the versions of a restored folder stay under its old id",
                metadata: ["path": "\(path)", "error": "\(error)"])
        }
        return new
    }

    /// Puts an item of the trash back where it was, or, when something has
    /// taken that name meanwhile, beside it under the first free name of
    /// `name 2.ext`, `name 3.ext`… (folders missing on the way are made).
    /// It is the same inode as before, renamed back: see the README for
    /// when the observer gives it its old id.
    /// - Returns: Where it went.
    func restore(trashId: String, origin: ChangeOrigin) async throws -> SharePath {
        let folder = self.folder
        let record: TrashRecord
        do {
            record = try folder.history.trash.item(trashId)
        } catch {
            throw FolderHistory.folderError(error, path: .root)
        }
        // A path the trash recorded is one the server wrote; a damaged record's goes to the root.
        let wanted = (try? SharePath(plain: record.path)) ?? SharePath.root.child("restored " + trashId)
        var taken: Set<String> = []
        while true {
            let clashes = taken
            let name = try await blocking {
                UniqueName.make(for: wanted.name) { candidate in
                    if clashes.contains(candidate) { return true }
                    return ((try? folder.existingKind(wanted.parent.child(candidate))) ?? nil) != nil
                }
            }
            let target = wanted.parent.child(name)
            do {
                try await perform([target], origin: origin) {
                    _ = try folder.history.trash.restore(trashId) { entry, item in
                        let parentFD = try folder.parent(of: target, creating: true)
                        defer { close(parentFD) }
                        let result = cfs_renameat2(entry, item, parentFD, target.name, UInt32(CFS_RENAME_NOREPLACE))
                        try SharedFolder.check(result, target, doing: .trash)
                    }
                }
                keepVersions(of: record, restoredAt: target)
                return target
            } catch let error as FolderError where error.code == .exists {
                // Taken between the look and the rename: the next free name.
                taken.insert(name)
            } catch let error as VersionError {
                throw FolderHistory.folderError(error, path: target)
            }
        }
    }

    /// Applies the retention of the versions and of the trash now: they are
    /// after each keep and delete too, but age alone must not wait for the
    /// next save.
    func trimHistory() async {
        let history = folder.history
        try? await blocking {
            history.versions.trim()
            history.trash.trim()
        }
    }

    /// Keeps an item's versions with it when it came back from the trash
    /// under another id than it had (see the README: an id kept across an
    /// atomic save is not the one its inode gives): they move to the id the
    /// observer gives it now. What is inside a restored folder keeps the
    /// versions of the ids its items get.
    private func keepVersions(of record: TrashRecord, restoredAt path: SharePath) {
        guard let old = record.id, let new = observer.item(at: path.itemPath)?.id, new != old else { return }
        do {
            try folder.history.versions.moveVersions(of: old, to: new)
        } catch {
            logger.warning(
                "the versions of a restored item stay under its old id",
                metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
