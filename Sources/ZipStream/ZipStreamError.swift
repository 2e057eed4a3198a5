/// An error thrown by ``ZipStreamWriter``: what was wrong, and with which entry.
///
/// Like `FileSystemError` in swift-nio, the ``Code`` is extensible and the
/// message is written for a person.
public struct ZipStreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case invalidName, invalidState
        }
        fileprivate var value: Value

        /// The entry name could escape the folder it is extracted into (a `..`
        /// component, an absolute path, a drive letter), holds a NUL, an empty
        /// or `.` component, or is longer than 65,535 bytes.
        public static let invalidName = Code(value: .invalidName)
        /// The calls came in an order the writer cannot follow: an entry begun
        /// before the previous one ended, an entry ended that was never begun,
        /// the archive finished with an entry open, or any call after
        /// ``ZipStreamWriter/finish()``.
        public static let invalidState = Code(value: .invalidState)

        public var description: String { "\(value)" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for a person: the problem and, where there is one, the fix.
    public var message: String
    /// The name of the entry concerned, if any.
    public var entryName: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A sentence for a person.
    ///   - entryName: The name of the entry concerned, if any.
    public init(code: Code, message: String, entryName: String? = nil) {
        self.code = code
        self.message = message
        self.entryName = entryName
    }

    public var description: String { message }
}
