/// A failure of the Inbox, with what went wrong for a person.
public struct InboxError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let value: String
        /// Reading or writing the disk failed.
        public static let io = Code(value: "io")
        /// The folder to process is missing or not a folder.
        public static let badFolder = Code(value: "bad-folder")
        /// The options cannot work together.
        public static let badOptions = Code(value: "bad-options")
        public var description: String { value }
    }

    /// What kind of failure.
    public var code: Code
    /// What went wrong and, where there is one, the fix.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
