public import FileWatching

/// Where the content a save replaced goes. A save swaps the new file into
/// place in one rename, and the file it swapped out waits in the staging
/// folder: the keeper must take it away (rename it into its keeping, on the
/// same file system, so nothing is copied) or remove it.
public protocol ReplacedContentKeeper: Sendable {
    /// Takes the file `name` in the open folder `folder`, the content that was
    /// at `path` (the document `id`) before a save. `conflict` says it was
    /// not the content the document last read or wrote: someone else's, which
    /// must never be lost. Returns the name of the kept version, or `nil`
    /// when it was not kept (an ordinary replaced content, with no versions kept).
    func keep(_ name: String, in folder: Int32, path: ItemPath, id: ItemID?, conflict: Bool)
        throws(DocumentsError) -> String?

    /// Ends a conflict of the document `id`: its conflict versions become
    /// ordinary versions, except those in `discarding`, which are removed (a
    /// person chose to let them go). The default does nothing.
    func resolve(_ id: ItemID, discarding: [String]) throws(DocumentsError)

    /// The document `old` goes on as `new` (its file or package was
    /// replaced in a way the observer takes for a new item, deleted and
    /// made again, say, and the document re-attached by its path): what is
    /// kept for `old` is `new`'s from now on. The default does nothing.
    func reattach(from old: ItemID, to new: ItemID)
}

extension ReplacedContentKeeper {
    public func resolve(_ id: ItemID, discarding: [String]) throws(DocumentsError) {}
    public func reattach(from old: ItemID, to new: ItemID) {}
}
