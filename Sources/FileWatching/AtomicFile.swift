import CFileshareShim

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file reads and crash-safe replacement of small files (state
/// files, lock tables, journals' companions): write a temporary file, flush
/// it, rename it over the target, flush the folder. A reader sees the old
/// content or the new, never a part, even after a power cut.
public enum AtomicFile {
    /// The file's bytes, `nil` when it does not exist.
    /// - Throws: ``FileWatchingError`` when it exists but cannot be read.
    public static func read(_ path: String) throws(FileWatchingError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let errno = Errno(rawValue: Glibc.errno)
            if errno == .notFound { return nil }
            throw FileWatchingError(code: .io, message: "cannot read \(path): \(errno)", path: path, systemError: errno)
        }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { cfs_read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                let errno = Errno(rawValue: Int32(-count))
                throw FileWatchingError(
                    code: .io, message: "cannot read \(path): \(errno)", path: path, systemError: errno)
            }
            if count == 0 { return result }
            result.append(contentsOf: buffer[..<count])
        }
    }

    /// Replaces the file's content with `bytes`, atomically.
    /// - Parameters:
    ///   - permissions: The new file's permissions.
    ///   - temporary: Where the temporary file is written (on the same file
    ///     system as `path`); by default beside it, named after it and the process.
    /// - Throws: ``FileWatchingError`` when the file cannot be written or put in place
    ///   (nothing is changed then).
    public static func write(_ bytes: [UInt8], to path: String, permissions: UInt32 = 0o644, temporary: String? = nil)
        throws(FileWatchingError)
    {
        let temporary = temporary ?? path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(permissions))
        if fd < 0 {
            let errno = Errno(rawValue: Glibc.errno)
            throw FileWatchingError(
                code: .io, message: "cannot write \(path): \(errno)", path: path, systemError: errno)
        }
        // O_CREAT's mode is filtered by the umask; the permissions asked for are set as they are.
        _ = cfs_fchmod(fd, permissions)
        var failure: Errno? = nil
        let written = bytes.withUnsafeBytes { cfs_pwrite_all(fd, $0.baseAddress, $0.count, 0) }
        if written < 0 { failure = Errno(rawValue: Int32(-written)) }
        if failure == nil {
            let synced = cfs_fsync(fd)
            if synced < 0 { failure = Errno(rawValue: -synced) }
        }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = Errno(rawValue: Glibc.errno) }
        if let failure {
            unlink(temporary)
            throw FileWatchingError(
                code: .io, message: "cannot write \(path): \(failure)", path: path, systemError: failure)
        }
        // The rename itself survives a power cut once the folder is flushed.
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let folderFD = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            _ = cfs_fsync(folderFD)
            close(folderFD)
        }
    }
}
