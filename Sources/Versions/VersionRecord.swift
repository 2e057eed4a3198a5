public import ChangeLog
public import FileWatching

/// One kept version of a file: the content it had before it was replaced,
/// and what is known of how it got there.
public struct VersionRecord: Sendable, Hashable {
    /// The version's name (``StoreName``): unique among the item's versions.
    public var version: String
    /// The item the version belongs to.
    public var id: ItemID
    /// Where the item was when the version was kept, relative to the shared folder.
    public var path: String
    /// The content's size in bytes (for a folder, of every file in it).
    public var size: Int64
    /// The content's modification time, nanoseconds since the epoch.
    public var modified: Int64
    /// When the version was kept, nanoseconds since the epoch.
    public var saved: Int64
    /// Who replaced the content (the change that made this a version), if the server knows.
    public var origin: ChangeOrigin?
    /// Whether this is a conflict version: an edit that lost a race, to be resolved.
    public var conflict: Bool
    /// What the content is: a file, or a folder (a package document's whole tree).
    public var kind: ItemKind

    /// Creates a record.
    public init(
        version: String, id: ItemID, path: String, size: Int64, modified: Int64, saved: Int64,
        origin: ChangeOrigin?, conflict: Bool, kind: ItemKind = .file
    ) {
        self.kind = kind
        self.version = version
        self.id = id
        self.path = path
        self.size = size
        self.modified = modified
        self.saved = saved
        self.origin = origin
        self.conflict = conflict
    }

    /// Newest first: by the time kept, then by name.
    public static func newestFirst(_ lhs: VersionRecord, _ rhs: VersionRecord) -> Bool {
        lhs.saved != rhs.saved ? lhs.saved > rhs.saved : lhs.version > rhs.version
    }
}

/// One item in the trash: a deleted file or folder (with everything in it),
/// and where it was.
public struct TrashRecord: Sendable, Hashable {
    /// The entry's name (``StoreName``).
    public var trashId: String
    /// Where the item was, relative to the shared folder.
    public var path: String
    /// The item's id when it was deleted, if the server knew it.
    public var id: ItemID?
    /// What the item is.
    public var kind: ItemKind
    /// Its size in bytes (for a folder, of every file in it).
    public var size: Int64
    /// When it was deleted, nanoseconds since the epoch.
    public var deleted: Int64
    /// Who deleted it, if the server knows.
    public var by: ChangeOrigin?

    /// Creates a record.
    public init(
        trashId: String, path: String, id: ItemID?, kind: ItemKind, size: Int64, deleted: Int64, by: ChangeOrigin?
    ) {
        self.trashId = trashId
        self.path = path
        self.id = id
        self.kind = kind
        self.size = size
        self.deleted = deleted
        self.by = by
    }
}
