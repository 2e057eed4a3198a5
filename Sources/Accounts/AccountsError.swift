/// A failure of the users file or of a change to it, with a message for a
/// person that names the problem and the fix.
public struct AccountsError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The users file cannot be read or written.
        public static let io = Code("io")
        /// The users file is not one (bad JSON, unknown format, inconsistent content).
        public static let damaged = Code("damaged")
        /// A name, path or right given is not valid.
        public static let invalid = Code("invalid")
        /// The user or group named does not exist.
        public static let notFound = Code("not-found")
        /// A user or group of that name exists already.
        public static let exists = Code("exists")
        /// The shared store of sessions or share links (the database) cannot
        /// be reached: nothing can be said of them now, neither yes nor no.
        public static let unavailable = Code("unavailable")
    }

    /// What kind of failure this is.
    public var code: Code
    /// For a person: what went wrong and the fix.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
