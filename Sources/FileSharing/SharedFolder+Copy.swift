import CFileshareShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension SharedFolder {
    /// Whether something is at `path` (not following a final symbolic link); `nil` when not.
    func existingKind(_ path: SharePath) throws(ShareError) -> Metadata.Kind? {
        if path.isRoot { return .directory }
        let parentFD = try open(path.parent, flags: O_RDONLY | O_DIRECTORY)
        defer { close(parentFD) }
        var raw = cfs_stat()
        let result = cfs_lstat_at(parentFD, path.name, &raw)
        if result == -ENOENT { return nil }
        if result < 0 { throw SharedFolder.error(-result, path) }
        return Metadata(raw).kind
    }

    /// Opens the folder that holds `path`: 409 when it is missing (WebDAV
    /// never creates parents).
    func existingParent(of path: SharePath) throws(ShareError) -> Int32 {
        do throws(ShareError) {
            return try open(path.parent, flags: O_RDONLY | O_DIRECTORY)
        } catch where error.kind == .notFound {
            throw ShareError(.conflict, "the folder '\(path.parent)' does not exist; create it first")
        }
    }

    /// Copies a file or folder (with everything in it unless `shallow`) into
    /// place in one rename: the copy is made in the staging folder, flushed,
    /// and renamed over the destination (replaced only when `overwrite`).
    /// Returns whether something was replaced.
    func copy(from source: SharePath, to destination: SharePath, shallow: Bool, overwrite: Bool) throws(ShareError) -> Bool {
        guard !destination.isRoot else { throw ShareError(.forbidden, "the shared folder itself cannot be replaced") }
        if destination.isSame(asOrUnder: source) {
            throw ShareError(.forbidden, "a folder cannot be copied into itself")
        }
        let sourceFD = try open(source, flags: O_RDONLY | O_NONBLOCK)
        defer { close(sourceFD) }
        let metadata = try SharedFolder.metadata(fd: sourceFD, path: source)
        let parentFD = try existingParent(of: destination)
        defer { close(parentFD) }
        let staging = "copy-" + UUID().uuidString
        do throws(ShareError) {
            try copyItem(sourceFD, kind: metadata.kind, named: staging, into: stagingFD, shallow: shallow, path: source)
            return try place(staging, at: destination, in: parentFD, overwrite: overwrite)
        } catch {
            try? SharedFolder.removeEntry(staging, in: stagingFD, path: .root)
            throw error
        }
    }

    /// Renames a finished staging item over `name` in `parentFD`.
    private func place(_ staging: String, at destination: SharePath, in parentFD: Int32, overwrite: Bool) throws(ShareError) -> Bool {
        let first = cfs_renameat2(stagingFD, staging, parentFD, destination.name, 1)  // RENAME_NOREPLACE
        if first == 0 { return false }
        guard first == -EEXIST else { throw SharedFolder.error(-first, destination) }
        guard overwrite else { throw ShareError(.preconditionFailed, "'\(destination)' exists and Overwrite is F") }
        let existing = try metadataNoFollow(name: destination.name, in: parentFD, path: destination)
        var stagingRaw = cfs_stat()
        _ = cfs_lstat_at(stagingFD, staging, &stagingRaw)
        if existing.kind == .directory || Metadata(stagingRaw).kind == .directory {
            try SharedFolder.removeEntry(destination.name, in: parentFD, path: destination)
            let second = cfs_renameat2(stagingFD, staging, parentFD, destination.name, 1)
            if second < 0 { throw SharedFolder.error(-second, destination) }
        } else {
            let second = cfs_renameat2(stagingFD, staging, parentFD, destination.name, 0)
            if second < 0 { throw SharedFolder.error(-second, destination) }
        }
        return true
    }

    /// Copies an open item as `name` into the open folder `directory`.
    private func copyItem(_ fd: Int32, kind: Metadata.Kind, named name: String, into directory: Int32, shallow: Bool, path: SharePath)
        throws(ShareError)
    {
        var raw = cfs_stat()
        _ = cfs_fstat(fd, &raw)
        let mode = raw.mode & 0o7777
        switch kind {
        case .file:
            let out = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            if out < 0 { throw SharedFolder.error(errno, path) }
            defer { close(out) }
            let copied = cfs_copy_file(fd, out)
            if copied < 0 { throw SharedFolder.error(Int32(-copied), path) }
            DeadProperties.copy(from: fd, to: out)
            if cfs_fsync(out) < 0 { throw SharedFolder.error(errno, path) }
        case .directory:
            let made = cfs_mkdirat(directory, name, mode == 0 ? 0o755 : mode | 0o700)
            if made < 0 { throw SharedFolder.error(-made, path) }
            let out = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if out < 0 { throw SharedFolder.error(errno, path) }
            defer { close(out) }
            DeadProperties.copy(from: fd, to: out)
            if shallow { return }
            for child in try SharedFolder.entries(fd: fd, path: path) {
                var childRaw = cfs_stat()
                guard cfs_lstat_at(fd, child, &childRaw) == 0 else { continue }
                let childKind = Metadata(childRaw).kind
                let childPath = (try? path.appending(child)) ?? path
                switch childKind {
                case .symlink:
                    var target = [CChar](repeating: 0, count: 4097)
                    guard cfs_readlink_at(fd, child, &target, target.count) >= 0 else { continue }
                    let made = cfs_symlink_at(target, out, child)
                    if made < 0 { throw SharedFolder.error(-made, childPath) }
                case .file, .directory:
                    let flags = childKind == .directory ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK
                    let inner = openat(fd, child, flags | O_NOFOLLOW | O_CLOEXEC)
                    if inner < 0 { throw SharedFolder.error(errno, childPath) }
                    defer { close(inner) }
                    try copyItem(inner, kind: childKind, named: child, into: out, shallow: false, path: childPath)
                case .other:
                    continue  // fifos, sockets and devices are not copied
                }
            }
        case .symlink, .other:
            throw ShareError(.forbidden, "'\(path)' is not a file or folder")
        }
    }

    // MARK: Empty files held back

    /// The attribute that names where a held-back empty file belongs.
    static let placeholderTarget = "user.fileshare.target"

    /// An empty file in the staging folder that will become `path`: WebDAV
    /// clients create a file empty before they write it (Finder's empty PUT,
    /// Windows' LOCK on a new name), and holding the empty file back until
    /// its content comes means one `added` event for one new file.
    func createPlaceholder(for path: SharePath) throws(ShareError) -> String {
        let name = "dav-empty-" + UUID().uuidString
        let fd = try createStagingFile(named: name)
        defer { close(fd) }
        let target = Array(path.description.utf8)
        _ = target.withUnsafeBytes { cfs_fset_xattr(fd, SharedFolder.placeholderTarget, $0.baseAddress, $0.count) }
        return name
    }

    /// Puts a held-back empty file in place, unless something took its name
    /// meanwhile (then it is dropped: what is there wins).
    func materializePlaceholder(named name: String, at path: SharePath) throws(ShareError) {
        let fd = openat(stagingFD, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd >= 0 {
            _ = cfs_fremove_xattr(fd, SharedFolder.placeholderTarget)
            _ = cfs_fsync(fd)
            close(fd)
        }
        defer { discardStagingFile(named: name) }
        let parentFD = try existingParent(of: path)
        defer { close(parentFD) }
        let result = cfs_renameat2(stagingFD, name, parentFD, path.name, 1)
        if result < 0 && result != -EEXIST { throw SharedFolder.error(-result, path) }
    }

    /// Empty files held back when the server stopped: put in place now.
    func recoverPlaceholders() {
        guard let names = try? SharedFolder.entries(fd: stagingFD, path: .root) else { return }
        for name in names where name.hasPrefix("dav-empty-") {
            var buffer = [UInt8](repeating: 0, count: 8192)
            let fd = openat(stagingFD, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { cfs_fget_xattr(fd, SharedFolder.placeholderTarget, $0.baseAddress, $0.count) }
            close(fd)
            guard count > 0, let text = String(validating: buffer[..<count], as: UTF8.self),
                let path = try? SharePath(plain: text), !path.isRoot
            else {
                discardStagingFile(named: name)
                continue
            }
            try? materializePlaceholder(named: name, at: path)
        }
    }
}

extension SharedFolder {
    /// A folder's shared members for WebDAV: hidden names left out, links
    /// that stay inside shown as what they point to, links that lead out (or
    /// nowhere) left out, and the WebDAV properties when asked.
    func davChildren(of path: SharePath, properties: Bool = false)
        throws(ShareError) -> [(name: String, metadata: Metadata, properties: DeadProperties.Entries)]
    {
        let directory = try open(path, flags: O_RDONLY | O_DIRECTORY)
        defer { close(directory) }
        var result: [(name: String, metadata: Metadata, properties: DeadProperties.Entries)] = []
        for name in try SharedFolder.entries(fd: directory, path: path) where !name.hasPrefix(".") {
            var raw = cfs_stat()
            guard cfs_lstat_at(directory, name, &raw) == 0 else { continue }
            var metadata = Metadata(raw)
            if metadata.kind == .symlink {
                guard let child = try? path.appending(name), let target = try? self.metadata(child) else { continue }
                metadata = target
            }
            guard metadata.kind == .file || metadata.kind == .directory else { continue }
            result.append((name, metadata, properties ? DeadProperties.read(name: name, in: directory) : []))
        }
        return result
    }
}
