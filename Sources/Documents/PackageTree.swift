import CFileshareShim
import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// A package's folder on disk, through open descriptors: read into a
/// ``PackageContents``, stamped, written, and removed. Every function makes
/// blocking system calls and follows no symbolic link.
enum PackageTree {
    /// The staging name of a package being written (``DocumentFolder``).
    static let stagingPrefix = "package-"
    /// Beside a staged package while it is incomplete: what a crash left
    /// with this mark is removed at the next open; without it, the folder
    /// may be content a save swapped out, which is never removed unread.
    static let partialSuffix = ".partial"

    /// One item met by ``walk(_:prefix:visit:)``.
    struct Entry {
        /// Its path relative to the package's folder.
        var relative: String
        /// Its name in `parent`.
        var name: String
        var status: FileStatus
        /// The open folder it is in.
        var parent: Int32
    }

    /// Visits every item under the open folder `fd`, parents before their
    /// children, in name order. An item that vanishes meanwhile is skipped.
    /// `visit` returns `false` to stop the walk.
    @discardableResult
    static func walk(
        _ fd: Int32, prefix: String = "", visit: (Entry) throws(DocumentsError) -> Bool
    ) throws(DocumentsError) -> Bool {
        let names: [String]
        do throws(Errno) {
            names = try folderNames(descriptor: fd).sorted()
        } catch {
            throw DocumentsError.system(error, doing: "listing the package folder", path: ItemPath(prefix))
        }
        for name in names {
            guard let status = try? FileStatus(name: name, in: fd) else { continue }
            let entry = Entry(relative: prefix + name, name: name, status: status, parent: fd)
            guard try visit(entry) else { return false }
            guard status.kind == .directory else { continue }
            let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else { continue }
            defer { close(child) }
            guard try walk(child, prefix: entry.relative + "/", visit: visit) else { return false }
        }
        return true
    }

    // MARK: Reading

    /// The package in the open folder `fd` (at `path`, for messages).
    /// - Throws: ``DocumentsError/Code/tooLarge`` beyond `limits`.
    static func read(_ fd: Int32, limits: PackageLimits, path: ItemPath) throws(DocumentsError) -> PackageContents {
        var contents = PackageContents()
        var items = 0
        var bytes: Int64 = 0
        try walk(fd) { entry throws(DocumentsError) in
            items += 1
            if items > limits.maximumItems {
                throw DocumentsError(
                    .tooLarge, "the package '\(path)' holds more than \(limits.maximumItems) files and folders")
            }
            switch entry.status.kind {
            case .directory:
                try contents.addFolder(entry.relative)
            case .file:
                bytes += entry.status.size
                if bytes > limits.maximumBytes {
                    throw DocumentsError(
                        .tooLarge, "the package '\(path)' holds more than \(limits.maximumBytes) bytes")
                }
                try contents.setFile(entry.relative, try readFile(entry, path: path))
            default:
                break  // links and special files are not part of a package
            }
            return true
        }
        return contents
    }

    private static func readFile(_ entry: Entry, path: ItemPath) throws(DocumentsError) -> [UInt8] {
        let fd = openat(entry.parent, entry.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            throw DocumentsError.system(Errno(rawValue: errno), doing: "reading \(entry.relative) of", path: path)
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Int(entry.status.size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                cfs_pread(fd, raw.baseAddress! + offset, raw.count - offset, Int64(offset))
            }
            if count < 0 {
                throw DocumentsError.system(
                    Errno(rawValue: Int32(-count)), doing: "reading \(entry.relative) of", path: path)
            }
            if count == 0 { break }
            offset += count
        }
        return Array(bytes[..<offset])
    }

    // MARK: Stamps

    /// The stamp of the package in the open folder `fd`: the folder's device
    /// and inode, the bytes of its files, the newest file's modification
    /// time, and in ``ContentStamp/tree`` a digest of every item's relative
    /// path, kind and inode, and of every file's size and modification time.
    ///
    /// Why metadata and not a hash of the bytes: it is what a bytes
    /// document's stamp compares too, it costs one `statx` per item where
    /// hashing would read the whole package at every change the observer
    /// reports, and it catches every write that is not a same-size rewrite
    /// within the clock's granularity (a file replaced by a rename has another
    /// inode; one added, removed or renamed changes the list). Folders'
    /// modification times are left out: a folder's follows its entries, which
    /// the list already holds, and a rename of the package itself may touch it.
    static func stamp(_ fd: Int32, limits: PackageLimits) -> ContentStamp? {
        guard let root = try? FileStatus(descriptor: fd), root.kind == .directory else { return nil }
        var digest = Digest()
        var size: Int64 = 0
        var newest: Int64 = 0
        var items = 0
        let complete =
            (try? walk(fd) { entry in
                items += 1
                guard items <= limits.maximumItems else { return false }
                digest.add(Array(entry.relative.utf8))
                digest.add(entry.status.kind == .directory ? 1 : entry.status.kind == .file ? 2 : 3)
                digest.add(entry.status.inode)
                if entry.status.kind == .file {
                    digest.add(UInt64(bitPattern: entry.status.size))
                    digest.add(UInt64(bitPattern: entry.status.modified))
                    size += entry.status.size
                    newest = max(newest, entry.status.modified)
                }
                return true
            }) ?? false
        // A package too large to read whole still has a stamp, of what was walked.
        if !complete { digest.add(0xFFFF_FFFF) }
        return ContentStamp(
            device: root.device, inode: root.inode, size: size, modified: newest, tree: digest.value, born: root.born)
    }

    /// Whether any file in the open folder `fd` is open for writing by some
    /// process (the read lease tells).
    static func hasWriters(_ fd: Int32) -> Bool {
        var writing = false
        _ = try? walk(fd) { entry in
            if entry.status.kind == .file && cfs_has_no_writers_at(entry.parent, entry.name) == 0 { writing = true }
            return !writing
        }
        return writing
    }

    // MARK: Writing and removing

    /// Writes `contents` into the open, empty folder `fd`: every file
    /// written and flushed, then every folder flushed, deepest first, the
    /// package's own last — so once this returns, the whole tree is on disk.
    static func write(_ contents: PackageContents, into fd: Int32, path: ItemPath) throws(DocumentsError) {
        // "a" sorts before "a/b": parents are made first.
        let folders = contents.folders.sorted()
        for folder in folders {
            try check(cfs_mkdirat(fd, folder, 0o755), doing: "making \(folder) in", path: path)
        }
        for (relative, bytes) in contents.files.sorted(by: { $0.key < $1.key }) {
            let file = openat(fd, relative, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard file >= 0 else {
                throw DocumentsError.system(Errno(rawValue: errno), doing: "staging \(relative) of", path: path)
            }
            defer { close(file) }
            let written = bytes.withUnsafeBytes { raw in cfs_pwrite_all(file, raw.baseAddress, raw.count, 0) }
            try check(Int32(clamping: written), doing: "writing \(relative) of", path: path)
            try check(cfs_fsync(file), doing: "flushing \(relative) of", path: path)
        }
        for folder in folders.reversed() {
            let child = openat(fd, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else {
                throw DocumentsError.system(Errno(rawValue: errno), doing: "flushing \(folder) of", path: path)
            }
            defer { close(child) }
            try check(cfs_fsync(child), doing: "flushing \(folder) of", path: path)
        }
        try check(cfs_fsync(fd), doing: "flushing", path: path)
    }

    /// Removes `name` of the open folder `directory`: a file, or a folder
    /// with everything in it. Nothing there is fine.
    static func remove(_ name: String, in directory: Int32) throws(DocumentsError) {
        let file = cfs_unlinkat(directory, name, 0)
        if file == 0 || file == -ENOENT { return }
        guard file == -EISDIR else { return try check(file, doing: "removing", path: ItemPath(name)) }
        let fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            throw DocumentsError.system(Errno(rawValue: errno), doing: "removing", path: ItemPath(name))
        }
        do {
            defer { close(fd) }
            let names: [String]
            do throws(Errno) { names = try folderNames(descriptor: fd) } catch {
                throw DocumentsError.system(error, doing: "removing", path: ItemPath(name))
            }
            for child in names { try remove(child, in: fd) }
        }
        let result = cfs_unlinkat(directory, name, Int32(CFS_AT_REMOVEDIR))
        if result != -ENOENT { try check(result, doing: "removing", path: ItemPath(name)) }
    }

    private static func check(_ result: Int32, doing what: String, path: ItemPath) throws(DocumentsError) {
        if result < 0 { throw DocumentsError.system(Errno(rawValue: -result), doing: what, path: path) }
    }

    /// FNV-1a, 64 bits: a stamp is compared for equality, never trusted against an adversary.
    struct Digest {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(_ bytes: [UInt8]) {
            for byte in bytes { addByte(byte) }
            addByte(0)
        }

        mutating func add(_ number: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { addByte(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
        }

        private mutating func addByte(_ byte: UInt8) {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
        }
    }
}
