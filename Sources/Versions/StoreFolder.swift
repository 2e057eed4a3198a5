import CFileshareShim
import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// An open folder of the version store or the trash, and the system calls
/// they make in it: every failure goes through FileWatching's
/// `valueOrErrno` and becomes a ``VersionError`` here, and only here.
///
/// Every method makes blocking system calls.
final class StoreFolder: Sendable {
    let descriptor: Int32
    /// For messages.
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Opens the folder at the absolute `path`, made (owner only) when missing.
    static func open(creating path: String) throws(VersionError) -> StoreFolder {
        _ = cfs_mkdirat(AT_FDCWD, path, 0o700)
        let fd = try StoreFolder.run("open \(path)") { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        return StoreFolder(descriptor: fd, path: path)
    }

    /// Opens the folder `name` in this one (never following a link).
    func folder(_ name: String) throws(VersionError) -> StoreFolder {
        let fd = try StoreFolder.run("open \(path)/\(name)") {
            openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        return StoreFolder(descriptor: fd, path: path + "/" + name)
    }

    /// Makes the folder `name`; with `existing`, one already there is fine.
    func makeFolder(_ name: String, existing: Bool = false) throws(VersionError) {
        let result = cfs_mkdirat(descriptor, name, 0o700)
        if existing && result == -EEXIST { return }
        try StoreFolder.check(result, "make \(path)/\(name)")
    }

    /// The names in the folder (`.` and `..` left out).
    func names() throws(VersionError) -> [String] {
        try StoreFolder.names(of: descriptor, path: path)
    }

    /// What is at `name`, not following a link; `nil` when nothing is.
    func status(_ name: String) throws(VersionError) -> FileStatus? {
        try StoreFolder.status(name, in: descriptor, path: path)
    }

    /// Writes a new file `name` with `bytes`, flushed.
    func write(_ name: String, _ bytes: [UInt8]) throws(VersionError) {
        let fd = try StoreFolder.run("write \(path)/\(name)") {
            openat(descriptor, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { cfs_pwrite_all(fd, $0.baseAddress, $0.count, 0) }
        try StoreFolder.check(written, "write \(path)/\(name)")
        try StoreFolder.check(cfs_fsync(fd), "flush \(path)/\(name)")
    }

    /// Replaces the file `name` with `bytes` atomically (a temporary file renamed over it).
    func replace(_ name: String, _ bytes: [UInt8]) throws(VersionError) {
        let temporary = StoreName.temporaryPrefix + name
        try write(temporary, bytes)
        try rename(temporary, to: self, as: name, replacing: true)
        try sync()
    }

    /// The bytes of the file `name`.
    func read(_ name: String) throws(VersionError) -> [UInt8] {
        let fd = try openFile(name)
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { cfs_read(fd, $0.baseAddress, $0.count) }
            try StoreFolder.check(count, "read \(path)/\(name)")
            if count == 0 { return result }
            result.append(contentsOf: buffer[..<count])
        }
    }

    /// Opens the file `name` for reading (never following a link).
    func openFile(_ name: String) throws(VersionError) -> Int32 {
        try StoreFolder.run("open \(path)/\(name)") {
            openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        }
    }

    /// Tells the kernel the file's cached pages are not needed soon. Advice
    /// only: a failure changes nothing.
    func dropCachedPages(of name: String) {
        let fd = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        close(fd)
    }

    /// Renames `name` into `target` as `newName`; unless `replacing`, something there is ``VersionError/Code/io`` with `EEXIST`.
    func rename(_ name: String, to target: StoreFolder, as newName: String, replacing: Bool = false)
        throws(VersionError)
    {
        let result = cfs_renameat2(
            descriptor, name, target.descriptor, newName, replacing ? 0 : UInt32(CFS_RENAME_NOREPLACE))
        try StoreFolder.check(result, "rename \(path)/\(name) to \(target.path)/\(newName)")
    }

    /// Flushes the folder's entries (a rename into it survives a power cut).
    func sync() throws(VersionError) {
        try StoreFolder.check(cfs_fsync(descriptor), "flush \(path)")
    }

    /// Removes `name` and, for a folder, everything in it. Nothing there is fine.
    func removeTree(_ name: String) throws(VersionError) {
        try StoreFolder.removeTree(name, in: descriptor, path: path)
    }

    // MARK: Items outside the store

    /// Links the file `name` of the open folder `directory` in as `newName`
    /// (the same inode: no byte is copied). `false` when the file system
    /// cannot (another file system, no hard links, the link limit).
    func link(_ name: String, in directory: Int32, as newName: String) throws(VersionError) -> Bool {
        do {
            try valueOrErrno { linkat(directory, name, descriptor, newName, 0) }
            return true
        } catch {
            switch error.rawValue {
            case EXDEV, EPERM, EMLINK, ENOTSUP: return false
            default: throw VersionError(error, doing: "keep '\(name)' in \(path)")
            }
        }
    }

    /// Copies the open file `source` in as the new file `newName`, sharing
    /// extents where the file system can (`FICLONE`), flushed.
    func copy(from source: Int32, as newName: String) throws(VersionError) {
        let out = try StoreFolder.run("make \(path)/\(newName)") {
            openat(descriptor, newName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        defer { close(out) }
        try StoreFolder.check(cfs_copy_file(source, out), "copy into \(path)/\(newName)")
        try StoreFolder.check(cfs_fsync(out), "flush \(path)/\(newName)")
    }

    /// Copies the open folder `source` in as the new folder `newName`,
    /// file by file (see ``copyTree(from:into:path:)``).
    func copyTree(from source: Int32, as newName: String) throws(VersionError) {
        try makeFolder(newName)
        let out = try folder(newName)
        try StoreFolder.copyTree(from: source, into: out.descriptor, path: path + "/" + newName)
    }

    /// Copies everything in the open folder `source` into the open, empty
    /// folder `out`: folders made, files copied sharing extents where the
    /// file system can (`FICLONE`) and flushed, then each folder flushed.
    /// Links and special files are left out, as a package leaves them out.
    static func copyTree(from source: Int32, into out: Int32, path: String) throws(VersionError) {
        for name in try names(of: source, path: path) {
            guard let status = try status(name, in: source, path: path) else { continue }
            switch status.kind {
            case .directory:
                try check(cfs_mkdirat(out, name, 0o755), "make \(path)/\(name)")
                let from = try run("open \(path)/\(name)") {
                    openat(source, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
                defer { close(from) }
                let to = try run("open \(path)/\(name)") {
                    openat(out, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
                defer { close(to) }
                try copyTree(from: from, into: to, path: path + "/" + name)
            case .file:
                let from = try run("open \(path)/\(name)") {
                    openat(source, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                }
                defer { close(from) }
                let to = try run("make \(path)/\(name)") {
                    openat(out, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                }
                defer { close(to) }
                try check(cfs_copy_file(from, to), "copy \(path)/\(name)")
                try check(cfs_fsync(to), "flush \(path)/\(name)")
            default:
                continue
            }
        }
        try check(cfs_fsync(out), "flush \(path)")
    }

    /// Renames `name` of the open folder `directory` in as `newName`.
    func take(_ name: String, from directory: Int32, as newName: String) throws(VersionError) {
        let result = cfs_renameat2(directory, name, descriptor, newName, UInt32(CFS_RENAME_NOREPLACE))
        try StoreFolder.check(result, "move '\(name)' into \(path)")
    }

    /// The bytes of the files at `name` in `directory` (of every file under it, for a folder).
    static func treeSize(_ name: String, in directory: Int32) -> Int64 {
        guard let status = try? status(name, in: directory, path: "") else { return 0 }
        guard status.kind == .directory else { return status.kind == .file ? status.size : 0 }
        let fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return ((try? names(of: fd, path: "")) ?? []).reduce(0) { $0 + treeSize($1, in: fd) }
    }

    // MARK: The one seam

    static func status(_ name: String, in directory: Int32, path: String) throws(VersionError) -> FileStatus? {
        do throws(Errno) {
            return try FileStatus(name: name, in: directory)
        } catch  where error == .notFound {
            return nil
        } catch {
            throw VersionError(error, doing: "read \(path)/\(name)")
        }
    }

    static func names(of fd: Int32, path: String) throws(VersionError) -> [String] {
        do throws(Errno) {
            return try folderNames(descriptor: fd)
        } catch {
            throw VersionError(error, doing: "list \(path)")
        }
    }

    static func removeTree(_ name: String, in directory: Int32, path: String) throws(VersionError) {
        let file = cfs_unlinkat(directory, name, 0)
        if file == 0 || file == -ENOENT { return }
        guard file == -EISDIR else {
            try check(file, "remove \(path)/\(name)")
            return
        }
        let fd = try run("open \(path)/\(name)") {
            openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        do {
            defer { close(fd) }
            for child in try names(of: fd, path: path + "/" + name) {
                try removeTree(child, in: fd, path: path + "/" + name)
            }
        }
        let result = cfs_unlinkat(directory, name, Int32(CFS_AT_REMOVEDIR))
        if result != -ENOENT { try check(result, "remove \(path)/\(name)") }
    }

    @discardableResult
    static func check<Result: FixedWidthInteger & SignedInteger>(_ result: Result, _ doing: @autoclosure () -> String)
        throws(VersionError) -> Result
    {
        do { return try valueOrErrno(result) } catch { throw VersionError(error, doing: doing()) }
    }

    static func run<Result: FixedWidthInteger & SignedInteger>(_ doing: @autoclosure () -> String, _ body: () -> Result)
        throws(VersionError) -> Result
    {
        do { return try valueOrErrno(body) } catch { throw VersionError(error, doing: doing()) }
    }
}
