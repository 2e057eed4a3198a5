import CFileshareShim
#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and crash-safe replacement: write a temporary file beside
/// the target, flush it, rename it over the target, flush the folder.
enum AtomicFile {
    /// The file's bytes, `nil` when it does not exist.
    static func read(_ path: String) throws(FileWatchingError) -> [UInt8]? {
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
                throw FileWatchingError(code: .io, message: "cannot read \(path): \(errno)", path: path, systemError: errno)
            }
            if count == 0 { return result }
            result.append(contentsOf: buffer[..<count])
        }
    }

    /// Replaces the file's content with `bytes`, atomically.
    static func write(_ bytes: [UInt8], to path: String) throws(FileWatchingError) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            let errno = Errno(rawValue: Glibc.errno)
            throw FileWatchingError(code: .io, message: "cannot write \(path): \(errno)", path: path, systemError: errno)
        }
        var failure: Errno? = nil
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if Glibc.errno == EINTR { continue }
                    failure = Errno(rawValue: Glibc.errno)
                    return
                }
                offset += written
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = Errno(rawValue: Glibc.errno) }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = Errno(rawValue: Glibc.errno) }
        if let failure {
            unlink(temporary)
            throw FileWatchingError(code: .io, message: "cannot write \(path): \(failure)", path: path, systemError: failure)
        }
        // The rename itself survives a power cut once the folder is flushed.
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let folderFD = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            fsync(folderFD)
            close(folderFD)
        }
    }
}
