import Synchronization

/// One item of a ``FolderList``: what a row of a file browser shows.
public struct ListItem: Sendable, Hashable, Identifiable {
    /// The item's identity (stable across renames).
    public var id: ItemID
    /// Its name (text; U+FFFD where the bytes are not UTF-8).
    public var name: String
    /// Its path, relative to the observer's root.
    public var path: ItemPath
    /// What it is.
    public var kind: ItemKind
    /// Its size in bytes.
    public var size: Int64
    /// Birth time, nanoseconds since the epoch (0 where unknown).
    public var creationTime: Int64
    /// Modification time, nanoseconds since the epoch.
    public var modificationTime: Int64
    /// The number of items inside, for folders.
    public var childCount: Int?
    /// Whether the file is still being written.
    public var isWriting: Bool

    init(_ item: Item) {
        id = item.id
        name = item.name
        path = item.path
        kind = item.kind
        size = item.size
        creationTime = item.creationTime
        modificationTime = item.modificationTime
        childCount = item.childCount
        isWriting = item.isWriting
    }
}

/// A new state of a ``FolderList``: its items, and the index changes from the previous state.
public struct ListUpdate: Sendable {
    /// The list now.
    public var items: [ListItem]
    /// How the previous list became this one (see ``ListChanges`` for the order).
    public var changes: ListChanges
}

/// A sorted list of one folder's items that stays current as the observer
/// reports changes, each update with the index changes that turn the old
/// list into the new one, for a table or collection view to animate.
///
/// Lists are cheap: create one per open folder and release it when the
/// folder closes. The list follows its folder when the folder is renamed or
/// moved, and empties when it is removed.
public final class FolderList: Sendable {
    /// How the list is sorted.
    public let sort: ListSort
    private let observer: FileObserver
    private let state: Mutex<State>
    private let token = Mutex<ObservationToken?>(nil)

    struct State {
        var folder: ItemID?
        var folderPath: ItemPath
        var items: [ListItem] = []
        var keys: [ItemID: (name: String, key: NaturalKey)] = [:]
        var subscribers: [UInt64: AsyncStream<ListUpdate>.Continuation] = [:]
        var nextKey: UInt64 = 0
    }

    /// A list of the items in `folder` (the root is ``ItemPath/root``).
    public init(observer: FileObserver, folder: ItemPath, sort: ListSort = .name) {
        self.observer = observer
        self.sort = sort
        self.state = Mutex(State(folder: nil, folderPath: folder))
        state.withLock { state in
            state.folder = observer.folderID(at: folder)
            let items = FolderList.fetch(observer, &state)
            state.items = FolderList.sorted(items, by: sort, keys: &state.keys)
        }
        // In step with the tree, so each update shows exactly its batch's changes.
        let token = observer.observeInStep { [weak self] batch in self?.refresh(after: batch) }
        self.token.withLock { $0 = token }
    }

    deinit {
        token.withLock { $0?.cancel() }
        state.withLock { state in for continuation in state.subscribers.values { continuation.finish() } }
    }

    /// The list now.
    public var items: [ListItem] { state.withLock { $0.items } }

    /// The folder's path now (it follows renames and moves).
    public var folder: ItemPath { state.withLock { $0.folderPath } }

    /// Every later state of the list, with its index changes.
    public func updates(
        bufferingPolicy: AsyncStream<ListUpdate>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<ListUpdate> {
        let (stream, continuation) = AsyncStream<ListUpdate>.makeStream(bufferingPolicy: bufferingPolicy)
        let key = state.withLock { state in
            state.nextKey += 1
            state.subscribers[state.nextKey] = continuation
            return state.nextKey
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Recomputes the list when a batch touched the folder, its items or their children.
    func refresh(after batch: [Change]) {
        let update: (ListUpdate, [AsyncStream<ListUpdate>.Continuation])? = state.withLock { state in
            guard batch.contains(where: { touches($0, folder: state.folderPath) }) else { return nil }
            let items = FolderList.sorted(FolderList.fetch(observer, &state), by: sort, keys: &state.keys)
            let changes = ListChanges.between(state.items, items)
            guard !changes.isEmpty else { return nil }
            state.items = items
            return (ListUpdate(items: items, changes: changes), Array(state.subscribers.values))
        }
        guard let (value, subscribers) = update else { return }
        for subscriber in subscribers { subscriber.yield(value) }
    }

    /// Whether a change can alter the list of `folder`: anything at most two
    /// levels under it (its items, and their child counts), or the folder itself.
    private func touches(_ change: Change, folder: ItemPath) -> Bool {
        func near(_ path: ItemPath) -> Bool {
            if folder.isSame(asOrUnder: path) { return true }  // the folder or an ancestor moved or went
            guard path.isSame(asOrUnder: folder) else { return false }
            return path.components.count - folder.components.count <= 2
        }
        switch change {
        case .added(let item), .modified(let item), .duplicated(let item, _): return near(item.path)
        case .finished(let path, _, _), .removed(let path, _, _): return near(path)
        case .renamed(let from, let to, _, _), .moved(let from, let to, _, _): return near(from) || near(to)
        case .rescanned, .rootRemoved: return true
        default: return false
        }
    }

    /// The folder's items now, following the folder by id (none once it is gone).
    private static func fetch(_ observer: FileObserver, _ state: inout State) -> [ListItem] {
        guard let id = state.folder else { return [] }
        if id != observer.rootID {
            guard let folder = observer.item(id: id), folder.kind == .directory else {
                state.folder = nil
                return []
            }
            state.folderPath = folder.path
        }
        return (observer.children(of: state.folderPath) ?? []).map(ListItem.init)
    }

    /// Sorts items, with keys cached by id.
    static func sorted(_ items: [ListItem], by sort: ListSort, keys: inout [ItemID: (name: String, key: NaturalKey)])
        -> [ListItem]
    {
        var live = Set<ItemID>()
        for item in items {
            live.insert(item.id)
            if keys[item.id]?.name != item.name { keys[item.id] = (item.name, NaturalKey(Array(item.path.name))) }
        }
        if keys.count > live.count * 2 + 64 { keys = keys.filter { live.contains($0.key) } }
        let keyed = items.map { (item: $0, key: keys[$0.id]!.key) }
        func before(_ a: (item: ListItem, key: NaturalKey), _ b: (item: ListItem, key: NaturalKey)) -> Bool {
            switch sort.key {
            case .name: break
            case .creationDate:
                if a.item.creationTime != b.item.creationTime { return a.item.creationTime < b.item.creationTime }
            case .modificationDate:
                if a.item.modificationTime != b.item.modificationTime {
                    return a.item.modificationTime < b.item.modificationTime
                }
            case .size:
                let (sizeA, sizeB) = (
                    a.item.kind == .directory ? 0 : a.item.size, b.item.kind == .directory ? 0 : b.item.size
                )
                if sizeA != sizeB { return sizeA < sizeB }
            }
            if a.key != b.key { return a.key < b.key }
            return a.item.id.rawValue < b.item.id.rawValue
        }
        let ordered = keyed.sorted { sort.ascending ? before($0, $1) : before($1, $0) }
        return ordered.map(\.item)
    }
}

extension FileObserver {
    /// A live, sorted list of the items in `folder`.
    public func list(of folder: ItemPath, sortedBy sort: ListSort = .name) -> FolderList {
        FolderList(observer: self, folder: folder, sort: sort)
    }

    /// The id of the folder at `path` (the root's for the root).
    func folderID(at path: ItemPath) -> ItemID? {
        path.isRoot ? rootID : item(at: path).flatMap { $0.kind == .directory ? $0.id : nil }
    }

    /// How many subscriptions are open (for tests of their release).
    var subscriberCount: Int { state.subscriberCount }

    /// The root's id.
    var rootID: ItemID { state.tree.read { $0.id(of: Tree.rootIndex) } }
}
