/// What a document is going through, as `UIDocument.State` defines it: an
/// empty set is *normal* (open, nothing wrong).
public struct DocumentState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Open, nothing wrong.
    public static let normal: DocumentState = []
    /// Not open: reading and saving are refused.
    public static let closed = DocumentState(rawValue: 1 << 0)
    /// A save met content someone else wrote meanwhile; their content was kept
    /// as a conflict version until ``Document/resolveConflict(keeping:)``.
    public static let inConflict = DocumentState(rawValue: 1 << 1)
    /// The last save failed (the disk is full, a permission): the changes are
    /// kept, and the next autosave tries again.
    public static let savingError = DocumentState(rawValue: 1 << 2)
    /// Someone else is writing the file (a process has it open for writing,
    /// or a WebDAV client holds a lock): saves wait until they are done.
    public static let editingDisabled = DocumentState(rawValue: 1 << 3)
    /// A new version is arriving (an upload under way): see ``Document/progress``.
    public static let progressAvailable = DocumentState(rawValue: 1 << 4)

    public var description: String {
        if isEmpty { return "normal" }
        let names: [(DocumentState, String)] = [
            (.closed, "closed"), (.inConflict, "inConflict"), (.savingError, "savingError"),
            (.editingDisabled, "editingDisabled"), (.progressAvailable, "progressAvailable"),
        ]
        return names.filter { contains($0.0) }.map(\.1).joined(separator: "+")
    }
}

/// How an edit changes the count of unsaved changes (`UIDocument.ChangeKind`).
public enum DocumentChange: Sendable, Hashable {
    /// A change was made: one more unsaved change.
    case done
    /// A change was undone: one fewer.
    case undone
    /// The document is as saved (after a revert, say): none.
    case cleared
}
