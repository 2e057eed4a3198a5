import FileWatching
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Thumbnails kept in a folder of their own (the server's is
/// `.fileshare/thumbnails/`), named by the item's id and its content's
/// version (modification time and size): a rename keeps the thumbnail, a new
/// version of the file gets a new one. Bounded in size: past
/// ``maximumBytes`` the least recently made go first.
///
/// The folder is listed once, on the first thumbnail kept; from then on the
/// cache keeps an index of what it holds (name, size, age) and a running
/// total, so keeping a thumbnail costs one write and no listing.
public final class ThumbnailCache: Sendable {
    public let folder: String
    public let maximumBytes: Int64
    private let state = Mutex<Index?>(nil)

    /// What the folder holds, by item id, and its total size.
    struct Index {
        struct Entry {
            var name: String
            var size: Int64
            /// When it was made (nanoseconds): the oldest go first.
            var time: Int64
        }
        var entries: [String: Entry] = [:]
        var total: Int64 = 0
        /// How many times the folder was listed (once, unless tests say otherwise).
        var listings = 0
    }

    /// A cache in `folder` (made if missing).
    public init(folder: String, maximumBytes: Int64 = 256 << 20) {
        self.folder = folder
        self.maximumBytes = maximumBytes
        mkdir(folder, 0o700)
    }

    /// The file name of a thumbnail: id, modification time and size, and
    /// the image format's extension (`png` from programs, `jpg` from image
    /// libraries).
    public static func name(id: String, modified: Int64, size: Int64, format: String = "png") -> String {
        "\(id)-\(modified)-\(size).\(format)"
    }

    /// The item id a thumbnail's file name starts with, if it is one.
    static func id(inName name: String) -> String? {
        guard name.hasSuffix(".png") || name.hasSuffix(".jpg") else { return nil }
        let fields = name.dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 3 else { return nil }
        return fields.dropLast(2).joined(separator: "-")
    }

    /// The thumbnail kept under `name`, if any.
    public func thumbnail(named name: String) -> [UInt8]? {
        (try? AtomicFile.read(folder + "/" + name)) ?? nil
    }

    /// Whether a thumbnail is kept under `name` (a stat, no read).
    public func contains(named name: String) -> Bool {
        var info = stat()
        return stat(folder + "/" + name, &info) == 0
    }

    /// Keeps `bytes` under `name` (an older version of the same id is
    /// removed), then trims the cache to its bound. Failures only cost a
    /// thumbnail made again.
    public func keep(_ bytes: [UInt8], named name: String, id: String) {
        guard (try? AtomicFile.write(bytes, to: folder + "/" + name, permissions: 0o600)) != nil else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let time = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        let removed: [String] = state.withLock { index in
            if index == nil { index = listed() }
            var removed: [String] = []
            if let old = index!.entries[id] {
                index!.total -= old.size
                if old.name != name { removed.append(old.name) }
            }
            index!.entries[id] = Index.Entry(name: name, size: Int64(bytes.count), time: time)
            index!.total += Int64(bytes.count)
            removed += evicted(&index!)
            return removed
        }
        for name in removed { unlink(folder + "/" + name) }
    }

    /// Removes the least recently made thumbnails until the cache fits its bound.
    public func trim() {
        let removed = state.withLock { index in
            if index == nil { index = listed() }
            return evicted(&index!)
        }
        for name in removed { unlink(folder + "/" + name) }
    }

    /// How many times the folder has been listed (for tests: once).
    package var listings: Int { state.withLock { $0?.listings ?? 0 } }

    /// The total size of the thumbnails kept, as the index counts it.
    package var totalBytes: Int64 { state.withLock { $0?.total ?? 0 } }

    /// The names to remove, oldest first, until the index fits the bound.
    private func evicted(_ index: inout Index) -> [String] {
        guard index.total > maximumBytes else { return [] }
        var removed: [String] = []
        for (id, entry) in index.entries.sorted(by: { $0.value.time < $1.value.time }) {
            guard index.total > maximumBytes else { break }
            index.entries[id] = nil
            index.total -= entry.size
            removed.append(entry.name)
        }
        return removed
    }

    /// The index of what the folder holds now. Where one id has several
    /// versions (left by a crash), the older are removed.
    private func listed() -> Index {
        var index = Index()
        index.listings = 1
        for name in (try? folderNames(folder)) ?? [] {
            guard let id = ThumbnailCache.id(inName: name) else { continue }
            var info = stat()
            guard stat(folder + "/" + name, &info) == 0 else { continue }
            let entry = Index.Entry(
                name: name, size: Int64(info.st_size),
                time: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))
            if let other = index.entries[id] {
                let (keep, drop) = other.time >= entry.time ? (other, entry) : (entry, other)
                unlink(folder + "/" + drop.name)
                index.entries[id] = keep
                index.total -= other.size
                index.total += keep.size
            } else {
                index.entries[id] = entry
                index.total += entry.size
            }
        }
        return index
    }
}
