public import FileWatching

/// A failure of the version store or the trash: what kind, on which entry,
/// and the `errno` behind it. It knows no HTTP: the server turns it into a
/// folder error, and each face into a status.
public struct VersionError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case notFound, invalidName, crossDevice, noSpace, io
        }
        fileprivate var value: Value
        /// No version, or no trash entry, of that name.
        public static let notFound = Code(value: .notFound)
        /// A version or trash id that cannot be one (not the store's form).
        public static let invalidName = Code(value: .invalidName)
        /// The item is on another file system than the store: it cannot be renamed in.
        public static let crossDevice = Code(value: .crossDevice)
        /// The disk (or a quota) is full.
        public static let noSpace = Code(value: .noSpace)
        /// Any other failure of a system call, or a damaged record.
        public static let io = Code(value: .io)
        /// The code's name.
        public var description: String { "\(value)" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for a person.
    public var message: String
    /// The `errno` value behind the failure, if any.
    public var systemError: Errno?

    /// Creates an error.
    public init(_ code: Code, _ message: String, systemError: Errno? = nil) {
        self.code = code
        self.message = message
        self.systemError = systemError
    }

    /// The error of a failed system call while `doing` something.
    init(_ errno: Errno, doing: String) {
        let code: Code =
            switch errno {
            case .notFound: .notFound
            case .noSpace: .noSpace
            case Errno(rawValue: 18): .crossDevice  // EXDEV
            default: .io
            }
        self.init(code, "cannot \(doing): \(errno)", systemError: errno)
    }

    /// The code and the message.
    public var description: String { "\(code): \(message)" }
}
