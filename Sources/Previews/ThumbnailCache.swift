import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// Thumbnails kept in a folder of their own (the server's is
/// `.fileshare/thumbnails/`), named by the item's id and its content's
/// version (modification time and size): a rename keeps the thumbnail, a new
/// version of the file gets a new one. Bounded in size: past
/// ``maximumBytes`` the least recently made go first.
public final class ThumbnailCache: Sendable {
    public let folder: String
    public let maximumBytes: Int64

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

    /// The thumbnail kept under `name`, if any.
    public func thumbnail(named name: String) -> [UInt8]? {
        (try? AtomicFile.read(folder + "/" + name)) ?? nil
    }

    /// Keeps `bytes` under `name` (older versions of the same id are
    /// removed), then trims the cache to its bound. Failures only cost a
    /// thumbnail made again.
    public func keep(_ bytes: [UInt8], named name: String, id: String) {
        for other in names() where other.hasPrefix(id + "-") && other != name {
            unlink(folder + "/" + other)
        }
        try? AtomicFile.write(bytes, to: folder + "/" + name, permissions: 0o600)
        trim()
    }

    /// Removes the least recently made thumbnails until the cache fits its bound.
    public func trim() {
        var entries: [(name: String, size: Int64, time: Int64)] = []
        var total: Int64 = 0
        for name in names() where name.hasSuffix(".png") || name.hasSuffix(".jpg") {
            var info = stat()
            guard stat(folder + "/" + name, &info) == 0 else { continue }
            let size = Int64(info.st_size)
            entries.append((name, size, Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)))
            total += size
        }
        guard total > maximumBytes else { return }
        for entry in entries.sorted(by: { $0.time < $1.time }) where total > maximumBytes {
            if unlink(folder + "/" + entry.name) == 0 { total -= entry.size }
        }
    }

    private func names() -> [String] {
        (try? folderNames(folder)) ?? []
    }
}
