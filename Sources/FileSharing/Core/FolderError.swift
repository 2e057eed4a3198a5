public import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// A failure of the shared folder on disk: what kind, which operation, on
/// which path, and the `errno` behind it. It knows no HTTP: each face turns
/// it into a status with its own mapping (`ShareError(_:)` for `/api`,
/// `DAVError(_:)` for `/dav`).
///
/// Like `FileSystemError` in swift-nio, the ``Code`` is extensible and the
/// message is written for a person.
public struct FolderError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case notFound, parentMissing, parentNotFolder, outsideShare, symbolicLink, permissionDenied, noSpace,
                isFolder, exists, nameTooLong, intoItself, rootUnchangeable, unsupportedKind, unsupported, io
        }
        fileprivate var value: Value
        /// Nothing is at the path (or a part of it is not a folder).
        public static let notFound = Code(value: .notFound)
        /// The folder that would hold the item does not exist.
        public static let parentMissing = Code(value: .parentMissing)
        /// A part of the path that should be a folder is a file.
        public static let parentNotFolder = Code(value: .parentNotFolder)
        /// The path leads out of the shared folder (`..`, a symbolic link).
        public static let outsideShare = Code(value: .outsideShare)
        /// The path is, or goes through, a symbolic link: requests never
        /// follow one, so neither the rights nor the hidden names can be
        /// bypassed by a link that leads elsewhere inside the share.
        public static let symbolicLink = Code(value: .symbolicLink)
        /// The server's user may not do this.
        public static let permissionDenied = Code(value: .permissionDenied)
        /// The disk (or a quota, or the room for extended attributes) is full.
        public static let noSpace = Code(value: .noSpace)
        /// The item is a folder where a file is needed.
        public static let isFolder = Code(value: .isFolder)
        /// Something is already at the destination.
        public static let exists = Code(value: .exists)
        /// A name is longer than the file system allows.
        public static let nameTooLong = Code(value: .nameTooLong)
        /// A folder would be moved or copied into itself.
        public static let intoItself = Code(value: .intoItself)
        /// The shared folder itself cannot be removed, moved or replaced.
        public static let rootUnchangeable = Code(value: .rootUnchangeable)
        /// The item is neither a file nor a folder (a link, a fifo, a device).
        public static let unsupportedKind = Code(value: .unsupportedKind)
        /// The file system cannot do this (extended attributes, for one).
        public static let unsupported = Code(value: .unsupported)
        /// Any other failure of a system call.
        public static let io = Code(value: .io)

        /// The code's name.
        public var description: String { "\(value)" }
    }

    /// What the folder was doing.
    public struct Operation: Hashable, Sendable, CustomStringConvertible {
        fileprivate var name: String
        /// Opening or finding an item.
        public static let open = Operation(name: "open")
        /// Reading an item or its metadata.
        public static let read = Operation(name: "read")
        /// Writing a staged file.
        public static let write = Operation(name: "write")
        /// Making a folder.
        public static let makeFolder = Operation(name: "make folder")
        /// Removing an item.
        public static let remove = Operation(name: "remove")
        /// Renaming or moving an item.
        public static let move = Operation(name: "move")
        /// Copying an item.
        public static let copy = Operation(name: "copy")
        /// Making a staged file or folder.
        public static let stage = Operation(name: "stage")
        /// Putting a staged item in place.
        public static let commit = Operation(name: "commit")
        /// Reading or writing WebDAV properties.
        public static let properties = Operation(name: "properties")
        /// Keeping a version of a file, or reading or restoring one.
        public static let keepVersion = Operation(name: "keep version")
        /// Moving an item into the trash, or back out.
        public static let trash = Operation(name: "trash")
        /// The operation's name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for a person: the problem and, where there is one, the fix.
    public var message: String
    /// What the folder was doing.
    public var operation: Operation
    /// The shared path concerned (the root for the folder itself, or the staging area).
    public var path: SharePath
    /// The `errno` value behind the failure, if any.
    public var systemError: Errno?

    /// Creates an error.
    public init(_ code: Code, _ message: String, operation: Operation, path: SharePath, systemError: Errno? = nil) {
        self.code = code
        self.message = message
        self.operation = operation
        self.path = path
        self.systemError = systemError
    }

    /// The error a failed system call means, with a message naming `path`.
    public init(errno: Int32, operation: Operation, path: SharePath) {
        let shown = path.isRoot ? "the shared folder" : "'\(path)'"
        let (code, message): (Code, String) =
            switch errno {
            case ENOENT: (.notFound, "\(shown): no such file or folder")
            case ENOTDIR: (.notFound, "\(shown): a part of the path is not a folder")
            case EXDEV: (.outsideShare, "\(shown) leads out of the shared folder")
            case ELOOP:
                (
                    .symbolicLink,
                    "\(shown) is or goes through a symbolic link, which the server does not follow; "
                        + "open the item by its own path"
                )
            case EACCES, EPERM: (.permissionDenied, "\(shown): permission denied on the server")
            case ENOSPC, EDQUOT: (.noSpace, "the disk is full; free some space and try again")
            case EISDIR: (.isFolder, "\(shown) is a folder")
            case EEXIST, ENOTEMPTY: (.exists, "\(shown) already exists")
            case ENAMETOOLONG: (.nameTooLong, "\(shown): the name is too long")
            case EINVAL where operation == .move: (.intoItself, "a folder cannot be moved into itself")
            default: (.io, "\(shown): \(Errno(rawValue: errno))")
            }
        self.init(code, message, operation: operation, path: path, systemError: Errno(rawValue: errno))
    }

    /// The message.
    public var description: String { message }
}
