/// What makes a file itself on its file system: a reused inode with another
/// birth time or generation is another file.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    /// Birth time in nanoseconds, or the inode generation where the file
    /// system records no birth time.
    var birth: Int64
    /// A fingerprint of the kernel's file handle (inode number and
    /// generation), 0 where the file system gives none. ext4 gives a number
    /// freed by a delete to the next file made, at once, and its birth time
    /// is taken from a clock tick of a few milliseconds: the two files can
    /// share number and birth time, and only the generation tells them apart.
    var generation: UInt32 = 0
}

/// The `lstat` facts the observer keeps about an item.
struct FileMetadata: Hashable, Sendable {
    var kind: ItemKind
    var identity: FileIdentity
    var size: Int64
    /// Modification time, nanoseconds since the epoch.
    var modified: Int64
    /// Birth time, nanoseconds since the epoch, or 0 when unknown.
    var created: Int64

    /// Whether size and modification time are the same.
    func hasSameContentStamp(as other: FileMetadata) -> Bool {
        size == other.size && modified == other.modified
    }
}

/// One entry of a directory listing.
struct DirectoryEntry: Sendable {
    var name: [UInt8]
    /// The entry's metadata, or the error that `lstat` gave (it may have gone
    /// away between the listing and the `lstat`).
    var metadata: Result<FileMetadata, Errno>
}

/// How adding a kernel watch to a directory went.
enum WatchOutcome: Sendable, Equatable {
    /// No watch was asked for (polled subtrees, polling sources).
    case notRequested
    /// The watch is in place, with this descriptor.
    case watching(Int32)
    /// The watch could not be added.
    case failed(Errno)
}

/// A directory's entries, and the watch added before they were read.
struct DirectoryListing: Sendable {
    var watch: WatchOutcome
    /// The entries, or why the directory could not be read.
    var entries: Result<[DirectoryEntry], Errno>
    /// The device and inode of the directory listed (and watched), where
    /// known: the one at the path when it was opened, which a rename may
    /// have made another than the one the caller looked up before.
    var listed: (device: UInt64, inode: UInt64)? = nil
}

/// The platform seam: every file-system access the observer's logic makes.
///
/// The Linux implementation uses `statx`, `getdents64`, inotify and read
/// leases; tests use an in-memory file system, so the logic runs without
/// touching disk.
protocol FileSystemAccess {
    /// `lstat` of a path relative to the root.
    func metadata(at path: ItemPath) -> Result<FileMetadata, Errno>
    /// Adds a watch to the directory (when `watch` is true) and then lists it,
    /// so that nothing created in between is missed.
    func listDirectory(at path: ItemPath, watch: Bool) -> DirectoryListing
    /// Removes a watch added by ``listDirectory(at:watch:)``.
    func removeWatch(_ descriptor: Int32)
    /// Whether no process has the file open for writing: `true` or `false`
    /// when the platform can tell for sure, `nil` when it cannot.
    func hasNoWriters(at path: ItemPath) -> Bool?
    /// Why kernel events cannot be trusted for the file system holding this
    /// directory (a network or FUSE file system: changes made on other
    /// machines raise no events), or `nil` when they can.
    func eventsUnsupported(at path: ItemPath) -> String?
    /// The id kept in the item's identity attribute, if it has one.
    func identityAttribute(at path: ItemPath) -> ItemID?
    /// Stores an id in the item's identity attribute.
    func setIdentityAttribute(_ id: ItemID, at path: ItemPath)
    /// Stores an id in the item's identity attribute unless it has one
    /// (in one step: a copy tool may write one at any moment); `false`
    /// when it had one.
    func createIdentityAttribute(_ id: ItemID, at path: ItemPath) -> Bool
    /// Up to `count` bytes of a file from `offset`, `nil` when it cannot be read.
    func readBytes(at path: ItemPath, offset: Int64, count: Int) -> [UInt8]?
    /// Waits until the renames out of the directory at `path` that have
    /// begun reporting have reported both halves. `false` when it cannot
    /// tell: the directory at `path` is not `identity` (it was renamed or
    /// replaced), or cannot be opened.
    func awaitRenames(inDirectory path: ItemPath, identity: FileIdentity) -> Bool
}

/// A kernel-like event: what inotify reports, and what other sources are
/// translated into.
struct SourceEvent: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case created
        case deleted
        case movedFrom(cookie: UInt32)
        case movedTo(cookie: UInt32)
        case modified
        case attributes
        case closedWrite
        /// The watched directory itself was deleted.
        case selfDeleted
        /// The watched directory itself was moved.
        case selfMoved
        /// The kernel removed the watch.
        case watchRemoved
        /// The file system holding the directory was unmounted.
        case unmounted
        /// The kernel's queue overflowed: events were lost.
        case overflow
        /// Something changed in this directory: scan it again (polling and
        /// FSEvents-like sources).
        case rescan
    }

    /// The watch descriptor of the directory the event is about (-1 for overflow).
    var watch: Int32
    var kind: Kind
    /// The name of the entry inside the directory, `nil` for the directory itself.
    var name: [UInt8]?
    var isDirectory: Bool

    init(watch: Int32, kind: Kind, name: [UInt8]? = nil, isDirectory: Bool = false) {
        self.watch = watch
        self.kind = kind
        self.name = name
        self.isDirectory = isDirectory
    }
}
