import FileWatching
import Testing

/// `Change.itemPaths`, which the change log, the origins, the feed, the
/// Inbox and the documents all read instead of each taking a change apart.
@Suite("The paths of a change")
struct ChangePathsTests {
    static let a = ItemPath("A/a.txt")
    static let b = ItemPath("B/b.txt")
    static let id = ItemID(rawValue: 7)
    static let item = ChangedItem(path: a, id: id, kind: .file, size: 3, isWriting: false)

    @Test(
        "an item's path, both ends of a rename or a move, none for what is not about one item",
        arguments: [
            (Change.added(item), [a]),
            (.modified(item), [a]),
            (.duplicated(item, source: b), [a]),
            (.finished(path: a, id: id, size: 3), [a]),
            (.removed(path: a, id: id, kind: .file), [a]),
            (.renamed(from: a, to: b, id: id, kind: .file), [a, b]),
            (.moved(from: a, to: b, id: id, kind: .directory), [a, b]),
            (.rescanned(path: a, reason: "overflow"), []),
            (.degraded(path: a, reason: "polling", hint: "raise the limit"), []),
            (.error(message: "unreadable", path: a), []),
            (.scanStarted(root: "/r"), []),
            (.scanCompleted(root: "/r", items: 1, elapsedMilliseconds: 2), []),
            (.rootRemoved(root: "/r"), []),
        ])
    func itemPaths(change: Change, expected: [ItemPath]) {
        #expect(change.itemPaths == expected)
    }
}
