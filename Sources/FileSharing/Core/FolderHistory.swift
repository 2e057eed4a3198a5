public import ChangeLog
import FileWatching
import Logging
import Synchronization
public import Versions

/// How much of what the server replaces and deletes is kept: the versions'
/// retention and the trash's (see `Versions`).
public struct HistoryOptions: Sendable, Hashable {
    /// How many versions of a file are kept, for how long, in how many bytes.
    public var versions: VersionRetention
    /// How long deleted items stay in the trash, in how many bytes.
    public var trash: TrashRetention

    /// Creates options; the defaults are `VersionRetention()` and `TrashRetention()`.
    public init(versions: VersionRetention = VersionRetention(), trash: TrashRetention = TrashRetention()) {
        self.versions = versions
        self.trash = trash
    }
}

/// What the shared folder keeps of what the server replaces and deletes:
/// a file replaced by a rename becomes a version of its item (its inode
/// linked into `.fileshare/versions/`, no copy), and an item deleted (or a
/// folder replaced) is renamed into `.fileshare/trash/`. `SharedFolder`
/// calls it at each of those steps, so every face's overwrites and deletes
/// are kept alike.
///
/// Who made the change is the origin `ShareCore.perform` binds in
/// ``origin`` for the work it runs; ids come from the observer
/// (``identify(with:)``), so a version belongs to the item the change
/// feed names.
final class FolderHistory: Sendable {
    let versions: VersionStore
    let trash: Trash
    private let logger: Logger
    private let identifier = Mutex<(@Sendable (SharePath) -> ItemID?)?>(nil)
    private let sessions = Mutex(EditSessions())

    /// The origin of the change being made (bound around the work of one
    /// change, on the thread that does it).
    @TaskLocal static var origin: ChangeOrigin?

    /// The editing session a save belongs to, if its client named one
    /// (bound as ``origin`` is): its saves keep one version, of what the first replaced.
    @TaskLocal static var editSession: EditSession?

    /// Opens (and makes) the version store and the trash in the private folder at `privatePath`.
    init(privatePath: String, options: HistoryOptions, logger: Logger) throws(FolderError) {
        self.logger = logger
        do {
            versions = try VersionStore(path: privatePath + "/versions", retention: options.versions, logger: logger)
            trash = try Trash(path: privatePath + "/trash", retention: options.trash, logger: logger)
        } catch {
            throw FolderHistory.folderError(error, path: .root)
        }
    }

    /// Sets how an item's id is found from its path (the observer's).
    func identify(with identifier: @escaping @Sendable (SharePath) -> ItemID?) {
        self.identifier.withLock { $0 = identifier }
    }

    /// The id of the item at `path`, the entry `name` of the open folder
    /// `directory` whose `lstat` is `status`: the observer's, or, for one it
    /// has not seen yet (made by another program a moment ago), the one it
    /// will give it.
    func id(of path: SharePath, status: FileStatus, name: String, in directory: Int32) -> ItemID {
        identifier.withLock { $0 }?(path) ?? ItemID(identityOf: status, name: name, in: directory)
    }

    /// Keeps the file `name` of the open folder `directory`, about to be
    /// replaced by a rename, as a version of the item at `path`; `nil` when it
    /// is not a regular file (a link is replaced, not kept). If the
    /// replacement then fails, ``forget(_:)`` the version.
    ///
    /// A save of an editing session (``editSession``) over the file that
    /// the same session put there keeps nothing: the session's version was
    /// kept at its first save. `replacement`, the file about to take its
    /// place, is noted for the session's next save.
    func keepReplaced(_ name: String, in directory: Int32, path: SharePath, replacement: FileStatus? = nil)
        throws(FolderError) -> VersionRecord?
    {
        let status: FileStatus
        do throws(Errno) {
            status = try FileStatus(name: name, in: directory)
        } catch {
            if error == .notFound { return nil }
            throw SharedFolder.error(error.rawValue, path, doing: .keepVersion)
        }
        guard status.kind == .file else { return nil }
        let item = self.id(of: path, status: status, name: name, in: directory)
        let session = FolderHistory.editSession
        let keeps = sessions.withLock { sessions in
            let keeps = sessions.keepsVersion(of: status, id: item, session: session)
            if let replacement { sessions.placed(replacement, id: item, session: session) }
            return keeps
        }
        guard keeps else { return nil }
        do {
            return try versions.keep(
                name, in: directory, id: item, path: path.description, origin: FolderHistory.origin)
        } catch {
            throw FolderHistory.folderError(error, path: path)
        }
    }

    /// Keeps the folder `name` of the open folder `directory` (a package's
    /// tree, swapped out of `path` by an exchange) as a version of `id`: moved
    /// into the store whole, no byte copied.
    func keepReplacedFolder(_ name: String, in directory: Int32, id: ItemID, path: SharePath) throws(FolderError) {
        do {
            try versions.keep(name, in: directory, id: id, path: path.description, origin: FolderHistory.origin)
        } catch {
            throw FolderHistory.folderError(error, path: path)
        }
    }

    /// Removes a version kept for a replacement that did not happen (the old content is still in place).
    func forget(_ record: VersionRecord?) {
        guard let record else { return }
        try? versions.remove(record.version, of: record.id)
    }

    /// Moves the item `name` of the open folder `directory` (at `path`) into
    /// the trash, in one rename. An item on another file system than the
    /// shared folder (a mount inside it) cannot be renamed there: it is
    /// removed, as before there was a trash, and the log says so.
    func moveToTrash(_ name: String, in directory: Int32, path: SharePath) throws(FolderError) {
        let id: ItemID? =
            if let status = try? FileStatus(name: name, in: directory) {
                self.id(of: path, status: status, name: name, in: directory)
            } else {
                nil
            }
        do {
            try trash.put(name, in: directory, path: path.description, id: id, by: FolderHistory.origin)
        } catch  where error.code == .crossDevice {
            logger.warning(
                "deleted for good: the item is on another file system than the trash",
                metadata: ["path": "\(path)"])
            try SharedFolder.removeEntry(name, in: directory, path: path)
        } catch {
            throw FolderHistory.folderError(error, path: path)
        }
    }

    /// A store's error as the folder's (the faces know how to answer those).
    static func folderError(_ error: VersionError, path: SharePath) -> FolderError {
        let code: FolderError.Code =
            switch error.code {
            case .notFound, .invalidName: .notFound
            case .noSpace: .noSpace
            case .crossDevice: .unsupported
            default: .io
            }
        return FolderError(code, error.message, operation: .keepVersion, path: path, systemError: error.systemError)
    }
}
