import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// The few system calls the file log makes, each retried on `EINTR` and
/// turned into a ``ChangeLogError`` here, in one place.
enum LogFiles {
    static func failure(_ what: String, _ path: String, _ number: Int32 = Glibc.errno) -> ChangeLogError {
        ChangeLogError(
            code: number == ENOENT ? .notFound : .io,
            message: "cannot \(what) \(path): \(String(cString: strerror(number)))", path: path, errno: number)
    }

    /// Calls a libc function through the project's one errno layer
    /// (`valueOrErrno`, which retries `EINTR`), its failure as a log error.
    @discardableResult
    static func call<Result: FixedWidthInteger & SignedInteger>(
        _ what: String, _ path: String, _ body: () -> Result
    ) throws(ChangeLogError) -> Result {
        do { return try valueOrErrno(body) } catch { throw failure(what, path, error.rawValue) }
    }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(ChangeLogError) -> Int32 {
        try call("open", path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    static func makeFolder(_ path: String) throws(ChangeLogError) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw failure("create", path) }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    static func read(_ fd: Int32, count: Int, at offset: Int64, path: String) throws(ChangeLogError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = try call("read", path) {
                bytes.withUnsafeMutableBytes {
                    pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                }
            }
            if result == 0 { break }
            done += result
        }
        bytes.removeLast(count - done)
        return bytes
    }

    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, path: String) throws(ChangeLogError) {
        var done = 0
        while done < bytes.count {
            done += try call("write", path) {
                bytes.withUnsafeBytes {
                    pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
                }
            }
        }
    }

    static func syncData(_ fd: Int32, path: String) throws(ChangeLogError) {
        try call("flush", path) { fdatasync(fd) }
    }

    static func truncate(_ fd: Int32, to size: Int64, path: String) throws(ChangeLogError) {
        try call("truncate", path) { ftruncate(fd, off_t(size)) }
    }

    static func size(_ fd: Int32, path: String) throws(ChangeLogError) -> Int64 {
        var info = stat()
        try call("inspect", path) { fstat(fd, &info) }
        return Int64(info.st_size)
    }

    /// Flushes a folder, so that the files created or removed in it stay so after a crash.
    static func syncFolder(_ path: String) {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// The names in a folder.
    static func names(in path: String) throws(ChangeLogError) -> [String] {
        do { return try folderNames(path) } catch { throw failure("list", path, error.rawValue) }
    }

    /// Takes the folder's writer lock, or says who holds it.
    ///
    /// A lock still held is tried again for up to a second: a process that
    /// was just killed lets go of it only once the kernel has closed all its
    /// files, and a child another thread of this process is starting holds a
    /// copy of the descriptor until its `exec` closes it.
    static func lockExclusively(_ path: String) throws(ChangeLogError) -> Int32 {
        let fd = try open(path, O_RDWR | O_CREAT)
        do throws(Errno) {
            var tries = 0
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let number = errno
                if number == EINTR { continue }
                tries += 1
                guard number == EWOULDBLOCK, tries < 20 else { throw Errno(rawValue: number) }
                usleep(50_000)
            }
        } catch {
            let number = error.rawValue
            close(fd)
            if number == EWOULDBLOCK {
                throw ChangeLogError(
                    code: .busy,
                    message:
                        "another fileshare process is keeping the change log in \(path.dropLast(5)); stop it, or serve another folder",
                    path: path, errno: number)
            }
            throw failure("lock", path, number)
        }
        return fd
    }
}
