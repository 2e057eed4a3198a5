import FileWatching
import NIOPosix

/// The fields of the answers to files (a `GET` or `HEAD`), kept with the
/// bytes of the two commonest, the whole file (200) and not modified
/// (304), so that the next answer to the same unchanged file skips working
/// them out again.
///
/// A file's fields before its length and range
/// (``FileResponses/baseFields(named:download:metadata:)``: the `ETag`,
/// `Last-Modified` and `Content-Type`) are a function of its name and of
/// three numbers of its status, inode, size and modification time, and so
/// are the fields of its whole answer (the length is the size). A head is
/// kept with the name and the three numbers, and given back only for the
/// same name while the status just read has the same numbers: nothing is
/// ever invalidated, and a file changed, replaced or renamed is simply
/// worked out again. Working them out (the validator's digits, the type,
/// the date and the bytes) was about 1.2 µs of a small `GET`'s user time
/// under `perf`, the largest part of the answer that is the same every time;
/// the request's conditions and range are still judged on every request
/// (``FileResponses/plan(request:metadata:base:)``).
///
/// Pure and not thread-safe: ``SmallReads`` keeps one per event loop's
/// thread, so looking one up writes nothing another core reads (a shared
/// table would move its lock and the entries' reference counts between
/// the cores on every answer). At most ``capacity`` files are kept, in two
/// generations as ``DownloadDedup`` keeps its keys: the newer becomes the
/// older when it holds half, and a head found in the older is carried
/// into the newer, so the `capacity / 2` files answered last are always kept.
final class KeptFileHeads {
    /// What is kept of a file's answers, and what it was worked out for.
    final class Head {
        let name: String
        let inode: UInt64
        let size: Int64
        let modified: Int64
        /// The fields of every answer to it, before a length or range; a 304's.
        let base: FileAnswerFields
        /// `base` as ``FileAnswerFields/write(into:)`` writes them.
        let baseBytes: [UInt8]
        /// The fields of the whole file's answer (200), and their bytes.
        let whole: FileAnswerFields
        let wholeBytes: [UInt8]

        init(name: String, status: FileStatus, base: FileAnswerFields) {
            (self.name, inode, size, modified) = (name, status.inode, status.size, status.modified)
            var whole = base
            whole.contentLength = status.size
            (self.base, self.whole) = (base, whole)
            func written(_ fields: FileAnswerFields) -> [UInt8] {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(384)
                fields.write(into: &bytes)
                return bytes
            }
            (baseBytes, wholeBytes) = (written(base), written(whole))
        }

        /// Whether these are the fields of a file named `name` with `status`.
        func holds(for name: String, _ status: FileStatus) -> Bool {
            inode == status.inode && size == status.size && modified == status.modified && self.name == name
        }
    }

    let capacity: Int
    // By inode, not path: a number hashes and compares in a few
    // nanoseconds, where a path's names were half the cost of working the
    // fields out again (`perf`). The name is checked too (it gives the
    // type), so a hard link under another name is not taken for this one.
    private var newer: [UInt64: Head] = [:]
    private var older: [UInt64: Head] = [:]

    /// About 500 bytes an entry: 4,096 files are some 2 MB at most, for each event loop.
    init(capacity: Int = 4096) {
        self.capacity = max(2, capacity)
    }

    /// The head kept for the file `name` with `status`, when it was worked
    /// out for that name and the same inode, size and modification time.
    func head(named name: String, status: FileStatus) -> Head? {
        if let head = newer[status.inode] {
            return head.holds(for: name, status) ? head : nil
        }
        guard let head = older[status.inode], head.holds(for: name, status) else { return nil }
        insert(head)
        return head
    }

    /// Keeps `base`, the base fields of the file `name` with `status`, and
    /// returns what it keeps.
    @discardableResult
    func keep(_ base: FileAnswerFields, named name: String, status: FileStatus) -> Head {
        let head = Head(name: name, status: status, base: base)
        insert(head)
        return head
    }

    /// The files kept (one carried from the older generation counts twice).
    var count: Int { newer.count + older.count }

    private func insert(_ head: Head) {
        newer[head.inode] = head
        if newer.count >= capacity / 2 {
            older = newer
            newer = [:]
        }
    }
}

extension KeptFileHeads {
    /// A ``KeptFileHeads`` for each thread that asks, each reached only by
    /// the thread it was made for (so it is never shared, though this is).
    final class PerThread: @unchecked Sendable {
        private let variable = ThreadSpecificVariable<KeptFileHeads>()

        /// The calling thread's, made at its first call.
        var current: KeptFileHeads {
            if let heads = variable.currentValue { return heads }
            let heads = KeptFileHeads()
            variable.currentValue = heads
            return heads
        }
    }
}
