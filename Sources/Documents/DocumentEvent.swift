public import FileWatching

/// What a document tells its presenter, in order, through ``Document/events``.
///
/// Its own saves are never reported as changes by someone else: the document
/// knows the identity and version of what it wrote.
public enum DocumentEvent: Sendable, Hashable {
    /// The state changed (from, to).
    case stateChanged(from: DocumentState, to: DocumentState)
    /// Someone else changed the content. With no unsaved changes, read it
    /// again (``Document/revert()``); with some, the next save keeps their
    /// content as a conflict version, so nothing is lost either way.
    case changedBySomeoneElse(path: ItemPath)
    /// The document's file was renamed or moved (by anyone): it stays open,
    /// at its new path.
    case moved(from: ItemPath, to: ItemPath)
    /// The file was deleted. The document stays open with its content: save
    /// puts it back at its last path, or close it.
    case deleted(path: ItemPath)
    /// A save finished: clean, or a conflict (the content it replaced was not
    /// the one this document last read or wrote, and was kept as a conflict version).
    case saved(SaveOutcome)
    /// A save failed; the changes are kept and the next autosave tries again.
    case saveFailed(DocumentsError)
}

/// What one save did with the content it replaced.
public enum SaveOutcome: Sendable, Hashable {
    /// The file held what this document last read or wrote: it was replaced
    /// (and kept as an ordinary version when versions are kept).
    case clean
    /// Nothing was there (a new document, or the file was deleted meanwhile).
    case created
    /// Someone else wrote meanwhile: this save is now the current content,
    /// and theirs is kept as the conflict version named here. Why this way
    /// round: the person saving is looking at their edit now, while the other
    /// content is safe and shown as a conflict to resolve.
    case conflict(version: String)
}
