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
public struct ContentStamp: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Nanoseconds since the epoch.
    public var modified: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modified: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
    }

    public init(_ status: FileStatus) {
        self.init(device: status.device, inode: status.inode, size: status.size, modified: status.modified)
    }
}
