/// What the file system says about one item (`statx` on Linux): the one
/// metadata type of the package. The observer keeps the facts it needs of
/// it (``FileMetadata``); the server answers from it directly.
public struct FileStatus: Sendable, Hashable {
    /// What the item is (a symbolic link is not followed).
    public var kind: ItemKind
    /// The file system's device number.
    public var device: UInt64
    /// The inode number.
    public var inode: UInt64
    /// The size in bytes.
    public var size: Int64
    /// Modification time, nanoseconds since the epoch.
    public var modified: Int64
    /// Status change time, nanoseconds since the epoch.
    public var changed: Int64
    /// Birth time, nanoseconds since the epoch, or `nil` where the file system does not record it.
    public var born: Int64?
    /// The permission bits (and set-id and sticky bits).
    public var permissions: UInt32
    /// The number of hard links.
    public var linkCount: UInt32
    /// The owner's user id.
    public var owner: UInt32

    /// Creates a status from its parts.
    public init(
        kind: ItemKind, device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64, born: Int64?,
        permissions: UInt32, linkCount: UInt32, owner: UInt32
    ) {
        self.kind = kind
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
        self.born = born
        self.permissions = permissions
        self.linkCount = linkCount
        self.owner = owner
    }
}
