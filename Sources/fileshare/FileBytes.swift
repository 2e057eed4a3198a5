#if canImport(Glibc)
    import Glibc
#endif

/// A small file read whole, without Foundation.
enum FileBytes {
    /// The most a configuration file may hold: far more than every key
    /// written out, little enough to read at once.
    static let limit = 1 << 20

    /// The bytes of the file at `path`, or `nil` (``lastErrorText`` says why).
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
            if bytes.count > limit {
                errno = EFBIG
                return nil
            }
        }
    }

    /// What the last failed call's `errno` says.
    static var lastErrorText: String { String(cString: strerror(errno)) }

    /// What tells a change of the file at `path`: its inode, size and change
    /// time (`nil` when it cannot be seen).
    static func identity(of path: String) -> [Int]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [
            Int(info.st_dev), Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec),
            Int(info.st_mtim.tv_nsec), Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec),
        ]
    }
}
