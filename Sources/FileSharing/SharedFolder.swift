import CFileshareShim
#if canImport(Glibc)
import Glibc
#endif

/// The shared folder on disk: every access goes through the root's
/// descriptor with `openat2(RESOLVE_BENEATH)`, so no path (`..`, a symbolic
/// link) leads out of it, and the server's own files (staging for uploads)
/// live in a hidden folder inside it, on the same file system, so a finished
/// upload is renamed into place atomically.
///
/// Every method makes blocking system calls: callers run them off the event loops.
final class SharedFolder: Sendable {
    /// The folder's absolute path.
    let rootPath: String
    let rootFD: Int32
    let stagingFD: Int32
    /// Where the server keeps its own files, relative to the root.
    static let privateFolder = ".fileshare"

    struct Metadata: Sendable {
        var kind: Kind
        var size: Int64
        /// Modification time, nanoseconds since the epoch.
        var modified: Int64
        var inode: UInt64
        var device: UInt64
        /// Birth time (nanoseconds since the epoch), or the modification time
        /// where the file system does not record it.
        var created: Int64

        enum Kind: Sendable { case file, directory, symlink, other }

        init(_ raw: cfs_stat) {
            kind =
                switch Int32(raw.kind) {
                case Int32(CFS_KIND_FILE): .file
                case Int32(CFS_KIND_DIRECTORY): .directory
                case Int32(CFS_KIND_SYMLINK): .symlink
                default: .other
                }
            size = Int64(raw.size)
            modified = raw.mtime_ns
            inode = raw.ino
            device = raw.dev
            created = raw.btime_ns != 0 ? raw.btime_ns : raw.mtime_ns
        }

        /// The strong validator of the content: inode, size and modification time.
        var entityTag: String {
            "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(modified, radix: 16))\""
        }
    }

    /// Opens (and creates, if missing) the shared folder and its private staging folder.
    init(rootPath: String) throws(ShareError) {
        mkdir(rootPath, 0o755)
        let fd = Glibc.open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ShareError(.internalError, "cannot open \(rootPath): \(String(cString: strerror(errno)))")
        }
        self.rootFD = fd
        guard let resolved = realpath(rootPath, nil) else {
            throw ShareError(.internalError, "cannot resolve \(rootPath)")
        }
        self.rootPath = String(cString: resolved)
        free(resolved)
        _ = cfs_mkdirat(fd, SharedFolder.privateFolder, 0o700)
        _ = cfs_mkdirat(fd, SharedFolder.privateFolder + "/staging", 0o700)
        let staging = openat(fd, SharedFolder.privateFolder + "/staging", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard staging >= 0 else {
            throw ShareError(.internalError, "cannot create the staging folder in \(rootPath): \(String(cString: strerror(errno)))")
        }
        self.stagingFD = staging
        cleanStaging()
    }

    deinit {
        close(stagingFD)
        close(rootFD)
    }

    // MARK: Errors

    static func error(_ errno: Int32, _ path: SharePath, doing: String = "") -> ShareError {
        let shown = path.isRoot ? "the shared folder" : "'\(path)'"
        switch errno {
        case ENOENT: return ShareError(.notFound, "\(shown): no such file or folder")
        case ENOTDIR: return ShareError(.notFound, "\(shown): a part of the path is not a folder")
        case EXDEV, ELOOP: return ShareError(.forbidden, "\(shown) leads out of the shared folder")
        case EACCES, EPERM: return ShareError(.forbidden, "\(shown): permission denied on the server")
        case ENOSPC, EDQUOT: return ShareError(.insufficientStorage, "the disk is full; free some space and try again")
        case EISDIR: return ShareError(.conflict, "\(shown) is a folder")
        case EEXIST, ENOTEMPTY: return ShareError(.conflict, "\(shown) already exists")
        case ENAMETOOLONG: return ShareError(.badRequest, "\(shown): the name is too long")
        case EINVAL where doing == "move": return ShareError(.conflict, "a folder cannot be moved into itself")
        default: return ShareError(.internalError, "\(shown): \(String(cString: strerror(errno)))")
        }
    }

    // MARK: Opening and reading

    /// Opens a path beneath the root (following symbolic links only while they stay inside).
    func open(_ path: SharePath, flags: Int32 = O_RDONLY, mode: UInt32 = 0o644) throws(ShareError) -> Int32 {
        let result = path.isRoot
            ? cfs_open_beneath(rootFD, ".", flags, mode)
            : cfs_open_beneath(rootFD, path.description, flags, mode)
        if result < 0 { throw SharedFolder.error(-result, path) }
        return result
    }

    /// The metadata of a path (of the target, for a link that stays inside).
    func metadata(_ path: SharePath) throws(ShareError) -> Metadata {
        let fd = try open(path, flags: 0o10000000)  // O_PATH
        defer { close(fd) }
        return try SharedFolder.metadata(fd: fd, path: path)
    }

    static func metadata(fd: Int32, path: SharePath) throws(ShareError) -> Metadata {
        var raw = cfs_stat()
        let result = cfs_fstat(fd, &raw)
        if result < 0 { throw error(-result, path) }
        return Metadata(raw)
    }

    // MARK: Folders

    /// Opens the folder that holds `path`, creating missing folders when asked.
    func parent(of path: SharePath, creating: Bool) throws(ShareError) -> Int32 {
        let parent = path.parent
        if !creating { return try open(parent, flags: O_RDONLY | O_DIRECTORY) }
        var current = try open(.root, flags: O_RDONLY | O_DIRECTORY)
        var prefix = SharePath.root
        for name in parent.components {
            prefix = try prefix.appending(name)
            var next = cfs_open_beneath(rootFD, prefix.description, O_RDONLY | O_DIRECTORY, 0)
            if next == -ENOENT {
                let made = cfs_mkdirat(current, name, 0o755)
                if made < 0 && made != -EEXIST {
                    close(current)
                    throw SharedFolder.error(-made, prefix)
                }
                next = cfs_open_beneath(rootFD, prefix.description, O_RDONLY | O_DIRECTORY, 0)
            }
            close(current)
            if next < 0 {
                throw next == -ENOTDIR
                    ? ShareError(.conflict, "'\(prefix)' is a file, not a folder") : SharedFolder.error(-next, prefix)
            }
            current = next
        }
        return current
    }

    /// Creates a folder; 409 when something is there.
    func makeDirectory(_ path: SharePath) throws(ShareError) {
        guard !path.isRoot else { throw ShareError(.conflict, "the shared folder already exists") }
        let parentFD = try parent(of: path, creating: true)
        defer { close(parentFD) }
        let result = cfs_mkdirat(parentFD, path.name, 0o755)
        if result < 0 { throw SharedFolder.error(-result, path) }
    }

    /// Removes a file, or a folder with everything in it.
    func remove(_ path: SharePath) throws(ShareError) {
        guard !path.isRoot else { throw ShareError(.forbidden, "the shared folder itself cannot be deleted") }
        let parentFD = try parent(of: path, creating: false)
        defer { close(parentFD) }
        try SharedFolder.removeEntry(path.name, in: parentFD, path: path)
    }

    static func removeEntry(_ name: String, in directory: Int32, path: SharePath) throws(ShareError) {
        let file = cfs_unlinkat(directory, name, 0)
        if file == 0 { return }
        guard file == -EISDIR else { throw error(-file, path) }
        let fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 { throw error(errno, path) }
        var names: [String] = []
        do {
            defer { close(fd) }
            names = try entries(fd: fd, path: path)
            for child in names { try removeEntry(child, in: fd, path: path) }
        }
        let result = cfs_unlinkat(directory, name, 0x200)  // AT_REMOVEDIR
        if result < 0 { throw error(-result, path) }
    }

    /// The names in an open folder (`.` and `..` left out).
    static func entries(fd: Int32, path: SharePath) throws(ShareError) -> [String] {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var names: [String] = []
        while true {
            let count = cfs_getdents(fd, buffer, 64 * 1024)
            if count < 0 { throw error(Int32(-count), path) }
            if count == 0 { return names }
            var offset = 0
            while offset < count {
                var name: UnsafePointer<CChar>? = nil
                var type: UInt8 = 0
                var inode: UInt64 = 0
                offset += Int(cfs_dirent_at(buffer, offset, &name, &type, &inode))
                guard let name else { continue }
                let text = String(cString: name)
                if text != "." && text != ".." { names.append(text) }
            }
        }
    }

    /// Renames or moves; 409 when the destination exists and `overwrite` is false.
    func move(from: SharePath, to: SharePath, overwrite: Bool) throws(ShareError) {
        guard !from.isRoot, !to.isRoot else { throw ShareError(.forbidden, "the shared folder itself cannot be moved") }
        if to.isSame(asOrUnder: from) && to != from {
            throw ShareError(.conflict, "a folder cannot be moved into itself")
        }
        let source = try parent(of: from, creating: false)
        defer { close(source) }
        let moved = try metadataNoFollow(name: from.name, in: source, path: from)
        let destination = try parent(of: to, creating: true)
        defer { close(destination) }
        var result = cfs_renameat2(source, from.name, destination, to.name, 1)  // RENAME_NOREPLACE
        if result == -EEXIST && overwrite {
            let target = try metadataNoFollow(name: to.name, in: destination, path: to)
            // rename(2) replaces a file with a file in one step; a folder on
            // either side is removed first.
            if target.kind == .directory || moved.kind == .directory {
                try SharedFolder.removeEntry(to.name, in: destination, path: to)
                result = cfs_renameat2(source, from.name, destination, to.name, 1)
            } else {
                result = cfs_renameat2(source, from.name, destination, to.name, 0)
            }
        }
        if result == -EEXIST { throw ShareError(.conflict, "'\(to)' already exists; send \"overwrite\": true to replace it") }
        if result < 0 { throw SharedFolder.error(-result, to, doing: "move") }
    }

    func metadataNoFollow(name: String, in directory: Int32, path: SharePath) throws(ShareError) -> Metadata {
        var raw = cfs_stat()
        let result = cfs_lstat_at(directory, name, &raw)
        if result < 0 { throw SharedFolder.error(-result, path) }
        return Metadata(raw)
    }

    // MARK: Staging

    /// A new, empty staging file for an upload.
    func createStagingFile(named name: String) throws(ShareError) -> Int32 {
        let fd = openat(stagingFD, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if fd < 0 { throw SharedFolder.error(errno, .root) }
        return fd
    }

    /// Opens an existing staging file (a resumed upload).
    func openStagingFile(named name: String) throws(ShareError) -> Int32 {
        let fd = openat(stagingFD, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 { throw ShareError(.notFound, "no such upload") }
        return fd
    }

    /// Puts a complete staging file in place; returns whether it replaced a file.
    func commitStagingFile(named name: String, to path: SharePath) throws(ShareError) -> Bool {
        guard !path.isRoot else { throw ShareError(.conflict, "the shared folder is a folder") }
        let parentFD = try parent(of: path, creating: true)
        defer { close(parentFD) }
        let noReplace = cfs_renameat2(stagingFD, name, parentFD, path.name, 1)
        if noReplace == 0 { return false }
        guard noReplace == -EEXIST else { throw SharedFolder.error(-noReplace, path) }
        let existing = try metadataNoFollow(name: path.name, in: parentFD, path: path)
        if existing.kind == .directory { throw ShareError(.conflict, "'\(path)' is a folder") }
        let replace = cfs_renameat2(stagingFD, name, parentFD, path.name, 0)
        if replace < 0 { throw SharedFolder.error(-replace, path) }
        return true
    }

    /// Removes a staging file (a failed or cancelled upload).
    func discardStagingFile(named name: String) {
        _ = cfs_unlinkat(stagingFD, name, 0)
    }

    /// The metadata of a staging file, or `nil` when it is gone.
    func stagingMetadata(named name: String) throws(ShareError) -> Metadata? {
        var raw = cfs_stat()
        let result = cfs_lstat_at(stagingFD, name, &raw)
        if result == -ENOENT { return nil }
        if result < 0 { throw SharedFolder.error(-result, .root) }
        return Metadata(raw)
    }

    /// Copies the WebDAV properties of a staging file to an open file.
    func copyStagingProperties(from name: String, to fd: Int32) {
        let source = openat(stagingFD, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard source >= 0 else { return }
        defer { close(source) }
        DeadProperties.copy(from: source, to: fd)
    }

    /// Opens a staging file for reading its properties; `nil` when it is gone.
    func openStagingForProperties(named name: String) -> Int32? {
        let fd = openat(stagingFD, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        return fd >= 0 ? fd : nil
    }

    /// Whether a staging file exists (for resumable uploads after a restart).
    func stagingFileSize(named name: String) -> Int64? {
        var raw = cfs_stat()
        return cfs_lstat_at(stagingFD, name, &raw) == 0 ? Int64(raw.size) : nil
    }

    /// Removes what interrupted uploads and copies left behind, except
    /// resumable uploads; empty files WebDAV clients created are put in place.
    private func cleanStaging() {
        recoverPlaceholders()
        guard let names = try? SharedFolder.entries(fd: stagingFD, path: .root) else { return }
        for name in names where !name.hasPrefix("resumable-") {
            try? SharedFolder.removeEntry(name, in: stagingFD, path: .root)
        }
    }

    /// Bytes free for new files.
    var availableBytes: Int64 { max(0, cfs_available_bytes(rootFD)) }
}
