/// A failure of the shared database, with what went wrong for a person.
/// Knows no HTTP: the server maps it to a status where it answers.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// Kinds of failure. Extensible: switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The database URL cannot be read.
        public static let invalidURL = Code("invalid-url")
        /// The server cannot be reached, refused the login, or the connection broke.
        public static let unavailable = Code("unavailable")
        /// The database's schema is newer than this program knows: an older
        /// program must not write into it.
        public static let schemaTooNew = Code("schema-too-new")
        /// The schema's bookkeeping contradicts the migrations this program has.
        public static let schemaDamaged = Code("schema-damaged")
        /// A migration failed (nothing of it stays: it ran in a transaction).
        public static let migrationFailed = Code("migration-failed")
        /// A query failed.
        public static let query = Code("query")
        /// The database was closed.
        public static let closed = Code("closed")
    }

    /// The kind of failure.
    public var code: Code
    /// For a person: what went wrong and, where there is one, the fix.
    public var message: String
    /// What the failure came from (a PostgresNIO error, say), if anything.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    public init(code: Code, message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { message }
}
