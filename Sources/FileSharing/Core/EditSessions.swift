import FileWatching

/// One editing session of a client (the page's editor, open on one file
/// until its Done): its saves replace the file again and again, and only
/// the content from before the session is worth a version, as an app's
/// autosave keeps versions per session, not per pause in the typing.
struct EditSession: Sendable, Hashable {
    /// The client's token, and who sent it: another requester's saves
    /// with the same token are another session.
    let token: String
    let owner: String

    /// A session for `token` (16 to 64 of `A-Z a-z 0-9 - _`), or `nil` for anything else.
    init?(token: String, owner: String) {
        guard (16...64).contains(token.utf8.count),
            token.utf8.allSatisfy(EditSession.isTokenByte)
        else { return nil }
        self.token = token
        self.owner = owner
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}

/// Which file each editing session last put in place, so that its next
/// save over that same file keeps no version of it (the session's version
/// of what it replaced was kept at its first save).
///
/// Pure: the identities are given to every call. At most ``capacity``
/// items are remembered; past that the oldest mark is forgotten, and its
/// session's next save keeps a version again (the safe side).
struct EditSessions: Sendable {
    /// The file a save put in place: while it is there unchanged (same
    /// inode, size and time), what replaces it is the session's own work.
    struct Placed: Sendable, Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64

        init(_ status: FileStatus) {
            device = status.device
            inode = status.inode
            size = status.size
            modified = status.modified
        }
    }

    private struct Mark: Sendable {
        var session: EditSession
        var placed: Placed
        var order: UInt64
    }

    let capacity: Int
    private var marks: [ItemID: Mark] = [:]
    private var counter: UInt64 = 0

    init(capacity: Int = 1_000) { self.capacity = max(1, capacity) }

    /// Whether the file `replaced` of item `id`, about to be replaced by a
    /// save of `session`, is to be kept as a version: always, unless the
    /// same session put exactly that file there.
    func keepsVersion(of replaced: FileStatus, id: ItemID, session: EditSession?) -> Bool {
        guard let session, let mark = marks[id] else { return true }
        return mark.session != session || mark.placed != Placed(replaced)
    }

    /// Notes that `session` put `placed` in place as item `id` (or, with no
    /// session, that a save of no session did: the next session save keeps a version).
    mutating func placed(_ placed: FileStatus, id: ItemID, session: EditSession?) {
        guard let session else {
            marks[id] = nil
            return
        }
        counter += 1
        marks[id] = Mark(session: session, placed: Placed(placed), order: counter)
        if marks.count > capacity, let oldest = marks.min(by: { $0.value.order < $1.value.order })?.key {
            marks[oldest] = nil
        }
    }

    /// The items remembered.
    var count: Int { marks.count }
}
