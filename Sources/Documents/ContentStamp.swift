public import FileWatching

/// Which file, at which version: what a document remembers of the content it
/// last read or wrote, to tell its own writes from everyone else's.
///
/// A file replaced by a rename has another inode; one rewritten in place has
/// another size or modification time. (A rewrite of the same size within the
/// file system's time granularity goes unseen, as it does for every tool
/// that compares times.) The inode's change time is left out on purpose: a
/// rename, a permission or an extended attribute (the observer's identity
/// mark) changes it without touching the content.
///
/// A package's stamp is its folder's device and inode, the bytes of its
/// files, the newest file's time, and a digest of the whole tree in ``tree``
/// (see ``DocumentFolder/readPackage(_:)``): a write to any file inside, or a
/// file added, removed or replaced, changes it.
public struct ContentStamp: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Nanoseconds since the epoch.
    public var modified: Int64
    /// For a package, a digest of every item's relative path, kind and
    /// inode and every file's size and time; `nil` for a file.
    public var tree: UInt64?
    /// The inode's birth time, where the file system records it: it tells
    /// an inode number used again (a file deleted, and a new one given its
    /// number, as file systems do at once) from the file itself.
    public var born: Int64?

    public init(
        device: UInt64, inode: UInt64, size: Int64, modified: Int64, tree: UInt64? = nil, born: Int64? = nil
    ) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.tree = tree
        self.born = born
    }

    public init(_ status: FileStatus) {
        self.init(
            device: status.device, inode: status.inode, size: status.size, modified: status.modified,
            born: status.born)
    }

    /// Whether `other` is the same inode as this (not a later one given its
    /// number): the same device and inode, and the same birth time where
    /// both know it. Its content may differ.
    public func isSameFile(as other: ContentStamp) -> Bool {
        device == other.device && inode == other.inode && (born == nil || other.born == nil || born == other.born)
    }
}
