import CFileshareShim
import ChangeLog
public import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// Package documents: a folder read and saved whole.
///
/// A save writes the whole package into the staging folder (each file
/// flushed, then each folder, the package's own last) and exchanges it with
/// the folder at the path in one `renameat2(RENAME_EXCHANGE)`: a reader of
/// the path finds the old package or the new one, never a mix. The old tree
/// is then in hand, whole, to compare (by ``ContentStamp/tree``) with the one
/// the document last read or wrote and to hand to the keeper, as a bytes
/// document's old file is.
///
/// What is not atomic: a reader that opened the old package's folder, or a
/// file inside it, before the exchange goes on reading the old tree (which
/// lives on, as a version or until the keeper removes it); a program that
/// writes into a file of the package while a save runs writes into the old
/// tree, which the save then keeps as a conflict version.
extension DocumentFolder {
    /// The package at `path` and its stamp. The stamp is taken before the
    /// read: a write meanwhile makes the next save a conflict, never a loss.
    /// - Throws: ``DocumentsError/Code/notPackage`` when a file is there,
    ///   ``DocumentsError/Code/tooLarge`` beyond ``packageLimits``.
    public func readPackage(_ path: ItemPath) throws(DocumentsError) -> (contents: PackageContents, stamp: ContentStamp)
    {
        let fd = try openFile(path, flags: O_RDONLY)
        defer { close(fd) }
        guard try status(of: fd, path: path).kind == .directory else {
            throw DocumentsError(.notPackage, "'\(path)' is a file, not a package")
        }
        guard let stamp = PackageTree.stamp(fd, limits: packageLimits) else {
            throw DocumentsError(.notFound, "'\(path)' vanished while it was read")
        }
        return (try PackageTree.read(fd, limits: packageLimits, path: path), stamp)
    }

    /// What is at `path`, a file's bytes or a package, and its stamp.
    public func readDocument(_ path: ItemPath) throws(DocumentsError) -> (
        contents: DocumentContents, stamp: ContentStamp
    ) {
        let fd = try openFile(path, flags: O_RDONLY)
        let kind = try? status(of: fd, path: path).kind
        close(fd)
        if kind == .directory {
            let (package, stamp) = try readPackage(path)
            return (.package(package), stamp)
        }
        let (bytes, stamp) = try read(path)
        return (.bytes(bytes), stamp)
    }

    /// Saves `contents` as the package at `path` (the document `id`),
    /// safely and whole. `known` is the package the document last read or
    /// wrote (`nil`: it knew none).
    /// - Parameter creating: Refuse when something is at `path` already.
    /// - Returns: What happened to the package replaced, and the stamp of the new one.
    public func savePackage(
        _ contents: PackageContents, to path: ItemPath, id: ItemID?, known: ContentStamp?, creating: Bool = false
    ) throws(DocumentsError) -> (SaveOutcome, ContentStamp) {
        guard contents.files.count + contents.folders.count <= packageLimits.maximumItems,
            contents.byteCount <= packageLimits.maximumBytes
        else {
            throw DocumentsError(
                .tooLarge,
                "the package '\(path)' is larger than \(packageLimits.maximumItems) items or \(packageLimits.maximumBytes) bytes"
            )
        }
        return try savePackage(contents, to: path, id: id, known: known, creating: creating, attempts: 3)
    }

    private func savePackage(
        _ contents: PackageContents, to path: ItemPath, id: ItemID?, known: ContentStamp?, creating: Bool,
        attempts: Int
    ) throws(DocumentsError) -> (SaveOutcome, ContentStamp) {
        let parent = try openParent(of: path)
        defer { if parent != rootFD { close(parent) } }
        let name = leaf(of: path)
        let staged = PackageTree.stagingPrefix + String(UInt64.random(in: .min ... .max), radix: 16)
        let marker = staged + PackageTree.partialSuffix
        // The mark goes first, and is on disk before the folder is: a crash
        // at any moment until the tree is complete leaves the mark beside it.
        let markFD = openat(stagingFD, marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard markFD >= 0 else { throw DocumentsError.system(Errno(rawValue: errno), doing: "staging", path: path) }
        close(markFD)
        var placed = false
        defer {
            if !placed { try? PackageTree.remove(staged, in: stagingFD) }
            _ = cfs_unlinkat(stagingFD, marker, 0)
        }
        try check(cfs_fsync(stagingFD), doing: "staging", path: path)
        try check(cfs_mkdirat(stagingFD, staged, 0o755), doing: "staging", path: path)
        let fd = cfs_open_beneath(stagingFD, staged, O_RDONLY | O_DIRECTORY, 0)
        if fd < 0 { throw DocumentsError.system(Errno(rawValue: -fd), doing: "staging", path: path) }
        defer { close(fd) }
        // Keep the permissions of the package it replaces.
        if let existing = try? FileStatus(name: name, in: parent), existing.kind == .directory {
            _ = cfs_fchmod(fd, existing.permissions)
        }
        try PackageTree.write(contents, into: fd, path: path)
        // Complete: the mark goes, on disk before the exchange, so what a
        // crash leaves marked is never a tree swapped out of the folder.
        try check(cfs_unlinkat(stagingFD, marker, 0), doing: "staging", path: path)
        try check(cfs_fsync(stagingFD), doing: "staging", path: path)

        switch try place(staged, at: name, in: parent, path: path, creating: creating, attempts: attempts) {
        case .exchanged:
            placed = true
            return try settlePackage(swappedOut: staged, fd: fd, parent: parent, path: path, id: id, known: known)
        case .created:
            placed = true
            return (.created, try placedStamp(fd, path: path))
        case .raced:
            return try savePackage(contents, to: path, id: id, known: known, creating: false, attempts: attempts - 1)
        }
    }

    /// After the exchange: the old package is in the staging folder under
    /// `swappedOut`. Compare it with what the document knew, and hand it to the keeper.
    private func settlePackage(
        swappedOut: String, fd: Int32, parent: Int32, path: ItemPath, id: ItemID?, known: ContentStamp?
    ) throws(DocumentsError) -> (SaveOutcome, ContentStamp) {
        let old: FileStatus
        do {
            old = try FileStatus(name: swappedOut, in: stagingFD)
        } catch {
            throw DocumentsError.system(error, doing: "inspecting the replaced content of", path: path)
        }
        if old.kind != .directory {
            // A file took the package's place: put it back, and refuse.
            _ = cfs_renameat2(stagingFD, swappedOut, parent, leaf(of: path), UInt32(CFS_RENAME_EXCHANGE))
            try? PackageTree.remove(swappedOut, in: stagingFD)
            throw DocumentsError(.notPackage, "'\(path)' is a file now; save the package under another name")
        }
        _ = cfs_fsync(parent)
        let oldFD = cfs_open_beneath(stagingFD, swappedOut, O_RDONLY | O_DIRECTORY, 0)
        // Someone else's tree, or one a program still writes into (its
        // writes after the exchange land in the swapped-out tree): kept.
        let conflict: Bool
        if oldFD >= 0 {
            let limits = packageLimits
            conflict = DocumentFolder.replacedByOthers(
                known: known, stamp: PackageTree.stamp(oldFD, limits: limits),
                restamp: { PackageTree.stamp(oldFD, limits: limits) }, hasWriters: { PackageTree.hasWriters(oldFD) })
            close(oldFD)
        } else {
            conflict = true
        }
        let version = try keeper.keep(swappedOut, in: stagingFD, path: path, id: id, conflict: conflict)
        let stamp = try placedStamp(fd, path: path)
        if conflict, let version { return (.conflict(version: version), stamp) }
        return (.clean, stamp)
    }

    private func placedStamp(_ fd: Int32, path: ItemPath) throws(DocumentsError) -> ContentStamp {
        guard let stamp = PackageTree.stamp(fd, limits: packageLimits) else {
            throw DocumentsError(.notFound, "'\(path)' vanished right after it was saved")
        }
        return stamp
    }

    /// The stamp of the package `name` in the open folder `parent`.
    func packageStamp(_ name: String, in parent: Int32) -> ContentStamp? {
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return PackageTree.stamp(fd, limits: packageLimits)
    }

    /// Removes what a crash left in the staging folder while a package was
    /// being written: the folders still marked incomplete, and their marks.
    /// Unmarked folders are left alone: one may be a package a save swapped
    /// out before the keeper took it, someone's content.
    func removeHalfWrittenPackages() {
        guard let names = try? folderNames(descriptor: stagingFD) else { return }
        for mark in names where mark.hasPrefix(PackageTree.stagingPrefix) && mark.hasSuffix(PackageTree.partialSuffix) {
            let staged = String(mark.dropLast(PackageTree.partialSuffix.count))
            // A save under way in another process keeps its mark: only old marks are a crash's.
            if let status = try? FileStatus(name: mark, in: stagingFD),
                FileChangeLog.wallClock() - status.modified < DocumentFolder.abandonedAfter
            {
                continue
            }
            try? PackageTree.remove(staged, in: stagingFD)
            _ = cfs_unlinkat(stagingFD, mark, 0)
        }
        _ = cfs_fsync(stagingFD)
    }

    /// How old a mark must be to be a crash's rather than a save's under way: ten minutes.
    static let abandonedAfter: Int64 = 600_000_000_000
}
