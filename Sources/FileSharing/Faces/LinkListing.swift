import FileWatching
import Hummingbird
import NIOCore

/// The JSON listing of a folder inside a read link (`GET /s/TOKEN/list[/P]`),
/// for the link's page: the page's listing (`/api/list`) with only what a
/// visitor of the link may be told. Paths are inside the link (its item is
/// `""`), so nothing names where the link's folder is in the share; no
/// item id, entity tag or count of a folder's items (a count would include
/// what the link does not show), and only files and folders, no hidden name.
enum LinkListing {
    /// Whether the link shows `item` in its folder: a file or folder, not hidden.
    static func shows(_ item: Item) -> Bool {
        (item.kind == .file || item.kind == .directory) && item.path.nameBytes.first != UInt8(ascii: ".")
    }

    /// The listing of `items` (already filtered by ``shows(_:)`` and the
    /// link's policy) of the folder at `relative` inside the link.
    static func json(relative: SharePath, items: [Item]) -> ByteBuffer {
        var json = JSONBytes(capacity: 64 + items.count * 120)
        json.raw("{\"path\":")
        json.string(relative.description)
        json.raw(",\"access\":\"read\",\"items\":[")
        for (index, item) in items.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"name\":")
            json.string(utf8: item.path.nameBytes)
            json.raw(item.kind == .directory ? ",\"kind\":\"directory\"" : ",\"kind\":\"file\"")
            json.raw(",\"size\":")
            json.integer(item.kind == .directory ? 0 : item.size)
            json.raw(",\"modified\":")
            json.time(nanoseconds: item.modificationTime)
            if item.kind == .file {
                json.raw(",\"writing\":")
                json.bool(item.isWriting)
            }
            json.raw("}")
        }
        json.raw("]}")
        return ByteBuffer(bytes: json.bytes)
    }
}
