/// What an item is. Symbolic links are reported, never followed.
public enum ItemKind: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// A regular file.
    case file
    /// A directory.
    case directory
    /// A symbolic link.
    case symlink
    /// A fifo, socket or device.
    case other

    /// The contract's name: `file`, `directory`, `symlink` or `other`.
    public var description: String {
        switch self {
        case .file: "file"
        case .directory: "directory"
        case .symlink: "symlink"
        case .other: "other"
        }
    }
}
