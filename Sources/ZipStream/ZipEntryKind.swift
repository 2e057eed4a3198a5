/// What an archive entry is: a file with content, or a folder.
public enum ZipEntryKind: Sendable, Hashable {
    /// A regular file; its bytes follow its header.
    case file
    /// A folder: an entry with no content whose name ends with `/`.
    case directory
}
