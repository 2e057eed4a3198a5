/// A failure of a change log, with what went wrong for a person and where.
public struct ChangeLogError: Error, Sendable, CustomStringConvertible {
    /// Kinds of failure. Extensible: switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Reading or writing the log's files failed.
        public static let io = Code("io")
        /// Another process keeps this log open for writing (or, in a
        /// database, wrote to it since this one began).
        public static let busy = Code("busy")
        /// A record in the middle of the log is damaged (its checksum or number is wrong).
        public static let damaged = Code("damaged")
        /// The log was closed.
        public static let closed = Code("closed")
        /// The log was opened for reading only.
        public static let readOnly = Code("read-only")
        /// There is no log there.
        public static let notFound = Code("not-found")
        /// The database that keeps the log cannot be reached (the log goes
        /// on trying; what was appended stays queued).
        public static let unavailable = Code("unavailable")
    }

    /// The kind of failure.
    public var code: Code
    /// For a person: what went wrong and, where there is one, the fix.
    public var message: String
    /// The file or folder concerned.
    public var path: String?
    /// The system error number, if a system call failed.
    public var errno: Int32?

    /// Creates an error.
    public init(code: Code, message: String, path: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.errno = errno
    }

    public var description: String { message }
}
