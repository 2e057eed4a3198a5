import FileWatching

extension FileStatus {
    /// Birth time (nanoseconds since the epoch), or the modification time
    /// where the file system does not record it.
    var created: Int64 { born ?? modified }

    /// The strong validator of the content: inode, size and modification time.
    var entityTag: String {
        "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(modified, radix: 16))\""
    }
}
