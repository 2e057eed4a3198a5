import FileWatching
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The locks kept in the share's private folder, so a restart of the server
/// does not take a lock from a client in the middle of its work (Word holds
/// one for as long as a document is open). Times are kept as wall-clock
/// ends; locks whose end has passed are dropped when read.
extension FileLockStore {
    static func encode(_ locks: [DAVLock], monotonicNow: Int64, wallNow: Int64) -> Data {
        let entries: [[String: Any]] = locks.map { lock in
            var entry: [String: Any] = [
                "token": lock.token, "root": lock.root.description, "deep": lock.isDeep, "exclusive": lock.isExclusive,
                "timeout": lock.timeout, "ends": wallNow + (lock.expires - monotonicNow) / 1_000_000_000,
            ]
            if let owner = lock.owner { entry["owner"] = owner }
            if let user = lock.user { entry["user"] = user }
            return entry
        }
        return (try? JSONSerialization.data(withJSONObject: ["version": 1, "locks": entries], options: [.sortedKeys]))
            ?? Data()
    }

    static func decode(_ data: Data, monotonicNow: Int64, wallNow: Int64) -> [DAVLock] {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            object["version"] as? Int == 1,
            let entries = object["locks"] as? [[String: Any]]
        else { return [] }
        return entries.compactMap { entry in
            guard let token = entry["token"] as? String, let rootText = entry["root"] as? String,
                let root = try? SharePath(plain: rootText), let deep = entry["deep"] as? Bool,
                let exclusive = entry["exclusive"] as? Bool,
                let timeout = (entry["timeout"] as? NSNumber)?.int64Value,
                let ends = (entry["ends"] as? NSNumber)?.int64Value,
                ends > wallNow
            else { return nil }
            return DAVLock(
                token: token, root: root, isDeep: deep, isExclusive: exclusive, owner: entry["owner"] as? String,
                user: entry["user"] as? String, timeout: timeout,
                expires: monotonicNow + (ends - wallNow) * 1_000_000_000)
        }
    }

    /// Seconds since the epoch.
    static func wallNow() -> Int64 { Int64(time(nil)) }

    /// Reads the kept locks (none when the file is missing or damaged).
    static func load(from path: String, monotonicNow: Int64) -> [DAVLock] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return decode(data, monotonicNow: monotonicNow, wallNow: wallNow())
    }

    /// Writes the locks, readable by the server's user only, atomically
    /// (never half written); a failure leaves the kept copy as it was.
    static func save(_ locks: [DAVLock], to path: String, monotonicNow: Int64) {
        let data = encode(locks, monotonicNow: monotonicNow, wallNow: wallNow())
        try? AtomicFile.write(Array(data), to: path, permissions: 0o600)
    }
}
