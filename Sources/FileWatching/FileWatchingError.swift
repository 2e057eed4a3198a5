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

    static let notFound = Errno(rawValue: 2)  // ENOENT
    static let interrupted = Errno(rawValue: 4)  // EINTR
    static let accessDenied = Errno(rawValue: 13)  // EACCES
    static let notDirectory = Errno(rawValue: 20)  // ENOTDIR
    static let invalid = Errno(rawValue: 22)  // EINVAL
    static let noSpace = Errno(rawValue: 28)  // ENOSPC
    static let tooManyFiles = Errno(rawValue: 24)  // EMFILE
    static let permission = Errno(rawValue: 1)  // EPERM
    static let loop = Errno(rawValue: 40)  // ELOOP
    static let wouldBlock = Errno(rawValue: 11)  // EAGAIN

    public var description: String { Errno.describe(rawValue) }
}
