/// A moment, as the observer's logic sees it: monotonic time for deadlines,
/// wall-clock time to compare with file times. Injected, so tests drive time.
struct Timestamp: Sendable {
    var monotonic: Int64
    var wall: Int64

    static func now() -> Timestamp { Timestamp(monotonic: monotonicNanoseconds(), wall: wallNanoseconds()) }
}

/// The observer's logic, with no system calls of its own: kernel-like events
/// and clock ticks in, changes out. Every file-system access goes through
/// `FileSystemAccess`, so the same code runs against the real disk and
/// against an in-memory file system in tests.
///
/// Every handler consults the disk and the tree and moves the tree towards
/// the disk, so an event that arrives twice, late, or after a rescan does no
/// harm: the replay of the changes it emits always matches the disk.
struct ObserverCore<FileSystem: FileSystemAccess> {
    let fileSystem: FileSystem
    let options: ObserverOptions
    let filter: NameFilter
    /// Whether the platform adds kernel watches (false when the whole tree is polled).
    let usesWatches: Bool
    /// The tree, shared with the observer's readers (see ``TreeStore``).
    let treeStore: TreeStore
    var tree: Tree {
        _read { yield treeStore.tree }
        nonmutating _modify { yield &treeStore.tree }
    }
    var writes: WriteTracker
    /// Watch descriptor to directory, and back.
    var watchedDirectories: [Int32: Tree.Index] = [:]
    var watchOfDirectory: [Tree.Index: Int32] = [:]
    /// Roots of subtrees that are polled because they cannot be watched.
    var polledRoots: Set<Tree.Index> = []
    var nextPoll: Int64 = .max
    /// Items of the scan whose identity attribute names an id another item
    /// holds, and whether that holder came from the saved state (was not
    /// given its id by this scan).
    var attributeConflicts: [(path: ItemPath, id: ItemID, holderRestored: Bool)] = []
    /// The ids this scan gave to items it found (cleared when it ends): an
    /// item holding an id not among them came from the saved state.
    var idsGivenByScan: Set<ItemID> = []
    /// Files by size, for finding copies (with `detectsDuplicateContent`);
    /// entries can be stale and are checked on use.
    var filesBySize: [Int64: [Tree.Index]] = [:]
    var filesBySizeCount = 0
    /// Folders whose events found them elsewhere on disk than the tree says.
    var displaced: Set<Tree.Index> = []
    /// Names a rename of the current read put an item at while the disk
    /// showed another item there (see `settleMovedOnto()`).
    var movedOnto: [(directory: Tree.Index, name: [UInt8])] = []
    /// How many reads in a row left ``movedOnto`` or ``displaced`` for a
    /// later read, as more events were queued (see `handle(_:at:held:moreQueued:)`).
    var unsettledReads = 0
    /// Whether events were queued behind the read being handled when it began.
    var laterEventsQueued = false
    /// The renames away of the current read to a name it does not give (a
    /// folder not watched yet, or outside), by the folder's watch, the name
    /// and the position in the read (the held ones after it).
    var departures: [(watch: Int32, name: [UInt8], position: Int)] = []
    /// The position in the current read of the event being handled.
    var readPosition = 0
    /// Items the current read renames away, from here on, to a name it
    /// does not give: where they land, an arrival found by identity is one
    /// of them (see `movedIn(_:at:into:)`). Each is the item the tree has
    /// at the departure's name now, so an item renamed there earlier in the
    /// read (into a folder, and on from it to one not watched yet) is one.
    var departing: [Tree.Index] {
        departures.compactMap { departure in
            guard departure.position >= readPosition, let directory = watchedDirectories[departure.watch],
                tree.isLive(directory)
            else { return nil }
            return tree.child(of: directory, named: departure.name)
        }
    }
    /// Items a rescan set aside to free their names and did not find again
    /// (a poll lists a tree that is changing: the item was moved where the
    /// pass had looked already), by identity: a later rescan that finds one
    /// gives it back its id, which its identity does not always give (a
    /// document kept through saves), as rule 5 of events.md says. Bounded;
    /// the oldest half goes when full.
    var setAsideEarlier: [FileIdentity: (id: ItemID, order: Int)] = [:]
    var setAsideCount = 0
    static var setAsideEarlierLimit: Int { 4_096 }
    /// Ids no new item takes from its identity attribute: those of the
    /// items a rescan set aside to free their names, which come back under
    /// them (a copy made with `cp -a` carries its source's id in its
    /// attribute, and is found before its source comes back).
    var reservedIDs: Set<ItemID> = []
    /// Changes waiting for the end of the latency window.
    private(set) var pending: [Change] = []
    private var pendingSince: Int64?
    var isRootRemoved = false
    var isScanned = false
    var now = Timestamp(monotonic: 0, wall: 0)
    let rootDescription: String
    /// How the initial scan starts: fresh, from a saved state, or from an empty view.
    var start = Start.fresh
    /// Files being written when the state was saved, to watch again.
    var restoredWriting: [Tree.Index] = []
    /// Why the whole tree is polled although kernel events were asked for
    /// (no inotify instance to be had), reported when the scan starts.
    var rootDegradation: (reason: String, hint: String)?
    /// Told the number of items found so far, now and then during the initial scan.
    var scanProgress: (@Sendable (Int) -> Void)?

    init(
        fileSystem: FileSystem, root: FileMetadata, rootDescription: String, options: ObserverOptions, usesWatches: Bool
    ) {
        self.fileSystem = fileSystem
        self.options = options
        self.filter = NameFilter(includesHidden: options.includesHidden, excluded: options.excludedNames)
        self.usesWatches = usesWatches
        self.rootDescription = rootDescription
        self.treeStore = TreeStore(Tree(root: root, id: ItemID.derived(from: root.identity, discriminator: 0)))
        self.writes = WriteTracker(settle: options.settleTime.nanoseconds)
    }

    // MARK: Output

    mutating func emit(_ change: Change) {
        if pendingSince == nil { pendingSince = now.monotonic }
        pending.append(change)
    }

    /// Rewrites the ids of changes not delivered yet.
    /// Gives the item with id `given` the id `id`, which no item has
    /// (the consumer knew the item by it; see ``FileObserver/adoptID(_:for:)``).
    /// Returns whether it did.
    mutating func adoptID(_ id: ItemID, for given: ItemID) -> Bool {
        guard tree.index(of: id) == nil, let index = tree.index(of: given), index != Tree.rootIndex else {
            return false
        }
        tree.setID(index, to: id)
        replaceIDsInPending([given: id])
        keepIdentityAttribute(of: index)
        return true
    }

    mutating func replaceIDsInPending(_ replacements: [ItemID: ItemID]) {
        pending = pending.map { $0.replacingIDs(replacements) }
    }

    /// The changes to deliver now: when the latency window has passed, or
    /// when `force` asks for everything (a `sync()` barrier, the end of the scan).
    mutating func takeBatch(force: Bool = false) -> [Change] {
        guard let since = pendingSince else { return [] }
        guard force || now.monotonic - since >= options.latency.nanoseconds else { return [] }
        let batch = ChangeCoalescer.coalesce(pending)
        pending.removeAll(keepingCapacity: true)
        pendingSince = nil
        return batch
    }

    /// When the core next needs to run without an event: the end of the
    /// latency window, a settle check, a poll.
    var nextDeadline: Int64? {
        var deadline = Int64.max
        if let since = pendingSince { deadline = min(deadline, since + options.latency.nanoseconds) }
        if let settle = writes.nextDeadline { deadline = min(deadline, settle) }
        if !polledRoots.isEmpty { deadline = min(deadline, nextPoll) }
        return deadline == .max ? nil : deadline
    }

    // MARK: Identity

    /// The id of a new item at `path`: the one in its identity attribute
    /// when that option is on and no other item has it, or else one derived
    /// from its identity, with a discriminator that keeps hard links (one
    /// inode, several paths) apart.
    mutating func newID(for metadata: FileMetadata, at path: ItemPath) -> ItemID {
        guard options.storesIdentityAttribute else { return Self.derivedID(for: metadata, in: tree) }
        let stored = fileSystem.identityAttribute(at: path)
        if let stored, tree.index(of: stored) == nil, !reservedIDs.contains(stored) {
            if !isScanned { idsGivenByScan.insert(stored) }
            return stored
        }
        let id = Self.derivedID(for: metadata, in: tree)
        if !isScanned { idsGivenByScan.insert(id) }
        if stored == nil {
            // Only if still none: a copy tool (`cp -a`) that wrote its
            // source's id since it was read must not lose it to ours, or the
            // copy would be reported added, not duplicated.
            _ = fileSystem.createIdentityAttribute(id, at: path)
        } else if !isScanned {
            // Two items claim one id: settled when the scan ends.
            attributeConflicts.append((path, stored!, holderRestored: !idsGivenByScan.contains(stored!)))
        }
        // Otherwise a copy of a live item's (`cp -a`): reported as its
        // duplicate once complete, and given its own id then.
        return id
    }

    /// The id derived from an item's identity, with the first discriminator
    /// no item of `tree` has (hard links, one identity at several paths).
    static func derivedID(for metadata: FileMetadata, in tree: Tree) -> ItemID {
        var discriminator: UInt64 = 0
        while true {
            let id = ItemID.derived(from: metadata.identity, discriminator: discriminator)
            if tree.index(of: id) == nil { return id }
            discriminator += 1
        }
    }

    // MARK: Reporting helpers

    func changedItem(_ index: Tree.Index) -> ChangedItem {
        let node = tree[index]
        return ChangedItem(
            path: tree.path(of: index), id: tree.id(of: index), kind: node.kind, size: node.size,
            isWriting: node.flags & Tree.Flag.writing != 0)
    }

    /// Adds an item to the tree and reports it, under `id` when it has one
    /// already (an item coming back), or else a new one.
    @discardableResult
    mutating func add(
        name: [UInt8], in parent: Tree.Index, metadata: FileMetadata, writing: Bool, report: Bool = true,
        id known: ItemID? = nil
    ) -> Tree.Index {
        let id = known ?? newID(for: metadata, at: tree.path(of: parent).appending(name))
        let index = tree.insert(name: name, in: parent, metadata: metadata, id: id)
        if metadata.kind == .file && writing {
            tree.set(index, flag: Tree.Flag.writing, true)
            writes.activity(
                on: index, at: now.monotonic, closed: false, size: metadata.size, modified: metadata.modified)
        }
        if report { announce(index) }
        return index
    }

    /// Removes an item and everything under it, reporting one `removed`
    /// (nothing for a file that was never reported).
    mutating func remove(_ index: Tree.Index, report: Bool = true) {
        if report { reportRemoved(index) }
        forgetSubtree(index)
    }

    /// Reports an item `removed` (nothing for a file that was never reported).
    mutating func reportRemoved(_ index: Tree.Index) {
        guard !tree.has(index, flag: Tree.Flag.unreported) else { return }
        emit(.removed(path: tree.path(of: index), id: tree.id(of: index), kind: tree[index].kind))
    }

    /// Drops an item and its subtree from the tree, with their watches and tracking.
    mutating func forgetSubtree(_ index: Tree.Index) {
        var forgotten: [Tree.Index] = []
        tree.remove(index) { forgotten.append($0) }
        for node in forgotten {
            writes.forget(node)
            polledRoots.remove(node)
            if let wd = watchOfDirectory.removeValue(forKey: node) {
                watchedDirectories[wd] = nil
                fileSystem.removeWatch(wd)
            }
        }
    }

    /// Moves an item (and its subtree) and reports `renamed` or `moved`.
    mutating func move(_ index: Tree.Index, to parent: Tree.Index, name: [UInt8]) {
        let from = tree.path(of: index)
        let sameFolder = tree[index].parent == parent
        tree.move(index, to: parent, name: name)
        guard !tree.has(index, flag: Tree.Flag.unreported) else { return }
        let to = tree.path(of: index)
        let id = tree.id(of: index)
        let kind = tree[index].kind
        emit(
            sameFolder
                ? .renamed(from: from, to: to, id: id, kind: kind) : .moved(from: from, to: to, id: id, kind: kind))
    }

    // MARK: Watches and degradation

    /// Whether a directory lies in a polled subtree.
    func isPolled(_ index: Tree.Index) -> Bool {
        var current = index
        while current >= 0 {
            if tree.has(current, flag: Tree.Flag.polled) { return true }
            current = tree[current].parent
        }
        return false
    }

    /// Records the outcome of a watch request; a failure degrades the subtree to polling.
    mutating func record(_ outcome: WatchOutcome, for index: Tree.Index, path: ItemPath) {
        switch outcome {
        case .notRequested:
            break
        case .watching(let wd):
            if let old = watchOfDirectory[index], old != wd { watchedDirectories[old] = nil }
            if let other = watchedDirectories[wd], other != index { watchOfDirectory[other] = nil }
            watchedDirectories[wd] = index
            watchOfDirectory[index] = wd
        case .failed(let errno):
            let (reason, hint) = ObserverCore.degradation(for: errno, path: path)
            degrade(index, path: path, reason: reason, hint: hint)
        }
    }

    mutating func degrade(_ index: Tree.Index, path: ItemPath, reason: String, hint: String) {
        guard !tree.has(index, flag: Tree.Flag.polled) else { return }
        tree.set(index, flag: Tree.Flag.polled, true)
        polledRoots.insert(index)
        if nextPoll == .max { nextPoll = now.monotonic + options.degradedPollingInterval.nanoseconds }
        emit(.degraded(path: path, reason: reason, hint: hint))
    }

    static func degradation(for errno: Errno, path: ItemPath) -> (reason: String, hint: String) {
        let shown = path.isRoot ? "the root" : "'\(path)'"
        switch errno {
        case .noSpace:
            let limit = readProcNumber("/proc/sys/fs/inotify/max_user_watches")
            let now = limit.map { " (now \($0))" } ?? ""
            return (
                "watch-limit",
                "the inotify watch limit is reached\(now); raise it with `sysctl fs.inotify.max_user_watches=\(max((limit ?? 65536) * 4, 524288))`; \(shown) is polled until then"
            )
        case .accessDenied, .permission:
            return ("permission", "grant read and execute access to \(shown) (chmod u+rx); it is polled until then")
        default:
            return ("unsupported-filesystem", "\(shown) cannot be watched by inotify (\(errno)); it is polled")
        }
    }
}

/// An item of the observer's current tree.
public struct Item: Sendable, Hashable {
    /// Where the item is, relative to the root.
    public var path: ItemPath
    /// Its identity.
    public var id: ItemID
    /// What it is.
    public var kind: ItemKind
    /// Its size in bytes.
    public var size: Int64
    /// Modification time, nanoseconds since the epoch.
    public var modificationTime: Int64
    /// Birth time, nanoseconds since the epoch, or 0 where the file system does not keep it.
    public var creationTime: Int64
    /// Whether the file is still being written.
    public var isWriting: Bool
    /// The number of reported children, for directories.
    public var childCount: Int?
    /// Its inode number (with the size and modification time, what a
    /// server's strong validator is made of, without asking the disk).
    public var inode: UInt64 = 0

    /// The item's name (its last path component), as text.
    public var name: String { String(decoding: path.name, as: UTF8.self) }
}
