import CFileshareShim
public import ChangeLog
public import FileWatching
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The kept versions of files, by item id, in a folder of their own (the
/// server's is `.fileshare/versions/`, on the shared folder's file system).
///
/// Each version is a folder `ID/VERSION/` holding the content (`content`:
/// a file, or for a package document's version the whole tree as a folder)
/// and a record (`meta.json`). It is made under a temporary name
/// (``StoreName/temporaryPrefix``), complete and flushed, and renamed into
/// place in one step: a version is whole or absent, and what a crash left
/// half-made is dropped when the store opens.
///
/// Keeping the content of a file about to be replaced by a rename costs no
/// copy: the file's inode is linked in (``keep(_:in:id:path:origin:conflict:now:)``),
/// so the old bytes stay where they are on disk. Where a link cannot be made
/// (the file is on another file system), and for content that is not
/// being replaced (``keepCopy(of:id:path:origin:conflict:now:)``), it is
/// copied, sharing extents where the file system can (reflink).
///
/// The ``VersionRetention`` is applied after each keep. Every method makes
/// blocking system calls: callers run them off the event loops.
public final class VersionStore: Sendable {
    /// The store's folder.
    public let path: String
    /// What is kept, and for how long (changed by ``setRetention(_:)``).
    public var retention: VersionRetention { policy.withLock { $0 } }
    private let policy: Mutex<VersionRetention>
    private let folder: StoreFolder
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    /// Every version, by item: read from the disk when the store opens, kept up to date since.
    private let index = Mutex<[ItemID: [VersionRecord]]>([:])

    static let contentName = "content"
    static let recordName = "meta.json"

    /// Opens the store at `path` (made when missing), dropping what a crash left half-made.
    /// - Parameter clock: Wall-clock time in nanoseconds since the epoch.
    public init(
        path: String, retention: VersionRetention = VersionRetention(), logger: Logger,
        clock: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
    ) throws(VersionError) {
        self.path = path
        policy = Mutex(retention)
        self.logger = logger
        self.clock = clock
        folder = try StoreFolder.open(creating: path)
        let found = try recover()
        index.withLock { $0 = found }
    }

    // MARK: Reading

    /// The versions of an item, newest first.
    public func versions(of id: ItemID) -> [VersionRecord] {
        index.withLock { $0[id] ?? [] }.sorted(by: VersionRecord.newestFirst)
    }

    /// Every version of every item.
    public var allVersions: [VersionRecord] { index.withLock { $0.values.flatMap { $0 } } }

    /// The bytes all versions take (their sizes: a linked version shares
    /// nothing, a reflinked one may share extents the sum counts twice).
    public var totalBytes: Int64 { allVersions.reduce(0) { $0 + $1.size } }

    /// One version.
    /// - Throws: ``VersionError/Code/invalidName`` for a name that cannot be
    ///   one, ``VersionError/Code/notFound`` for no such version.
    public func version(_ version: String, of id: ItemID) throws(VersionError) -> VersionRecord {
        guard StoreName.isValid(version) else {
            throw VersionError(.invalidName, "'\(version)' is not a version name")
        }
        guard let record = index.withLock({ $0[id]?.first { $0.version == version } }) else {
            throw VersionError(.notFound, "no version \(version) of item \(id)")
        }
        return record
    }

    /// Opens a version's content for reading (a folder's, for a folder
    /// version: see ``VersionRecord/kind``); the caller closes the descriptor.
    public func openContent(_ version: String, of id: ItemID) throws(VersionError) -> Int32 {
        let record = try self.version(version, of: id)
        let entry = try folder.folder(id.description).folder(record.version)
        return try entry.openFile(VersionStore.contentName)
    }

    // MARK: Keeping

    /// Keeps the file `name` of the open folder `directory` as a version of
    /// `id`, by linking its inode in (copied where it cannot be linked):
    /// call it right before the file is replaced by a rename, so the old
    /// content lives on only here. The retention policy is applied after.
    /// - Parameters:
    ///   - path: Where the item is, relative to the shared folder (for the record).
    ///   - origin: Who is replacing it.
    ///   - conflict: Whether the version is a conflict version.
    ///   - now: The time kept (the clock's, unless given).
    /// - Returns: The version kept.
    @discardableResult
    public func keep(
        _ name: String, in directory: Int32, id: ItemID, path: String, origin: ChangeOrigin?, conflict: Bool = false,
        now: Int64? = nil
    ) throws(VersionError) -> VersionRecord {
        try make(id: id, path: path, origin: origin, conflict: conflict, now: now) { entry throws(VersionError) in
            if try StoreFolder.status(name, in: directory, path: "")?.kind == .directory {
                // A folder (a package document's tree), about to be gone from
                // where it is: moved in whole, no byte copied; copied file by
                // file (reflink where the file system can) from another file system.
                do throws(VersionError) {
                    try entry.take(name, from: directory, as: VersionStore.contentName)
                } catch  where error.systemError == Errno(rawValue: EXDEV) {
                    let source = try StoreFolder.run("open '\(name)'") {
                        openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    }
                    defer { close(source) }
                    try entry.copyTree(from: source, as: VersionStore.contentName)
                }
                return
            }
            if try entry.link(name, in: directory, as: VersionStore.contentName) { return }
            let source = try StoreFolder.run("open '\(name)'") {
                openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            }
            defer { close(source) }
            try entry.copy(from: source, as: VersionStore.contentName)
        }
    }

    /// Keeps a copy of the open file `source` as a version of `id`, sharing
    /// extents where the file system can (reflink) and copying otherwise:
    /// for content that stays where it is.
    @discardableResult
    public func keepCopy(
        of source: Int32, id: ItemID, path: String, origin: ChangeOrigin?, conflict: Bool = false, now: Int64? = nil
    ) throws(VersionError) -> VersionRecord {
        try make(id: id, path: path, origin: origin, conflict: conflict, now: now) { entry throws(VersionError) in
            if (try? FileStatus(descriptor: source))?.kind == .directory {
                try entry.copyTree(from: source, as: VersionStore.contentName)
            } else {
                try entry.copy(from: source, as: VersionStore.contentName)
            }
        }
    }

    /// Copies a folder version's tree into the open, empty folder `out`
    /// (file by file, sharing extents where the file system can), every
    /// file and folder flushed: what a restore of a package puts in place.
    /// - Throws: ``VersionError/Code/notFound`` for no such version, or one that is a file.
    public func copyTree(_ version: String, of id: ItemID, into out: Int32) throws(VersionError) {
        let record = try self.version(version, of: id)
        guard record.kind == .directory else {
            throw VersionError(.notFound, "version \(version) of \(id) is a file, not a folder")
        }
        let source = try openContent(version, of: id)
        defer { close(source) }
        try StoreFolder.copyTree(from: source, into: out, path: "version \(version) of \(id)")
    }

    /// Copies a version's content into the open, empty file `out` (sharing
    /// extents where the file system can), flushed: what a restore puts in place.
    public func copyContent(_ version: String, of id: ItemID, to out: Int32) throws(VersionError) {
        let source = try openContent(version, of: id)
        defer { close(source) }
        try StoreFolder.check(cfs_copy_file(source, out), "copy version \(version) of \(id)")
        try StoreFolder.check(cfs_fsync(out), "flush the copy of version \(version) of \(id)")
    }

    /// Removes one version (a kept one the keep's change did not need, or one a person discards).
    public func remove(_ version: String, of id: ItemID) throws(VersionError) {
        let record = try self.version(version, of: id)
        try delete([record])
    }

    /// Ends a conflict: the conflict versions in `keep` become ordinary
    /// versions, the item's other conflict versions are discarded.
    /// - Throws: ``VersionError/Code/notFound`` (changing nothing) when one
    ///   of `keep` is not a version of the item.
    /// - Returns: The item's versions after.
    @discardableResult
    public func resolve(_ id: ItemID, keep: [String]) throws(VersionError) -> [VersionRecord] {
        let records = versions(of: id)
        for name in keep where !records.contains(where: { $0.version == name }) {
            _ = try version(name, of: id)
        }
        let entries = try folder.folder(id.description)
        var discarded: [VersionRecord] = []
        for record in records where record.conflict {
            if keep.contains(record.version) {
                var ordinary = record
                ordinary.conflict = false
                try entries.folder(record.version).replace(VersionStore.recordName, RecordCodec.encode(ordinary))
                update(ordinary)
            } else {
                discarded.append(record)
            }
        }
        try delete(discarded)
        return versions(of: id)
    }

    /// Gives the versions of `old` to `new`: for an item that came back
    /// under another id (a restore from the trash the observer could not
    /// pair with the id it had). Each version moves in one rename; a crash
    /// between two leaves some under each id, every one whole.
    public func moveVersions(of old: ItemID, to new: ItemID) throws(VersionError) {
        let records = versions(of: old)
        guard old != new, !records.isEmpty else { return }
        let source = try folder.folder(old.description)
        try folder.makeFolder(new.description, existing: true)
        let target = try folder.folder(new.description)
        for record in records {
            var moved = record
            moved.id = new
            var time = StoreName.time(of: record.version) ?? record.saved
            while true {
                moved.version = StoreName.make(nanoseconds: time)
                do {
                    try source.rename(record.version, to: target, as: moved.version)
                    break
                } catch  where error.systemError == .exists || error.systemError == Errno(rawValue: ENOTEMPTY) {
                    time += 1
                }
            }
            index.withLock { index in
                index[old]?.removeAll { $0.version == record.version }
                if index[old]?.isEmpty == true { index[old] = nil }
                index[new, default: []].append(moved)
            }
        }
        try? target.sync()
        _ = cfs_unlinkat(folder.descriptor, old.description, Int32(CFS_AT_REMOVEDIR))
    }

    /// Applies `retention` from now on (the next ``trim(protecting:)`` removes what it no longer keeps).
    public func setRetention(_ retention: VersionRetention) {
        policy.withLock { $0 = retention }
    }

    /// Applies the retention policy now (it is after each keep).
    public func trim(protecting protected: VersionRecord? = nil) {
        let expired = retention.expired(
            allVersions, now: clock(), protected: protected.map { ($0.id, $0.version) })
        do {
            try delete(expired)
        } catch {
            logger.warning("an expired version was not removed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Making and removing

    /// Makes a version: a temporary folder filled by `fill` (the content),
    /// the record written and flushed, then renamed into place.
    private func make(
        id: ItemID, path: String, origin: ChangeOrigin?, conflict: Bool, now: Int64?,
        fill: (StoreFolder) throws(VersionError) -> Void
    ) throws(VersionError) -> VersionRecord {
        let saved = now ?? clock()
        let temporary = StoreName.temporaryPrefix + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try folder.makeFolder(temporary)
        var placed = false
        defer { if !placed { try? folder.removeTree(temporary) } }
        let entry = try folder.folder(temporary)
        try fill(entry)
        // A version is seldom read soon: its pages make room for live files.
        // Measured (Benchmarks/versions-run), keeping a 100 MiB file's pages
        // made the next save's write ten times slower.
        entry.dropCachedPages(of: VersionStore.contentName)
        guard let content = try entry.status(VersionStore.contentName) else {
            throw VersionError(.io, "the content of a version of \(id) vanished while it was kept")
        }
        let isFolder = content.kind == .directory
        var record = VersionRecord(
            version: "", id: id, path: path,
            size: isFolder ? StoreFolder.treeSize(VersionStore.contentName, in: entry.descriptor) : content.size,
            modified: content.modified, saved: saved, origin: origin, conflict: conflict,
            kind: isFolder ? .directory : .file)
        try entry.write(VersionStore.recordName, RecordCodec.encode(record))
        try entry.sync()
        try folder.makeFolder(id.description, existing: true)
        let item = try folder.folder(id.description)
        // Two versions kept in one nanosecond: the next free name.
        var time = saved
        while true {
            record.version = StoreName.make(nanoseconds: time)
            do {
                try folder.rename(temporary, to: item, as: record.version)
                break
            } catch  where error.systemError == .exists || error.systemError == Errno(rawValue: ENOTEMPTY) {
                time += 1
            }
        }
        placed = true
        try? item.sync()
        index.withLock { $0[id, default: []].append(record) }
        trim(protecting: record)
        return record
    }

    private func update(_ record: VersionRecord) {
        index.withLock { index in
            guard let position = index[record.id]?.firstIndex(where: { $0.version == record.version }) else { return }
            index[record.id]![position] = record
        }
    }

    private func delete(_ records: [VersionRecord]) throws(VersionError) {
        for record in records {
            let item = try folder.folder(record.id.description)
            try item.removeTree(record.version)
            let empty = index.withLock { index -> Bool in
                index[record.id]?.removeAll { $0.version == record.version }
                guard index[record.id]?.isEmpty ?? true else { return false }
                index[record.id] = nil
                return true
            }
            // An item with no versions left leaves no folder behind (one kept meanwhile makes it again).
            if empty { _ = cfs_unlinkat(folder.descriptor, record.id.description, Int32(CFS_AT_REMOVEDIR)) }
        }
    }

    // MARK: Recovery

    /// Reads every version; drops what is half-made (a temporary folder, a
    /// version without its record or content). Names that are not the
    /// store's are left alone.
    private func recover() throws(VersionError) -> [ItemID: [VersionRecord]] {
        var found: [ItemID: [VersionRecord]] = [:]
        for name in try folder.names() {
            if name.hasPrefix(StoreName.temporaryPrefix) {
                logger.notice("dropping a half-made version", metadata: ["name": "\(name)"])
                try folder.removeTree(name)
                continue
            }
            guard let id = ItemID(name) else { continue }
            let item = try folder.folder(name)
            for version in try item.names() {
                if version.hasPrefix(StoreName.temporaryPrefix) {
                    try item.removeTree(version)
                    continue
                }
                guard StoreName.isValid(version) else { continue }
                let entry = try item.folder(version)
                guard let kind = (try? entry.status(VersionStore.contentName))??.kind,
                    kind == .file || kind == .directory,
                    let bytes = try? entry.read(VersionStore.recordName),
                    let record = try? RecordCodec.version(bytes, version: version, id: id)
                else {
                    logger.notice(
                        "dropping a half-made version", metadata: ["item": "\(name)", "version": "\(version)"])
                    try item.removeTree(version)
                    continue
                }
                found[id, default: []].append(record)
            }
            if found[id] == nil { _ = cfs_unlinkat(folder.descriptor, name, Int32(CFS_AT_REMOVEDIR)) }
        }
        return found
    }
}
