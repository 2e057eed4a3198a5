#if canImport(Glibc)
    import Glibc
#endif

/// An error thrown by the observer: what failed, where, and why.
///
/// Like `FileSystemError` in swift-nio, the ``Code`` is extensible and the
/// message is written for a person: it names the problem and, where there is
/// one, the fix.
public struct FileWatchingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case notFound, notADirectory, permissionDenied, watchLimit, unsupported, io, invalidArgument,
                rootRemoved
        }
        fileprivate var value: Value
        /// The path does not exist.
        public static let notFound = Code(value: .notFound)
        /// The path exists but is not a directory.
        public static let notADirectory = Code(value: .notADirectory)
        /// The process may not read or watch the path.
        public static let permissionDenied = Code(value: .permissionDenied)
        /// The kernel's limit on watches or watchers is reached.
        public static let watchLimit = Code(value: .watchLimit)
        /// The file system or platform cannot do what was asked.
        public static let unsupported = Code(value: .unsupported)
        /// Any other failure of a system call.
        public static let io = Code(value: .io)
        /// An option or argument is not valid.
        public static let invalidArgument = Code(value: .invalidArgument)
        /// The watched root was removed or moved away.
        public static let rootRemoved = Code(value: .rootRemoved)

        public var description: String { "\(value)" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for a person: the problem and, where there is one, the fix.
    public var message: String
    /// The path concerned, if any.
    public var path: String?
    /// The `errno` value behind the failure, if any.
    public var systemError: Errno?

    /// Creates an error.
    public init(code: Code, message: String, path: String? = nil, systemError: Errno? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.systemError = systemError
    }

    public var description: String { message }
}

/// A POSIX error number, as returned by a failed system call.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public var rawValue: Int32
    /// Wraps a raw `errno` value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// No such file or folder (`ENOENT`).
    public static let notFound = Errno(rawValue: ENOENT)
    /// Interrupted by a signal (`EINTR`).
    public static let interrupted = Errno(rawValue: EINTR)
    /// Permission denied (`EACCES`).
    public static let accessDenied = Errno(rawValue: EACCES)
    /// A part of the path is not a folder (`ENOTDIR`).
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// An invalid argument (`EINVAL`).
    public static let invalid = Errno(rawValue: EINVAL)
    /// No space left on the device (`ENOSPC`).
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// Too many open files in the process (`EMFILE`).
    public static let tooManyFiles = Errno(rawValue: EMFILE)
    /// Operation not permitted (`EPERM`).
    public static let permission = Errno(rawValue: EPERM)
    /// Too many symbolic links, or one where none may be (`ELOOP`).
    public static let loop = Errno(rawValue: ELOOP)
    /// Try again (`EAGAIN`).
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// Something is already there (`EEXIST`).
    public static let exists = Errno(rawValue: EEXIST)
    /// A folder where a file is needed (`EISDIR`).
    public static let isDirectory = Errno(rawValue: EISDIR)

    public var description: String { Errno.describe(rawValue) }
}
