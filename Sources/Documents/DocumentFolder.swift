import CFileshareShim
public import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// The folder documents live in, and the one place their bytes meet the
/// disk: reading, and saving safely. Every method makes blocking system
/// calls; ``Document`` runs them off the cooperative pool.
///
/// A save is written to the staging folder (`.fileshare/staging`, on the same
/// file system), flushed, and exchanged with the file at the path in one
/// `renameat2(RENAME_EXCHANGE)`: readers see the old content or the new,
/// never a mix, and the content swapped out is in hand to compare with the
/// one the document knew — so a write by someone else between the
/// document's read and its save is caught, not overwritten.
public final class DocumentFolder: Sendable {
    /// The folder's absolute path.
    public let root: String
    let rootFD: Int32
    let stagingFD: Int32
    /// Where replaced content goes.
    public let keeper: any ReplacedContentKeeper
    /// How large a package may be read or saved.
    public let packageLimits: PackageLimits

    /// Opens `root` and its staging folder (made when missing), removing the
    /// half-written packages a crash left there.
    /// - Parameters:
    ///   - keeper: Where replaced content goes; by default conflict versions
    ///     are kept in the private folder and ordinary replaced content removed.
    ///   - packageLimits: How large a package may be read or saved.
    public init(
        root: String, keeper: (any ReplacedContentKeeper)? = nil, packageLimits: PackageLimits = PackageLimits()
    ) throws(DocumentsError) {
        self.root = root
        self.packageLimits = packageLimits
        let opened = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard opened >= 0 else {
            throw DocumentsError.system(Errno(rawValue: errno), doing: "opening the folder", path: ItemPath(root))
        }
        rootFD = opened
        for part in [".fileshare", ".fileshare/staging"] {
            let made = cfs_mkdirat(opened, part, 0o700)
            if made < 0 && made != -EEXIST {
                close(opened)
                throw DocumentsError.system(Errno(rawValue: -made), doing: "making", path: ItemPath(part))
            }
        }
        let staging = cfs_open_beneath(opened, ".fileshare/staging", O_RDONLY | O_DIRECTORY, 0)
        guard staging >= 0 else {
            close(opened)
            throw DocumentsError.system(
                Errno(rawValue: -staging), doing: "opening", path: ItemPath(".fileshare/staging"))
        }
        stagingFD = staging
        do throws(DocumentsError) {
            if let keeper {
                self.keeper = keeper
            } else {
                self.keeper = try ConflictCopies(root: root)
            }
        } catch {
            close(staging)
            close(opened)
            throw error
        }
        removeHalfWrittenPackages()
    }

    deinit {
        close(stagingFD)
        close(rootFD)
    }

    // MARK: Reading

    /// The whole content of the file at `path`, and its stamp (taken from the
    /// open file, so both describe the same content).
    public func read(_ path: ItemPath) throws(DocumentsError) -> (bytes: [UInt8], stamp: ContentStamp) {
        let fd = try openFile(path, flags: O_RDONLY)
        defer { close(fd) }
        let status = try status(of: fd, path: path)
        guard status.kind == .file else { throw DocumentsError(.isFolder, "'\(path)' is not a file") }
        var bytes = [UInt8](repeating: 0, count: Int(status.size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                cfs_pread(fd, raw.baseAddress! + offset, raw.count - offset, Int64(offset))
            }
            if count < 0 { throw DocumentsError.system(Errno(rawValue: Int32(-count)), doing: "reading", path: path) }
            if count == 0 { break }  // shrank while read: what was read is what the stamp's size says no more
            offset += count
        }
        // Grew while read: take the stamp again, so the content and the stamp agree at worst on "changed".
        return (Array(bytes[..<offset]), try self.status(of: fd, path: path).stamp)
    }

    /// The stamp of what is at `path` now (a file's, or a package's), or `nil` when nothing is.
    public func stamp(of path: ItemPath) -> ContentStamp? {
        guard let parent = try? openParent(of: path) else { return nil }
        defer { if parent != rootFD { close(parent) } }
        guard let status = try? FileStatus(name: leaf(of: path), in: parent) else { return nil }
        switch status.kind {
        case .file: return ContentStamp(status)
        case .directory: return packageStamp(leaf(of: path), in: parent)
        default: return nil
        }
    }

    // MARK: Saving

    /// Saves `bytes` at `path` (the document `id`), safely. `known` is the
    /// content the document last read or wrote (`nil`: it knew none).
    /// - Parameter creating: Refuse when something is at `path` already.
    /// - Returns: What happened to the content replaced, and the stamp of the new content.
    public func save(_ bytes: [UInt8], to path: ItemPath, id: ItemID?, known: ContentStamp?, creating: Bool = false)
        throws(DocumentsError) -> (SaveOutcome, ContentStamp)
    {
        try save(bytes, to: path, id: id, known: known, creating: creating, attempts: 3)
    }

    private func save(
        _ bytes: [UInt8], to path: ItemPath, id: ItemID?, known: ContentStamp?, creating: Bool, attempts: Int
    ) throws(DocumentsError) -> (SaveOutcome, ContentStamp) {
        let parent = try openParent(of: path)
        defer { if parent != rootFD { close(parent) } }
        let name = leaf(of: path)
        let staged = "document-" + String(UInt64.random(in: .min ... .max), radix: 16)
        let fd = openat(stagingFD, staged, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw DocumentsError.system(Errno(rawValue: errno), doing: "staging", path: path) }
        defer { close(fd) }
        var placed = false
        defer { if !placed { _ = cfs_unlinkat(stagingFD, staged, 0) } }
        // Keep the permissions of the file it replaces.
        if let existing = try? FileStatus(name: name, in: parent), existing.kind == .file {
            _ = cfs_fchmod(fd, existing.permissions)
        }
        let written = bytes.withUnsafeBytes { raw in cfs_pwrite_all(fd, raw.baseAddress, raw.count, 0) }
        try check(Int32(clamping: written), doing: "writing", path: path)
        try check(cfs_fsync(fd), doing: "flushing", path: path)

        switch try place(staged, at: name, in: parent, path: path, creating: creating, attempts: attempts) {
        case .exchanged:
            placed = true
            return try settle(swappedOut: staged, fd: fd, parent: parent, path: path, id: id, known: known)
        case .created:
            placed = true
            return (.created, try status(of: fd, path: path).stamp)
        case .raced:
            return try save(bytes, to: path, id: id, known: known, creating: false, attempts: attempts - 1)
        }
    }

    /// How ``place(_:at:in:path:creating:attempts:)`` put a staged item in place.
    enum Placement {
        /// Exchanged with what was there, which is now at the staged name.
        case exchanged
        /// Where nothing was (the folder flushed).
        case created
        /// Something arrived at the path between the two renames: save again, to exchange with it.
        case raced
    }

    /// Puts the staged file or package `staged` at `name` in `parent`, in
    /// one rename: exchanged with what is there (unless `creating`), or
    /// made where nothing is. The same for bytes and packages.
    /// - Throws: ``DocumentsError`` `.exists` when `creating` and something
    ///   is there; `.system` when the path keeps changing past `attempts`.
    func place(
        _ staged: String, at name: String, in parent: Int32, path: ItemPath, creating: Bool, attempts: Int
    ) throws(DocumentsError) -> Placement {
        if !creating {
            let exchanged = cfs_renameat2(stagingFD, staged, parent, name, UInt32(CFS_RENAME_EXCHANGE))
            if exchanged == 0 { return .exchanged }
            // Nothing there (deleted meanwhile, or new): put it there below.
            if exchanged != -ENOENT { try check(exchanged, doing: "saving", path: path) }
        }
        let created = cfs_renameat2(stagingFD, staged, parent, name, UInt32(CFS_RENAME_NOREPLACE))
        if created == -EEXIST {
            if creating { throw DocumentsError(.exists, "'\(path)' already exists; open it, or choose another name") }
            guard attempts > 1 else {
                throw DocumentsError(.system, "'\(path)' keeps appearing and disappearing; save again")
            }
            return .raced
        }
        try check(created, doing: "saving", path: path)
        _ = cfs_fsync(parent)
        return .created
    }

    /// Whether the content a save swapped out is someone else's: not what
    /// the document knew (`stamp`, its stamp as the save found it), or open
    /// for writing by a process (`hasWriters`), whose writes after the
    /// exchange land in it.
    ///
    /// A writer seen is looked for again, after 10 and 50 ms: a process
    /// being started holds a copy of every descriptor open when it forked
    /// until its program begins, close-on-exec ones too, so the saver's own
    /// files, closed a moment before, can show as open for writing while
    /// another thread starts a program (CI saw a package nobody else touched
    /// saved as a conflict). A writer still there is real; once it is gone
    /// it may have written meanwhile, so the content is compared again
    /// (`restamp`).
    static func replacedByOthers(
        known: ContentStamp?, stamp: ContentStamp?, restamp: () -> ContentStamp?, hasWriters: () -> Bool
    ) -> Bool {
        if known != stamp { return true }
        guard hasWriters() else { return false }
        for pause: UInt32 in [10_000, 50_000] {
            usleep(pause)
            if !hasWriters() { return known != restamp() }
        }
        return true
    }

    /// After the exchange: the old content is in the staging folder under
    /// `swappedOut`. Compare it with what the document knew, and hand it to the keeper.
    private func settle(
        swappedOut: String, fd: Int32, parent: Int32, path: ItemPath, id: ItemID?, known: ContentStamp?
    ) throws(DocumentsError) -> (SaveOutcome, ContentStamp) {
        let old: FileStatus
        do {
            old = try FileStatus(name: swappedOut, in: stagingFD)
        } catch {
            throw DocumentsError.system(error, doing: "inspecting the replaced content of", path: path)
        }
        if old.kind == .directory {
            // A folder took the file's place: put it back, and refuse.
            _ = cfs_renameat2(stagingFD, swappedOut, parent, leaf(of: path), UInt32(CFS_RENAME_EXCHANGE))
            _ = cfs_unlinkat(stagingFD, swappedOut, 0)
            throw DocumentsError(.isFolder, "'\(path)' is a folder now; save the document under another name")
        }
        _ = cfs_fsync(parent)
        // Someone else's content, or a file another process still has open
        // for writing (the read lease tells): its writes after the exchange go
        // to the swapped-out file, which must then be kept, not removed.
        let stagingFD = self.stagingFD
        let conflict = DocumentFolder.replacedByOthers(
            known: known, stamp: ContentStamp(old),
            restamp: { (try? FileStatus(name: swappedOut, in: stagingFD)).map(ContentStamp.init) ?? ContentStamp(old) },
            hasWriters: { cfs_has_no_writers_at(stagingFD, swappedOut) == 0 })
        let version: String?
        do {
            version = try keeper.keep(swappedOut, in: stagingFD, path: path, id: id, conflict: conflict)
        } catch {
            // The new content is in place; the old one stays in the staging
            // folder under its `document-` name, where a person finds it.
            throw error
        }
        let stamp = try status(of: fd, path: path).stamp
        if conflict, let version { return (.conflict(version: version), stamp) }
        return (.clean, stamp)
    }

    // MARK: Paths

    /// The open folder holding `path` (the root's own descriptor for a name at the root).
    func openParent(of path: ItemPath) throws(DocumentsError) -> Int32 {
        try validate(path)
        let parent = path.parent
        if parent.isRoot { return rootFD }
        let fd = cfs_open_beneath(rootFD, parent.description, O_RDONLY | O_DIRECTORY, 0)
        if fd < 0 { throw DocumentsError.system(Errno(rawValue: -fd), doing: "opening the folder of", path: path) }
        return fd
    }

    func openFile(_ path: ItemPath, flags: Int32) throws(DocumentsError) -> Int32 {
        try validate(path)
        let fd = cfs_open_beneath(rootFD, path.description, flags | O_NOFOLLOW, 0)
        if fd < 0 { throw DocumentsError.system(Errno(rawValue: -fd), doing: "opening", path: path) }
        return fd
    }

    /// A path inside the folder: no empty, `.` or `..` names, not the private folder.
    func validate(_ path: ItemPath) throws(DocumentsError) {
        let names = path.components
        guard !names.isEmpty, path.isValidUTF8,
            names.allSatisfy({ !$0.isEmpty && $0 != [UInt8(ascii: ".")] && $0 != Array("..".utf8) })
        else {
            throw DocumentsError(.invalidPath, "'\(path)' is not a path of a file inside the folder")
        }
        if names[0] == Array(".fileshare".utf8) {
            throw DocumentsError(.invalidPath, "'\(path)' is in the private folder, which holds no documents")
        }
    }

    func leaf(of path: ItemPath) -> String { String(decoding: path.name, as: UTF8.self) }

    func status(of fd: Int32, path: ItemPath) throws(DocumentsError) -> FileStatus {
        do {
            return try FileStatus(descriptor: fd)
        } catch {
            throw DocumentsError.system(error, doing: "inspecting", path: path)
        }
    }

    func check(_ result: Int32, doing what: String, path: ItemPath) throws(DocumentsError) {
        if result < 0 { throw DocumentsError.system(Errno(rawValue: -result), doing: what, path: path) }
    }
}

extension FileStatus {
    var stamp: ContentStamp { ContentStamp(self) }
}
