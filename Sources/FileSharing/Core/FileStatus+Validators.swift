import FileWatching

extension FileStatus {
    /// Birth time (nanoseconds since the epoch), or the modification time
    /// where the file system does not record it.
    var created: Int64 { born ?? modified }

    /// The strong validator of the content: inode, size and modification time.
    var entityTag: String { FileStatus.entityTag(inode: inode, size: size, modified: modified) }

    /// The strong validator of a file with this inode, size and modification
    /// time (the one place its form is written).
    /// `"inode-size-modified"`, each in lowercase hexadecimal (a `-` before a
    /// negative one), as `String(_:radix: 16)` writes them: written byte by
    /// byte because every answer to a file carries one, and the three
    /// conversions and the interpolation showed in a small read's profile.
    static func entityTag(inode: UInt64, size: Int64, modified: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(52)
        bytes.append(UInt8(ascii: "\""))
        writeEntityTagBody(inode: inode, size: size, modified: modified, into: &bytes)
        bytes.append(UInt8(ascii: "\""))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The entity tag between its quotes, appended to `bytes` (a listing
    /// writes thousands into its answer without making a string of each).
    static func writeEntityTagBody(inode: UInt64, size: Int64, modified: Int64, into bytes: inout [UInt8]) {
        bytes.appendHex(inode)
        bytes.append(UInt8(ascii: "-"))
        bytes.appendHex(size)
        bytes.append(UInt8(ascii: "-"))
        bytes.appendHex(modified)
    }
}

extension Item {
    /// The file's strong validator as the observer knows it: the same as
    /// the download's `ETag` once the observer has seen the last write (a
    /// moment after it). A client that sends an older one back in `If-Match`
    /// gets 412, never a lost update.
    var entityTag: String { FileStatus.entityTag(inode: inode, size: size, modified: modificationTime) }
}
