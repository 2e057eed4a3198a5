/// One change the observer reports, as described in `events.md`.
public enum Change: Sendable, Hashable {
    /// The initial scan begins; `root` is the absolute path.
    case scanStarted(root: String)
    /// The initial scan is done and every directory is watched.
    case scanCompleted(root: String, items: Int, elapsedMilliseconds: Int)
    /// A new item appeared.
    case added(ChangedItem)
    /// The content of a file changed.
    case modified(ChangedItem)
    /// A file reported as being written is complete.
    case finished(path: ItemPath, id: ItemID, size: Int64)
    /// The item is gone: deleted, or moved out of the root. For a directory
    /// it covers whatever was still under it.
    case removed(path: ItemPath, id: ItemID, kind: ItemKind)
    /// The item got a new name in the same folder.
    case renamed(from: ItemPath, to: ItemPath, id: ItemID, kind: ItemKind)
    /// The item moved to another folder under the root.
    case moved(from: ItemPath, to: ItemPath, id: ItemID, kind: ItemKind)
    /// A new item that is a copy of the item at `source`.
    case duplicated(ChangedItem, source: ItemPath)
    /// The kernel dropped events for this subtree, which was scanned again.
    case rescanned(path: ItemPath, reason: String)
    /// This subtree cannot be watched by events and is polled instead.
    case degraded(path: ItemPath, reason: String, hint: String)
    /// Something went wrong that the observer survived.
    case error(message: String, path: ItemPath?)
    /// The watched root itself was deleted or moved away; the stream ends.
    case rootRemoved(root: String)

    /// The contract's name for the event type, such as `added` or `scan-started`.
    public var typeName: String {
        switch self {
        case .scanStarted: "scan-started"
        case .scanCompleted: "scan-completed"
        case .added: "added"
        case .modified: "modified"
        case .finished: "finished"
        case .removed: "removed"
        case .renamed: "renamed"
        case .moved: "moved"
        case .duplicated: "duplicated"
        case .rescanned: "rescanned"
        case .degraded: "degraded"
        case .error: "error"
        case .rootRemoved: "root-removed"
        }
    }

    /// The change with its id replaced, when `replacements` has it.
    public func replacingIDs(_ replacements: [ItemID: ItemID]) -> Change {
        guard let old = id, let new = replacements[old] else { return self }
        switch self {
        case .added(var item):
            item.id = new
            return .added(item)
        case .modified(var item):
            item.id = new
            return .modified(item)
        case .duplicated(var item, let source):
            item.id = new
            return .duplicated(item, source: source)
        case .finished(let path, _, let size): return .finished(path: path, id: new, size: size)
        case .removed(let path, _, let kind): return .removed(path: path, id: new, kind: kind)
        case .renamed(let from, let to, _, let kind): return .renamed(from: from, to: to, id: new, kind: kind)
        case .moved(let from, let to, _, let kind): return .moved(from: from, to: to, id: new, kind: kind)
        default: return self
        }
    }

    /// The paths of the item the change is about: its path, or both ends of
    /// a rename or a move; none for a report that is not about one item (a
    /// rescan, the root removed, an error).
    public var itemPaths: [ItemPath] {
        switch self {
        case .added(let item), .modified(let item), .duplicated(let item, _): [item.path]
        case .finished(let path, _, _), .removed(let path, _, _): [path]
        case .renamed(let from, let to, _, _), .moved(let from, let to, _, _): [from, to]
        default: []
        }
    }

    /// The id of the item the change is about, if it is about one.
    public var id: ItemID? {
        switch self {
        case .added(let item), .modified(let item), .duplicated(let item, _): item.id
        case .finished(_, let id, _), .removed(_, let id, _), .renamed(_, _, let id, _), .moved(_, _, let id, _): id
        default: nil
        }
    }
}

/// The item an `added`, `modified` or `duplicated` change is about.
public struct ChangedItem: Sendable, Hashable {
    /// Where the item is, relative to the root.
    public var path: ItemPath
    /// Its identity.
    public var id: ItemID
    /// What it is.
    public var kind: ItemKind
    /// Its size in bytes (files).
    public var size: Int64
    /// Whether the file is still being written; a `finished` change follows.
    public var isWriting: Bool

    /// Creates a value.
    public init(path: ItemPath, id: ItemID, kind: ItemKind, size: Int64, isWriting: Bool) {
        self.path = path
        self.id = id
        self.kind = kind
        self.size = size
        self.isWriting = isWriting
    }
}
