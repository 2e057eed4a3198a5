import FileWatching

extension FileStatus {
    /// Birth time (nanoseconds since the epoch), or the modification time
    /// where the file system does not record it.
    var created: Int64 { born ?? modified }

    /// The strong validator of the content: inode, size and modification time.
    var entityTag: String { FileStatus.entityTag(inode: inode, size: size, modified: modified) }

    /// The strong validator of a file with this inode, size and modification
    /// time (the one place its form is written).
    static func entityTag(inode: UInt64, size: Int64, modified: Int64) -> String {
        "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(modified, radix: 16))\""
    }
}

extension Item {
    /// The file's strong validator as the observer knows it: the same as
    /// the download's `ETag` once the observer has seen the last write (a
    /// moment after it). A client that sends an older one back in `If-Match`
    /// gets 412, never a lost update.
    var entityTag: String { FileStatus.entityTag(inode: inode, size: size, modified: modificationTime) }
}
