/// What a person may do at a path of the shared folder (and under it, unless
/// a more specific rule says otherwise).
///
/// The rights are ordered: each one but ``upload`` allows what the one
/// before it allows. ``upload`` is apart: a drop box, where new files may be
/// added but nothing can be seen or replaced.
public enum Right: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// The path does not exist for this person: 404, never 403, so names do not leak.
    case none
    /// A drop box: add new files; see nothing, replace nothing.
    case upload
    /// List, download, ZIP, thumbnails, events.
    case read
    /// Everything ``read`` allows, and upload, rename, move, delete, lock.
    case write

    public var description: String { rawValue }

    /// Whether the item and its name may be seen (listed, downloaded, in events).
    public var canRead: Bool { self == .read || self == .write }

    /// Whether a new file may be added (one that does not exist yet).
    public var canAdd: Bool { self == .upload || self == .write }

    /// Whether what exists may be changed: replaced, renamed, moved, deleted, locked.
    public var canChange: Bool { self == .write }

    /// Whether the path exists at all for this person.
    public var canSee: Bool { self != .none }

    /// What both rights allow, and nothing more: a share link's right where
    /// its maker's own is narrower. `read` and `upload` share nothing (one
    /// sees and adds nothing, the other adds and sees nothing).
    public func limited(to other: Right) -> Right {
        if canChange && other.canChange { return .write }
        if canRead && other.canRead { return .read }
        if canAdd && other.canAdd { return .upload }
        return .none
    }
}
