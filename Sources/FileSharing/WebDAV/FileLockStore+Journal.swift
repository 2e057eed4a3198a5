import CFileshareShim
import FileWatching
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The locks kept in the share's private folder, so a restart of the server
/// does not take a lock from a client in the middle of its work (Word holds
/// one for as long as a document is open).
///
/// An append-only journal, one JSON object a line: `{"put":{…}}` for a lock
/// taken or refreshed, `{"drop":TOKEN}` for one gone. A change writes its
/// own lines, whatever the number of locks held; the file is rewritten whole
/// (atomically: written beside it, flushed, renamed over it) when it is read
/// at start and once its lines outnumber twice the locks held, so the
/// rewrites cost one line a change on average. A record says what a lock is
/// now, never what to do to it, so a line read twice (a rewrite cut short
/// by a crash) changes nothing.
///
/// Crash safety: a record is one `pwrite`, so a server killed in the middle
/// of one leaves at most that one line torn, at the end, and it is left out
/// when read (the other lines are whole). Records are not flushed to the
/// disk one by one: a power cut may lose the last changes (the lock ends
/// early, as its client learns at its next refresh), never the rewritten
/// file. Times are kept as wall-clock ends; locks whose end has passed are
/// dropped when read.
extension FileLockStore {
    struct Journal {
        let path: String
        /// The file, open for writing; `-1` when it could not be opened.
        private var descriptor: Int32 = -1
        /// Where the next record goes (the end of the last whole one).
        private var end: Int64 = 0
        /// Lines in the file.
        private(set) var records = 0
        /// A record could not be written whole: rewrite the file at the next change.
        private var damaged = false

        /// Lines past which the file is rewritten, whatever the locks held.
        static let minimumRecordsBeforeRewrite = 4096

        init(path: String) { self.path = path }

        /// Reads the locks kept at `path`: none when the file is missing;
        /// `nil` when it exists but cannot be read (then it is left as it is).
        static func load(from path: String, monotonicNow: Int64, wallNow: Int64) -> [DAVLock]? {
            let bytes: [UInt8]?
            do {
                bytes = try AtomicFile.read(path)
            } catch {
                return nil
            }
            guard let bytes else { return [] }
            return decode(bytes, monotonicNow: monotonicNow, wallNow: wallNow)
        }

        /// The locks a journal's bytes hold at its end, those not ended by `wallNow`.
        static func decode(_ bytes: [UInt8], monotonicNow: Int64, wallNow: Int64) -> [DAVLock] {
            var locks: [String: DAVLock] = [:]
            var start = 0
            while let newline = bytes[start...].firstIndex(of: 0x0A) {
                defer { start = newline + 1 }
                // A line that does not read (torn, or not ours) is left out; the others count.
                guard let object = try? JSONSerialization.jsonObject(with: Data(bytes[start..<newline])),
                    let record = object as? [String: Any]
                else { continue }
                if let token = record["drop"] as? String {
                    locks[token] = nil
                } else if let entry = record["put"] as? [String: Any],
                    let lock = lock(entry, monotonicNow: monotonicNow, wallNow: wallNow)
                {
                    locks[lock.token] = lock
                } else if let token = (record["put"] as? [String: Any])?["token"] as? String {
                    locks[token] = nil  // ended
                } else if record["version"] as? Int == 1, let entries = record["locks"] as? [[String: Any]] {
                    // The whole-table file an earlier version wrote, in one line.
                    for entry in entries {
                        if let lock = lock(entry, monotonicNow: monotonicNow, wallNow: wallNow) {
                            locks[lock.token] = lock
                        }
                    }
                }
            }
            // That earlier file has no line feed at its end.
            if start < bytes.count, bytes[start] == UInt8(ascii: "{"),
                let object = try? JSONSerialization.jsonObject(with: Data(bytes[start...])) as? [String: Any],
                object["version"] as? Int == 1, let entries = object["locks"] as? [[String: Any]]
            {
                for entry in entries {
                    if let lock = lock(entry, monotonicNow: monotonicNow, wallNow: wallNow) { locks[lock.token] = lock }
                }
            }
            return Array(locks.values)
        }

        /// A lock from its record's fields; `nil` when they do not read or it has ended.
        private static func lock(_ entry: [String: Any], monotonicNow: Int64, wallNow: Int64) -> DAVLock? {
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

        /// Appends a record of `lock`'s state to `bytes`.
        static func encodePut(_ lock: DAVLock, monotonicNow: Int64, wallNow: Int64, into json: inout JSONBytes) {
            json.raw("{\"put\":{\"token\":")
            json.string(lock.token)
            json.raw(",\"root\":")
            json.string(lock.root.description)
            json.raw(",\"deep\":")
            json.bool(lock.isDeep)
            json.raw(",\"exclusive\":")
            json.bool(lock.isExclusive)
            json.raw(",\"timeout\":")
            json.integer(lock.timeout)
            json.raw(",\"ends\":")
            json.integer(wallNow + (lock.expires - monotonicNow) / 1_000_000_000)
            if let owner = lock.owner {
                json.raw(",\"owner\":")
                json.string(owner)
            }
            if let user = lock.user {
                json.raw(",\"user\":")
                json.string(user)
            }
            json.raw("}}\n")
        }

        /// Appends a record of the lock `token` gone.
        static func encodeDrop(_ token: String, into json: inout JSONBytes) {
            json.raw("{\"drop\":")
            json.string(token)
            json.raw("}\n")
        }

        /// Writes what changed: for each token, its lock now (`locks[token]`)
        /// or that it is gone. Rewrites the file instead when its lines
        /// outnumber twice the locks held (or a record was not written whole).
        mutating func record(_ tokens: Set<String>, locks: [String: DAVLock], monotonicNow: Int64, wallNow: Int64) {
            guard !tokens.isEmpty else { return }
            if damaged || descriptor < 0
                || records + tokens.count > max(Journal.minimumRecordsBeforeRewrite, 2 * locks.count)
            {
                rewrite(Array(locks.values), monotonicNow: monotonicNow, wallNow: wallNow)
                return
            }
            var json = JSONBytes(capacity: 256 * tokens.count)
            for token in tokens {
                if let lock = locks[token] {
                    Journal.encodePut(lock, monotonicNow: monotonicNow, wallNow: wallNow, into: &json)
                } else {
                    Journal.encodeDrop(token, into: &json)
                }
            }
            let written = json.bytes.withUnsafeBytes { cfs_pwrite_all(descriptor, $0.baseAddress, $0.count, end) }
            guard written == json.bytes.count else {
                // Cut back to the last whole record; the next change rewrites the file.
                _ = cfs_ftruncate(descriptor, end)
                damaged = true
                return
            }
            end += Int64(written)
            records += tokens.count
        }

        /// Replaces the file with one record a lock, atomically, and opens it
        /// for the records that follow. A failure leaves the file as it was
        /// (and the next change tries again).
        mutating func rewrite(_ locks: [DAVLock], monotonicNow: Int64, wallNow: Int64) {
            var json = JSONBytes(capacity: 256 * locks.count + 16)
            for lock in locks { Journal.encodePut(lock, monotonicNow: monotonicNow, wallNow: wallNow, into: &json) }
            if descriptor >= 0 {
                close(descriptor)
                descriptor = -1
            }
            do {
                try AtomicFile.write(json.bytes, to: path, permissions: 0o600)
            } catch {
                damaged = true
                return
            }
            descriptor = open(path, O_WRONLY | O_CLOEXEC)
            end = Int64(json.bytes.count)
            records = locks.count
            damaged = descriptor < 0
        }
    }

    /// Seconds since the epoch.
    static func wallNow() -> Int64 { Int64(time(nil)) }
}
