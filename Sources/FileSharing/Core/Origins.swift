public import ChangeLog
import FileWatching
import Synchronization

/// The server's operations in flight, by path: the changes the observer
/// reports for those paths (or above or under them) carry their origin.
final class OriginRegistry: Sendable {
    private let entries = Mutex<[UInt64: (paths: [ItemPath], origin: ChangeOrigin)]>([:])
    private let next = Atomic<UInt64>(0)

    /// Registers an operation on `paths`; call `finish` once the observer caught up.
    func begin(_ paths: [ItemPath], _ origin: ChangeOrigin) -> UInt64 {
        let key = next.add(1, ordering: .relaxed).newValue
        entries.withLock { $0[key] = (paths, origin) }
        return key
    }

    func finish(_ key: UInt64) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// The origin of a change, if the server caused it.
    func origin(of change: Change) -> ChangeOrigin? {
        let paths = change.itemPaths
        guard !paths.isEmpty else { return nil }
        return entries.withLock { entries in
            for (_, entry) in entries {
                for path in paths {
                    for target in entry.paths where path.isSame(asOrUnder: target) || target.isSame(asOrUnder: path) {
                        return entry.origin
                    }
                }
            }
            return nil
        }
    }
}
