import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// Why a document operation failed. Knows nothing of HTTP.
public struct DocumentsError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// The document is closed.
        case closed
        /// No file at the path (or it is not a regular file).
        case notFound
        /// Something is already at the path (creating a document).
        case exists
        /// A folder is at the path (of a bytes document).
        case isFolder
        /// A file is at the path of a package document, or the contents are of the other kind.
        case notPackage
        /// A package over the size or count its ``PackageLimits`` allow.
        case tooLarge
        /// The path leaves the folder, or names the private folder.
        case invalidPath
        /// The disk is full.
        case diskFull
        /// Not allowed by the file system's permissions.
        case permissionDenied
        /// Another failure of a system call.
        case system
    }

    public var code: Code
    /// What went wrong and what to do, for a person.
    public var message: String
    /// The system's error number, when a system call failed.
    public var errno: Int32?

    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    /// A failed system call, named for a person.
    static func system(_ error: Errno, doing what: String, path: ItemPath) -> DocumentsError {
        switch error.rawValue {
        case ENOSPC, EDQUOT:
            DocumentsError(
                .diskFull, "\(what) '\(path)': the disk is full; free some space, the next save tries again",
                errno: error.rawValue)
        case EACCES, EPERM, EROFS:
            DocumentsError(
                .permissionDenied, "\(what) '\(path)': \(error) — check the folder's permissions",
                errno: error.rawValue)
        case ENOENT, ENOTDIR:
            DocumentsError(.notFound, "\(what) '\(path)': there is no such file", errno: error.rawValue)
        default:
            DocumentsError(.system, "\(what) '\(path)': \(error)", errno: error.rawValue)
        }
    }

    public var description: String { message }
}
