import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh folder under the system's temporary folder for one test, removed
/// with everything in it when the value goes away (also what a test made
/// unreadable). Every test makes its own.
public final class TemporaryFolder: Sendable {
    /// The folder's absolute path, without symbolic links.
    public let path: String

    /// Makes the folder, named after the test that asks for it.
    ///
    /// - Throws: `POSIXError` when the folder cannot be made.
    public init(function: String = #function) throws {
        let safe = function.filter { $0.isLetter || $0.isNumber }.prefix(24)
        var template = Array("\(TemporaryFolder.systemPath)/fileshare-\(safe)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(cString: made)
    }

    deinit {
        if (try? FileManager.default.removeItem(atPath: path)) == nil {
            // A test left a folder without permissions: give them back, then remove.
            let chmod = Process()
            chmod.executableURL = URL(fileURLWithPath: "/bin/chmod")
            chmod.arguments = ["-R", "u+rwx", path]
            if (try? chmod.run()) != nil { chmod.waitUntilExit() }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// The absolute path of `relative` inside the folder (the folder itself for "").
    public func callAsFunction(_ relative: String) -> String { relative.isEmpty ? path : path + "/" + relative }

    /// Writes `bytes` to `relative` (see ``writeFile(_:to:)``) and returns its path.
    @discardableResult
    public func write(_ bytes: [UInt8], to relative: String) throws -> String {
        let file = self(relative)
        try writeFile(bytes, to: file)
        return file
    }

    /// Writes `text` as UTF-8 to `relative` and returns its path.
    @discardableResult
    public func write(_ text: String, to relative: String) throws -> String {
        try write(Array(text.utf8), to: relative)
    }

    /// The system's temporary folder, without a trailing slash or symbolic links.
    public static var systemPath: String {
        let base = NSTemporaryDirectory()
        guard let resolved = realpath(base, nil) else { return "/tmp" }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// Writes `bytes` to the file at `path` (made or emptied first), through a
/// descriptor that is close-on-exec, which Foundation's `Data.write` is not:
/// see ``Foundation/FileHandle/closingOnExec(forWritingAtPath:)`` for what
/// that costs a test. Use it for every file a test writes.
public func writeFile(_ bytes: some Collection<UInt8>, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let contiguous = Array(bytes)
    var written = 0
    while written < contiguous.count {
        let result = contiguous.withUnsafeBytes { raw in
            Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
        }
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        written += result
    }
}
