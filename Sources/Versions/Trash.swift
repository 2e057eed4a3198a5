import CFileshareShim
public import ChangeLog
public import FileWatching
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Deleted files and folders, in a folder of their own (the server's is
/// `.fileshare/trash/`, on the shared folder's file system): a delete is a
/// rename into it, never a copy, so it costs no time and no space.
///
/// Each entry is a folder `TRASHID/` holding the record (`meta.json`) and
/// the item itself (`item`: a file, or a folder with everything in it). The
/// record is written and flushed first, under a temporary name, and the
/// entry renamed into place; then the item is renamed in. An entry without
/// its item is half-made (a crash came between) and dropped when the trash
/// opens; the item itself is never in a half-made entry.
///
/// The ``TrashRetention`` is applied after each delete. Every method makes
/// blocking system calls: callers run them off the event loops.
public final class Trash: Sendable {
    /// The trash's folder.
    public let path: String
    /// How long items stay (changed by ``setRetention(_:)``).
    public var retention: TrashRetention { policy.withLock { $0 } }
    private let policy: Mutex<TrashRetention>
    private let folder: StoreFolder
    private let clock: @Sendable () -> Int64
    private let logger: Logger
    private let index = Mutex<[String: TrashRecord]>([:])

    static let itemName = "item"
    static let recordName = "meta.json"

    /// Opens the trash at `path` (made when missing), dropping what a crash left half-made.
    /// - Parameter clock: Wall-clock time in nanoseconds since the epoch.
    public init(
        path: String, retention: TrashRetention = TrashRetention(), logger: Logger,
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

    /// The items in the trash, the most recently deleted first.
    public var items: [TrashRecord] {
        index.withLock { Array($0.values) }.sorted {
            $0.deleted != $1.deleted ? $0.deleted > $1.deleted : $0.trashId > $1.trashId
        }
    }

    /// One item.
    /// - Throws: ``VersionError/Code/invalidName`` for an id that cannot be
    ///   one, ``VersionError/Code/notFound`` for no such item.
    public func item(_ trashId: String) throws(VersionError) -> TrashRecord {
        guard StoreName.isValid(trashId) else { throw VersionError(.invalidName, "'\(trashId)' is not a trash id") }
        guard let record = index.withLock({ $0[trashId] }) else {
            throw VersionError(.notFound, "nothing in the trash is \(trashId)")
        }
        return record
    }

    /// Moves the item `name` of the open folder `directory` into the trash,
    /// in one rename; the retention policy is applied after.
    /// - Parameters:
    ///   - path: Where the item is, relative to the shared folder (where a restore puts it back).
    ///   - id: The item's id, if known.
    ///   - by: Who deletes it.
    /// - Throws: ``VersionError/Code/crossDevice`` when the item is on
    ///   another file system (nothing changed: it would have to be copied).
    @discardableResult
    public func put(
        _ name: String, in directory: Int32, path: String, id: ItemID?, by: ChangeOrigin?, now: Int64? = nil
    ) throws(VersionError) -> TrashRecord {
        guard let status = try StoreFolder.status(name, in: directory, path: path) else {
            throw VersionError(.notFound, "'\(path)' does not exist")
        }
        let deleted = now ?? clock()
        var record = TrashRecord(
            trashId: "", path: path, id: id, kind: status.kind, size: StoreFolder.treeSize(name, in: directory),
            deleted: deleted, by: by)
        let temporary = StoreName.temporaryPrefix + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try folder.makeFolder(temporary)
        var placed = false
        defer { if !placed { try? folder.removeTree(temporary) } }
        let staging = try folder.folder(temporary)
        try staging.write(Trash.recordName, RecordCodec.encode(record))
        try staging.sync()
        var time = deleted
        while true {
            record.trashId = StoreName.make(nanoseconds: time)
            do {
                try folder.rename(temporary, to: folder, as: record.trashId)
                break
            } catch  where error.systemError == .exists || error.systemError == Errno(rawValue: ENOTEMPTY) {
                time += 1
            }
        }
        placed = true
        do {
            try staging.take(name, from: directory, as: Trash.itemName)
        } catch {
            // Only the record is in the entry: nothing of the item is lost by removing it.
            try? folder.removeTree(record.trashId)
            throw error
        }
        try? staging.sync()
        try? folder.sync()
        let kept = record
        index.withLock { $0[kept.trashId] = kept }
        trim(protecting: record.trashId)
        return record
    }

    /// Puts an item back: `place` is given the entry's open folder and the
    /// item's name in it, and renames the item out (where to is the
    /// caller's choice: the original path, or a clash-free name). Once it
    /// returns, the entry is removed.
    /// - Returns: The record, and what `place` returned.
    public func restore<T>(_ trashId: String, place: (_ entry: Int32, _ name: String) throws -> T) throws -> (
        TrashRecord, T
    ) {
        let record = try item(trashId)
        let entry = try folder.folder(trashId)
        let result = try place(entry.descriptor, Trash.itemName)
        index.withLock { _ = $0.removeValue(forKey: trashId) }
        // The record alone is left: removing it can no longer lose anything.
        try? folder.removeTree(trashId)
        return (record, result)
    }

    /// Removes an item for good.
    public func purge(_ trashId: String) throws(VersionError) {
        _ = try item(trashId)
        try folder.removeTree(trashId)
        index.withLock { _ = $0.removeValue(forKey: trashId) }
    }

    /// Applies `retention` from now on (the next ``trim(protecting:)`` removes what it no longer keeps).
    public func setRetention(_ retention: TrashRetention) {
        policy.withLock { $0 = retention }
    }

    /// Applies the retention policy now (it is after each delete).
    public func trim(protecting protected: String? = nil) {
        for record in retention.expired(items, now: clock(), protected: protected) {
            do {
                try purge(record.trashId)
            } catch {
                logger.warning("an expired trash item was not removed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Reads every entry; drops what is half-made (a temporary folder, an
    /// entry without its item). An item whose record is damaged is kept,
    /// under a record made from what the disk says.
    private func recover() throws(VersionError) -> [String: TrashRecord] {
        var found: [String: TrashRecord] = [:]
        for name in try folder.names() {
            if name.hasPrefix(StoreName.temporaryPrefix) {
                logger.notice("dropping a half-made trash entry", metadata: ["name": "\(name)"])
                try folder.removeTree(name)
                continue
            }
            guard let time = StoreName.time(of: name) else { continue }
            let entry = try folder.folder(name)
            guard let item = try entry.status(Trash.itemName) else {
                logger.notice("dropping a half-made trash entry", metadata: ["name": "\(name)"])
                try folder.removeTree(name)
                continue
            }
            if let bytes = try? entry.read(Trash.recordName), let record = try? RecordCodec.trash(bytes, trashId: name)
            {
                found[name] = record
            } else {
                found[name] = TrashRecord(
                    trashId: name, path: "trash-" + name, id: nil, kind: item.kind,
                    size: StoreFolder.treeSize(Trash.itemName, in: entry.descriptor), deleted: time, by: nil)
            }
        }
        return found
    }
}
