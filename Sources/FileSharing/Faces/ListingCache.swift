import Accounts
import NIOCore
import Synchronization

/// The JSON of large folders' listings, kept while the observer's tree is
/// unchanged: a listing is made from the tree alone (it asks the disk
/// nothing per item), so the same tree, folder and rights give the same
/// bytes, and fifty clients refreshing a 10,000-item folder share one
/// answer instead of making fifty (each ~15 ms of CPU).
///
/// Any change of the tree, anywhere, makes every kept listing stale
/// (``FileObserver/treeVersion``); a busy tree simply makes new ones. Only
/// listings of at least ``minimumBytes`` are kept (smaller ones cost less
/// to make than to keep), at most ``capacity`` of them and ``maximumBytes``
/// in all, the least recently used dropped first.
final class ListingCache: Sendable {
    struct Key: Equatable, Sendable {
        var path: SharePath
        /// The rights the listing was made for (a user's rules change what it shows).
        var policy: AccessPolicy
    }

    private struct Entry {
        var key: Key
        var version: UInt64
        var body: ByteBuffer
    }

    static let minimumBytes = 64 * 1024
    /// All kept listings together (a 10,000-item listing is about 2 MiB).
    static let maximumBytes = 32 * 1024 * 1024
    let capacity: Int
    /// Newest use last.
    private let entries = Mutex<[Entry]>([])

    init(capacity: Int = 8) { self.capacity = capacity }

    /// The listing kept for `key` at tree version `version`, if any.
    func body(for key: Key, version: UInt64) -> ByteBuffer? {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            guard entries[index].version == version else {
                entries.remove(at: index)
                return nil
            }
            let entry = entries.remove(at: index)
            entries.append(entry)
            return entry.body
        }
    }

    /// Keeps a listing made at tree version `version` (read before the tree was).
    func keep(_ body: ByteBuffer, for key: Key, version: UInt64) {
        guard body.readableBytes >= Self.minimumBytes, body.readableBytes <= Self.maximumBytes / 2 else { return }
        entries.withLock { entries in
            entries.removeAll { $0.key == key }
            var bytes = entries.reduce(body.readableBytes) { $0 + $1.body.readableBytes }
            while !entries.isEmpty && (entries.count >= capacity || bytes > Self.maximumBytes) {
                bytes -= entries.removeFirst().body.readableBytes
            }
            entries.append(Entry(key: key, version: version, body: body))
        }
    }
}
