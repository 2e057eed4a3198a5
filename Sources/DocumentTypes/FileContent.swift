#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The content of a regular file, read with `pread` at the offsets
/// identification asks for, never as a whole.
///
/// It opens a path itself (and closes it when released), or reads a
/// descriptor someone else opened and closes (an upload's staged file opened
/// beneath the shared folder).
public final class FileContent: ContentSource, Sendable {
    /// The descriptor read from.
    public let descriptor: Int32
    /// The size of the file when it was opened.
    public let size: Int?
    /// The path it was opened at, for messages.
    public let path: String?
    private let ownsDescriptor: Bool

    /// Opens the regular file at `path` for reading.
    ///
    /// - Throws: ``DocumentTypeError`` (``DocumentTypeError/Code/unreadableFile``)
    ///   when the file cannot be opened or is not a regular file.
    public init(path: String) throws {
        var descriptor: Int32
        repeat {
            descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw Self.error(errno, reading: path) }
        do {
            self.size = try Self.regularFileSize(descriptor, path: path)
        } catch {
            close(descriptor)
            throw error
        }
        self.descriptor = descriptor
        self.path = path
        self.ownsDescriptor = true
    }

    /// Reads an open descriptor, which the caller keeps and closes.
    ///
    /// - Parameters:
    ///   - descriptor: A descriptor open for reading on a regular file.
    ///   - path: The file's path or name, for messages.
    /// - Throws: ``DocumentTypeError`` when the descriptor is not a regular file.
    public init(descriptor: Int32, path: String? = nil) throws {
        self.size = try Self.regularFileSize(descriptor, path: path)
        self.descriptor = descriptor
        self.path = path
        self.ownsDescriptor = false
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    public func read(at offset: Int, count: Int) throws -> [UInt8] {
        guard offset >= 0, count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw Self.error(errno, reading: path ?? "descriptor \(descriptor)")
            }
            if result == 0 { break }
            filled += result
        }
        bytes.removeLast(count - filled)
        return bytes
    }

    private static func regularFileSize(_ descriptor: Int32, path: String?) throws -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(errno, reading: path ?? "descriptor \(descriptor)") }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            let kind = (status.st_mode & S_IFMT) == S_IFDIR ? "a folder" : "not a regular file"
            throw DocumentTypeError(
                code: .unreadableFile,
                message: "cannot identify '\(path ?? "descriptor \(descriptor)")': it is \(kind)",
                path: path)
        }
        return Int(status.st_size)
    }

    private static func error(_ number: Int32, reading path: String) -> DocumentTypeError {
        let reason = strerror(number).map { String(cString: $0) } ?? "error \(number)"
        return DocumentTypeError(
            code: .unreadableFile, message: "cannot read '\(path)': \(reason)", path: path,
            cause: SystemErrorNumber(rawValue: number))
    }
}

/// A POSIX `errno` value, as the cause of a ``DocumentTypeError``.
public struct SystemErrorNumber: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public var rawValue: Int32

    /// Wraps a raw `errno` value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public var description: String { strerror(rawValue).map { String(cString: $0) } ?? "error \(rawValue)" }
}
