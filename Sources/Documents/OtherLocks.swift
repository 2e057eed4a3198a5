import FileWatching

/// The locks other clients of a server hold on items of the folder (WebDAV
/// locks): which paths they cover. A document under any of them is not
/// editable. Several locks may cover one document (a lock on its folder and
/// one on the file): each counts until it is released.
struct OtherLocks: Sendable, Equatable {
    /// Each lock's root, with whether it covers what is under it; a root
    /// locked twice appears twice.
    private var locks: [ItemPath: [Bool]] = [:]

    /// Records a lock taken (`held`) or released at `root`.
    mutating func change(_ root: ItemPath, coversBelow: Bool, held: Bool) {
        if held {
            locks[root, default: []].append(coversBelow)
        } else if let index = locks[root]?.firstIndex(of: coversBelow) {
            locks[root]?.remove(at: index)
            if locks[root]?.isEmpty == true { locks[root] = nil }
        }
    }

    /// Whether a lock covers `path`: one on it, or a deep one on a folder above it.
    func covers(_ path: ItemPath) -> Bool {
        locks.contains { root, flags in
            root == path || (flags.contains(true) && path.isSame(asOrUnder: root))
        }
    }
}
