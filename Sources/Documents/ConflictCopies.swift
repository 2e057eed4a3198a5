import CFileshareShim
import ChangeLog
public import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// The keeper used when no version store is given: conflict versions are
/// kept (someone else's content is never lost) in the private folder's
/// `documents/conflicts/`, named by the document's id, the time and a random
/// part; ordinary replaced content is removed, as a plain save would.
public final class ConflictCopies: ReplacedContentKeeper {
    /// The folder the copies are kept in.
    public let folder: String
    private let fd: Int32

    /// Opens (and makes) `<root>/.fileshare/documents/conflicts`.
    public init(root: String) throws(DocumentsError) {
        folder = root + "/.fileshare/documents/conflicts"
        var made = ""
        for part in [".fileshare", "documents", "conflicts"] {
            made += "/" + part
            let result = cfs_mkdirat(AT_FDCWD, root + made, 0o700)
            if result < 0 && result != -EEXIST {
                throw DocumentsError.system(Errno(rawValue: -result), doing: "making", path: ItemPath(made))
            }
        }
        let opened = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard opened >= 0 else {
            throw DocumentsError.system(Errno(rawValue: errno), doing: "opening", path: ItemPath(folder))
        }
        fd = opened
    }

    deinit { close(fd) }

    public func keep(_ name: String, in folder: Int32, path: ItemPath, id: ItemID?, conflict: Bool)
        throws(DocumentsError) -> String?
    {
        guard conflict else {
            // A file, or a package's whole folder.
            try PackageTree.remove(name, in: folder)
            return nil
        }
        let version = ConflictCopies.versionName(id: id, time: FileChangeLog.wallClock())
        try valueOrError(
            cfs_renameat2(folder, name, fd, version, UInt32(CFS_RENAME_NOREPLACE)),
            doing: "keeping the conflict version of", path: path)
        _ = cfs_fsync(fd)
        return version
    }

    /// Removes the copies a person discarded; the others stay.
    public func resolve(_ id: ItemID, discarding: [String]) throws(DocumentsError) {
        for version in discarding where version.hasPrefix("\(id)-") && !version.contains("/") {
            try PackageTree.remove(version, in: fd)
        }
    }

    /// The copies kept for `old` are `new`'s from now on: each is renamed
    /// to `new`'s prefix, keeping its time and random part (so their order
    /// stays). One that cannot be renamed stays whole under `old`'s name:
    /// nothing is lost, and the next re-attach tries again.
    public func reattach(from old: ItemID, to new: ItemID) {
        let prefix = "\(old)-"
        for version in versions(of: old) {
            let renamed = "\(new)-" + version.dropFirst(prefix.count)
            _ = cfs_renameat2(fd, version, fd, renamed, UInt32(CFS_RENAME_NOREPLACE))
        }
        _ = cfs_fsync(fd)
    }

    /// The conflict versions kept for `id`, oldest first.
    public func versions(of id: ItemID) -> [String] {
        let prefix = "\(id)-"
        return ((try? folderNames(folder)) ?? []).filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// The full path of a kept version.
    public func path(of version: String) -> String { folder + "/" + version }

    /// `ID-TIME-RANDOM`: sorted by time within an id, never clashing.
    static func versionName(id: ItemID?, time: Int64) -> String {
        let timePart = String(UInt64(max(0, time)), radix: 10)
        let padded = String(repeating: "0", count: max(0, 20 - timePart.count)) + timePart
        return
            "\(id.map(String.init(describing:)) ?? "none")-\(padded)-\(String(UInt32.random(in: .min ... .max), radix: 16))"
    }

    private func valueOrError(_ result: Int32, doing what: String, path: ItemPath) throws(DocumentsError) {
        if result < 0 { throw DocumentsError.system(Errno(rawValue: -result), doing: what, path: path) }
    }
}
