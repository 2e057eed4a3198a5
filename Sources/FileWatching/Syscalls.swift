import CFileshareShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one seam between Swift and the system calls: the C shim returns a
/// non-negative result or `-errno` (and retries `EINTR` itself); libc calls
/// return -1 and set `errno`. Both become a typed ``Errno`` here, and only here.

/// The result of a shim call, or its failure as an ``Errno``.
///
/// Inlinable: called from another module, a generic function is called
/// unspecialized, through its witness tables (1.6 % of a small GET's user
/// time in `perf`, for a comparison with zero).
@discardableResult
@inlinable
public func valueOrErrno<Result: FixedWidthInteger & SignedInteger>(_ result: Result) throws(Errno) -> Result {
    if result < 0 { throw Errno(rawValue: Int32(truncatingIfNeeded: -result)) }
    return result
}

/// Calls a libc function that returns -1 and sets `errno` on failure,
/// again while it is interrupted by a signal when `retryOnInterrupt`.
@discardableResult
@inline(__always)
public func valueOrErrno<Result: FixedWidthInteger & SignedInteger>(retryOnInterrupt: Bool = true, _ call: () -> Result)
    throws(Errno) -> Result
{
    while true {
        let result = call()
        if result != -1 { return result }
        let failure = Errno(rawValue: errno)
        if retryOnInterrupt && failure == .interrupted { continue }
        throw failure
    }
}

/// The one place where `errno` values become text.
extension Errno {
    static func describe(_ value: Int32) -> String {
        guard let text = strerror(value) else { return "error \(value)" }
        return String(cString: text)
    }
}

@inline(__always)
func memcmpBytes(_ lhs: UnsafePointer<UInt8>, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Int {
    Int(memcmp(lhs, rhs, count))
}

/// Monotonic time in nanoseconds.
func monotonicNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

/// Wall-clock time in nanoseconds since the epoch.
public func wallNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

/// Glob matching of one name or relative path (`fnmatch`).
func globMatches(_ pattern: String, _ bytes: [UInt8], pathname: Bool) -> Bool {
    var text = bytes
    text.append(0)
    return text.withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
            fnmatch(pattern, pointer, pathname ? FNM_PATHNAME : 0) == 0
        }
    }
}

/// The names in the folder at `path` (`.` and `..` left out).
public func folderNames(_ path: String) throws(Errno) -> [String] {
    guard let directory = opendir(path) else { throw Errno(rawValue: errno) }
    return names(readingAndClosing: directory)
}

/// The names in the open folder `descriptor` (`.` and `..` left out),
/// read through a description of its own, so the caller's offset stays.
public func folderNames(descriptor: Int32) throws(Errno) -> [String] {
    let own = try valueOrErrno { openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    guard let directory = fdopendir(own) else {
        let failure = Errno(rawValue: errno)
        close(own)
        throw failure
    }
    return names(readingAndClosing: directory)
}

private func names(readingAndClosing directory: OpaquePointer) -> [String] {
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// A number from a `/proc` file, such as an inotify limit.
func readProcNumber(_ path: String) -> Int? {
    let value = cfs_read_proc_number(path)
    return value < 0 ? nil : Int(value)
}
