@testable import FileWatching

/// An in-memory file system that queues inotify-like events for its watched
/// directories, so the observer's logic runs without touching disk.
final class FakeFileSystem: FileSystemAccess {
    struct Inode {
        var kind: ItemKind
        var birth: Int64
        var size: Int64 = 0
        var modified: Int64
        var children: [[UInt8]: UInt64] = [:]
        var links = 1
        /// Told apart from the number's earlier inodes by this alone when
        /// ``reusesInodes`` gives it their number and birth time.
        var generation: UInt32 = 0
    }

    /// Whether a number a delete freed goes to the next item made, with the
    /// same birth time and the next generation, as ext4 does within one
    /// clock tick.
    var reusesInodes = false
    private var freed: [(inode: UInt64, birth: Int64, generation: UInt32)] = []

    /// What tells one inode from every other for the whole run: its number
    /// and generation.
    struct Identity: Hashable, CustomStringConvertible {
        var inode: UInt64
        var generation: UInt32
        var description: String { "#\(inode).\(generation)" }
    }

    /// The inode at `path`, told apart from others of its number.
    func identity(_ path: ItemPath) -> Identity? {
        resolve(path).map { Identity(inode: $0, generation: inodes[$0]!.generation) }
    }

    private(set) var inodes: [UInt64: Inode] = [:]
    private var nextInode: UInt64 = 2
    private var watchByInode: [UInt64: Int32] = [:]
    private var inodeByWatch: [Int32: UInt64] = [:]
    private var nextWatch: Int32 = 1
    private var nextCookie: UInt32 = 1
    /// Events queued since the last `takeEvents()`.
    private(set) var queue: [SourceEvent] = []
    /// Open-for-writing counts.
    var writers: [UInt64: Int] = [:]
    /// Whether `hasNoWriters` answers (read leases work).
    var leasesWork = true
    /// Directories (by path) whose watch fails with this error.
    var watchFailures: [ItemPath: Errno] = [:]
    /// Directories (by path) that cannot be listed.
    var unreadable: Set<ItemPath> = []
    /// The number of watches the kernel allows (nil: no limit).
    var watchLimit: Int?
    /// Wall clock, nanoseconds.
    var wall: Int64 = 1_700_000_000_000_000_000

    static let device: UInt64 = 42

    /// What was done to the disk, one line per operation, with inodes (for tracing failures).
    var journal: [String] = []

    init() {
        inodes[1] = Inode(kind: .directory, birth: 1, modified: wall)
    }

    // MARK: FileSystemAccess

    func metadata(at path: ItemPath) -> Result<FileMetadata, Errno> {
        guard let inode = resolve(path) else { return .failure(.notFound) }
        return .success(metadata(of: inode))
    }

    func metadata(of inode: UInt64) -> FileMetadata {
        let node = inodes[inode]!
        return FileMetadata(
            kind: node.kind,
            identity: FileIdentity(device: Self.device, inode: inode, birth: node.birth, generation: node.generation),
            size: node.size, modified: node.modified, created: node.birth)
    }

    /// Directories (by path) deleted by another process just before they are listed.
    var vanishing: Set<ItemPath> = []

    /// Changes other processes make just before a directory (by path) is
    /// listed, once: the disk changing under a rescan.
    var beforeListing: [ItemPath: (FakeFileSystem) -> Void] = [:]

    func listDirectory(at path: ItemPath, watch: Bool) -> DirectoryListing {
        if vanishing.remove(path) != nil { removeTree(path) }
        if let change = beforeListing.removeValue(forKey: path) { change(self) }
        guard let inode = resolve(path), inodes[inode]!.kind == .directory else {
            return DirectoryListing(watch: .notRequested, entries: .failure(.notFound))
        }
        if unreadable.contains(path) {
            return DirectoryListing(watch: .failed(.accessDenied), entries: .failure(.accessDenied))
        }
        var outcome = WatchOutcome.notRequested
        if watch {
            if let failure = watchFailures[path] {
                outcome = .failed(failure)
            } else if let existing = watchByInode[inode] {
                outcome = .watching(existing)
            } else if let limit = watchLimit, watchByInode.count >= limit {
                outcome = .failed(.noSpace)
            } else {
                let wd = nextWatch
                nextWatch += 1
                watchByInode[inode] = wd
                inodeByWatch[wd] = inode
                outcome = .watching(wd)
            }
        }
        let entries = inodes[inode]!.children.map { name, child in
            DirectoryEntry(name: name, metadata: .success(metadata(of: child)))
        }
        return DirectoryListing(watch: outcome, entries: .success(entries), listed: (device: Self.device, inode: inode))
    }

    func removeWatch(_ descriptor: Int32) {
        guard let inode = inodeByWatch.removeValue(forKey: descriptor) else { return }
        watchByInode[inode] = nil
        queue.append(SourceEvent(watch: descriptor, kind: .watchRemoved))
    }

    func hasNoWriters(at path: ItemPath) -> Bool? {
        guard leasesWork, let inode = resolve(path) else { return nil }
        return (writers[inode] ?? 0) == 0
    }

    var watchCount: Int { watchByInode.count }

    /// The observer stopped: its watches and queued events are gone.
    func dropAllWatches() {
        watchByInode.removeAll()
        inodeByWatch.removeAll()
        queue.removeAll()
    }

    /// Directories (by path) on a file system without events.
    var remote: [ItemPath: String] = [:]
    func eventsUnsupported(at path: ItemPath) -> String? { remote[path] }

    /// File contents set by tests; other files read as bytes made from their inode.
    var contents: [UInt64: [UInt8]] = [:]
    func readBytes(at path: ItemPath, offset: Int64, count: Int) -> [UInt8]? {
        guard let inode = resolve(path), let node = inodes[inode], node.kind == .file else { return nil }
        let end = min(node.size, offset + Int64(count))
        guard offset < end else { return [] }
        if let content = contents[inode] { return Array(content[Int(offset)..<Int(end)]) }
        return (offset..<end).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int64(inode) &* 7) }
    }

    /// Creates, writes `content` and closes a file.
    @discardableResult
    func write(_ path: ItemPath, content: [UInt8]) -> UInt64 {
        let inode = create(path)
        contents[inode] = content
        append(path, bytes: Int64(content.count))
        close(path)
        return inode
    }

    /// `cp` (with `-a`: the identity attribute copied last, as cp does).
    @discardableResult
    func copy(_ source: ItemPath, _ destination: ItemPath, preservingAttributes: Bool) -> UInt64 {
        let original = resolve(source)!
        let bytes = readBytes(at: source, offset: 0, count: Int(inodes[original]!.size))!
        let inode = create(destination)
        contents[inode] = bytes
        append(destination, bytes: Int64(bytes.count))
        journal.append(
            "  (a copy of \(source) #\(original)\(preservingAttributes ? ", its identity attribute too" : ""))")
        if preservingAttributes, let id = attributes[original] {
            attributes[inode] = id
            let (parent, name) = (resolve(destination.parent)!, destination.name)
            if let wd = watchByInodeForTests(parent) {
                queue.append(SourceEvent(watch: wd, kind: .attributes, name: name))
            }
        }
        close(destination)
        return inode
    }

    private func watchByInodeForTests(_ inode: UInt64) -> Int32? { watchByInode[inode] }

    /// Identity attributes, by inode (copied with the file, as `cp -a` does).
    var attributes: [UInt64: ItemID] = [:]
    /// Attributes a copy tool writes right after the observer first reads
    /// the item's (none yet): the race between the observer's read and write.
    var attributesWrittenAfterRead: [ItemPath: ItemID] = [:]
    func identityAttribute(at path: ItemPath) -> ItemID? {
        let stored = resolve(path).flatMap { attributes[$0] }
        if let late = attributesWrittenAfterRead.removeValue(forKey: path), let inode = resolve(path) {
            attributes[inode] = late
        }
        return stored
    }
    func setIdentityAttribute(_ id: ItemID, at path: ItemPath) {
        if let inode = resolve(path) { attributes[inode] = id }
    }
    func createIdentityAttribute(_ id: ItemID, at path: ItemPath) -> Bool {
        guard let inode = resolve(path) else { return true }
        if attributes[inode] != nil { return false }
        attributes[inode] = id
        return true
    }

    // MARK: Queue

    func takeEvents() -> [SourceEvent] {
        defer { queue.removeAll() }
        return queue
    }

    /// The first `limit` queued events (all with nil), as a read whose
    /// buffer holds no more takes them; the rest wait for the next read.
    func takeEvents(atMost limit: Int?) -> [SourceEvent] {
        guard let limit, limit < queue.count else { return takeEvents() }
        defer { queue.removeFirst(limit) }
        return Array(queue.prefix(limit))
    }

    /// Replaces the queue by an overflow marker, as the kernel does when it drops events.
    func overflow() {
        queue = [SourceEvent(watch: -1, kind: .overflow)]
    }

    private func notify(_ directory: UInt64, _ kind: SourceEvent.Kind, _ name: [UInt8], isDirectory: Bool) {
        switch kind {
        case .created, .deleted, .movedFrom, .movedTo:
            // A name made, removed or renamed changes its folder's modification time.
            inodes[directory]?.modified = wall
        default:
            break
        }
        guard let wd = watchByInode[directory] else { return }
        queue.append(SourceEvent(watch: wd, kind: kind, name: name, isDirectory: isDirectory))
    }

    private func notifySelf(_ inode: UInt64, _ kind: SourceEvent.Kind) {
        guard let wd = watchByInode[inode] else { return }
        queue.append(SourceEvent(watch: wd, kind: kind, isDirectory: true))
    }

    // MARK: Paths

    func resolve(_ path: ItemPath) -> UInt64? {
        var current: UInt64 = 1
        for component in path.components {
            guard let node = inodes[current], node.kind == .directory, let next = node.children[component] else {
                return nil
            }
            current = next
        }
        return current
    }

    private func split(_ path: ItemPath) -> (parent: UInt64, name: [UInt8]) {
        guard let parent = resolve(path.parent) else { fatalError("no parent for \(path)") }
        return (parent, path.name)
    }

    func exists(_ path: ItemPath) -> Bool { resolve(path) != nil }

    // MARK: Operations, as a process would do them

    @discardableResult
    func mkdir(_ path: ItemPath) -> UInt64 {
        let (parent, name) = split(path)
        precondition(inodes[parent]!.children[name] == nil, "\(path) exists")
        let inode = allocate(.directory)
        inodes[parent]!.children[name] = inode
        notify(parent, .created, name, isDirectory: true)
        journal.append("mkdir \(path) #\(inode)")
        return inode
    }

    /// open(O_CREAT|O_WRONLY), leaving it open: `created` (and the writer counted).
    @discardableResult
    func create(_ path: ItemPath, kind: ItemKind = .file) -> UInt64 {
        let (parent, name) = split(path)
        precondition(inodes[parent]!.children[name] == nil, "\(path) exists")
        let inode = allocate(kind)
        inodes[parent]!.children[name] = inode
        notify(parent, .created, name, isDirectory: false)
        journal.append("create \(path) #\(inode)")
        if kind == .file { writers[inode, default: 0] += 1 }
        return inode
    }

    /// open for writing an existing file.
    func open(_ path: ItemPath) {
        writers[resolve(path)!, default: 0] += 1
    }

    /// write(2) of `bytes` at the end.
    func append(_ path: ItemPath, bytes: Int64) {
        let inode = resolve(path)!
        if contents[inode] != nil, contents[inode]!.count < inodes[inode]!.size + bytes {
            let start = Int64(contents[inode]!.count)
            contents[inode]! += (start..<inodes[inode]!.size + bytes).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        }
        inodes[inode]!.size += bytes
        inodes[inode]!.modified = wall
        let (parent, name) = split(path)
        notify(parent, .modified, name, isDirectory: false)
    }

    /// close(2) of a descriptor opened for writing.
    func close(_ path: ItemPath) {
        let inode = resolve(path)!
        writers[inode, default: 1] -= 1
        let (parent, name) = split(path)
        notify(parent, .closedWrite, name, isDirectory: false)
    }

    /// Every writer closes its files (the writing processes end).
    func closeAllWriters() {
        var paths: [UInt64: ItemPath] = [:]
        func visit(_ inode: UInt64, _ path: ItemPath) {
            for (name, child) in inodes[inode]!.children {
                paths[child] = path.appending(name)
                if inodes[child]!.kind == .directory { visit(child, path.appending(name)) }
            }
        }
        visit(1, .root)
        for (inode, count) in writers where count > 0 {
            if let path = paths[inode] {
                for _ in 0..<count { close(path) }
            } else {
                writers[inode] = 0
            }
        }
    }

    /// Creates, writes and closes a file.
    @discardableResult
    func write(_ path: ItemPath, bytes: Int64) -> UInt64 {
        let inode = create(path)
        if bytes > 0 { append(path, bytes: bytes) }
        close(path)
        return inode
    }

    /// Sets the modification time (touch, utimensat): `attributes`.
    func touch(_ path: ItemPath, modified: Int64) {
        let inode = resolve(path)!
        inodes[inode]!.modified = modified
        let (parent, name) = split(path)
        notify(parent, .attributes, name, isDirectory: inodes[inode]!.kind == .directory)
    }

    /// Events of renames held up after their first half, by source
    /// directory: queued when someone waits for that directory's renames.
    private var stalled: [UInt64: [SourceEvent]] = [:]
    /// The directories ``awaitRenames(inDirectory:identity:)`` was asked about, in order.
    private(set) var awaited: [ItemPath] = []

    func awaitRenames(inDirectory path: ItemPath, identity: FileIdentity) -> Bool {
        awaited.append(path)
        guard let inode = resolve(path), inode == identity.inode, inodes[inode]!.kind == .directory else {
            return false
        }
        queue += stalled.removeValue(forKey: inode) ?? []
        return true
    }

    /// rename(2), replacing a file at the destination. With `stalling`,
    /// only the first half is queued, as when the renaming thread is held
    /// up between the two: the rest waits for ``awaitRenames(inDirectory:identity:)``.
    func rename(_ from: ItemPath, _ to: ItemPath, stalling: Bool = false) {
        let (oldParent, oldName) = split(from)
        let (newParent, newName) = split(to)
        let inode = inodes[oldParent]!.children[oldName]!
        let isDirectory = inodes[inode]!.kind == .directory
        journal.append("rename \(from) \(to) #\(inode)")
        if let replaced = inodes[newParent]!.children[newName] {
            precondition(inodes[replaced]!.kind != .directory || inodes[replaced]!.children.isEmpty)
            free(replaced)
        }
        inodes[oldParent]!.children[oldName] = nil
        inodes[newParent]!.children[newName] = inode
        if to.components.contains(where: { $0.first == UInt8(ascii: ".") }) { hide(inode) }
        let cookie = nextCookie
        nextCookie += 1
        notify(oldParent, .movedFrom(cookie: cookie), oldName, isDirectory: isDirectory)
        let rest = queue.count
        notify(newParent, .movedTo(cookie: cookie), newName, isDirectory: isDirectory)
        notifySelf(inode, .selfMoved)
        if stalling {
            stalled[oldParent, default: []] += queue[rest...]
            queue.removeSubrange(rest...)
        }
    }

    /// renameat2(2) with `RENAME_EXCHANGE`: the two items trade places, with
    /// the events Linux gives for it, two renames (the first item's, then
    /// the second's, each with its own cookie).
    func exchange(_ first: ItemPath, _ second: ItemPath) {
        let (firstParent, firstName) = split(first)
        let (secondParent, secondName) = split(second)
        let firstInode = inodes[firstParent]!.children[firstName]!
        let secondInode = inodes[secondParent]!.children[secondName]!
        journal.append("exchange \(first) #\(firstInode) \(second) #\(secondInode)")
        inodes[firstParent]!.children[firstName] = secondInode
        inodes[secondParent]!.children[secondName] = firstInode
        let moves = [
            (firstInode, firstParent, firstName, secondParent, secondName),
            (secondInode, secondParent, secondName, firstParent, firstName),
        ]
        for (inode, fromParent, fromName, toParent, toName) in moves {
            let cookie = nextCookie
            nextCookie += 1
            let isDirectory = inodes[inode]!.kind == .directory
            notify(fromParent, .movedFrom(cookie: cookie), fromName, isDirectory: isDirectory)
            notify(toParent, .movedTo(cookie: cookie), toName, isDirectory: isDirectory)
            notifySelf(inode, .selfMoved)
        }
    }

    /// Moves an item out of the watched tree (to another file system, or a folder outside).
    func moveOut(_ path: ItemPath) {
        let (parent, name) = split(path)
        let inode = inodes[parent]!.children[name]!
        inodes[parent]!.children[name] = nil
        let cookie = nextCookie
        journal.append("move out \(path) #\(inode)")
        nextCookie += 1
        notify(parent, .movedFrom(cookie: cookie), name, isDirectory: inodes[inode]!.kind == .directory)
        // Its watches stay: the kernel keeps reporting for it until removed.
        detached.append(inode)
    }

    /// Moves a tree from outside in, with files `names` under a new directory.
    func moveIn(directory path: ItemPath, files: [String]) {
        let (parent, name) = split(path)
        let inode = allocate(.directory)
        for file in files {
            journal.append("move in \(path) #\(inode)")
            let child = allocate(.file)
            inodes[child]!.size = 10
            inodes[inode]!.children[Array(file.utf8)] = child
        }
        inodes[parent]!.children[name] = inode
        let cookie = nextCookie
        nextCookie += 1
        notify(parent, .movedTo(cookie: cookie), name, isDirectory: true)
    }

    private var detached: [UInt64] = []

    /// unlink(2) or rmdir(2).
    func remove(_ path: ItemPath) {
        let (parent, name) = split(path)
        let inode = inodes[parent]!.children[name]!
        let isDirectory = inodes[inode]!.kind == .directory
        precondition(!isDirectory || inodes[inode]!.children.isEmpty, "rmdir of a non-empty folder")
        journal.append("remove \(path) #\(inode)")
        inodes[parent]!.children[name] = nil
        notify(parent, .deleted, name, isDirectory: isDirectory)
        if isDirectory {
            notifySelf(inode, .selfDeleted)
            if let wd = watchByInode.removeValue(forKey: inode) {
                inodeByWatch[wd] = nil
                queue.append(SourceEvent(watch: wd, kind: .watchRemoved))
            }
        }
        free(inode)
    }

    /// rm -rf: children first.
    func removeTree(_ path: ItemPath) {
        let inode = resolve(path)!
        if inodes[inode]!.kind == .directory {
            for name in inodes[inode]!.children.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                removeTree(path.appending(name))
            }
        }
        remove(path)
    }

    /// link(2).
    func link(_ existing: ItemPath, _ new: ItemPath) {
        let inode = resolve(existing)!
        let (parent, name) = split(new)
        journal.append("link \(existing) \(new) #\(inode)")
        linked.insert(inode)
        inodes[parent]!.children[name] = inode
        inodes[inode]!.links += 1
        notify(parent, .created, name, isDirectory: false)
    }

    /// Inodes that were ever given a second name by ``link(_:_:)``.
    private(set) var linked: Set<UInt64> = []
    /// Inodes renamed to a hidden name (with everything in them), since
    /// the last ``takeHidden()``: out of the observer's view, they left, and
    /// may come back as new items.
    private var hidden: Set<UInt64> = []

    private func hide(_ inode: UInt64) {
        hidden.insert(inode)
        for child in inodes[inode]!.children.values { hide(child) }
    }

    /// The inodes renamed to a hidden name since the last call.
    func takeHidden() -> Set<UInt64> {
        defer { hidden.removeAll() }
        return hidden
    }

    private func allocate(_ kind: ItemKind) -> UInt64 {
        wall += 1_000
        if reusesInodes, let reused = freed.popLast() {
            inodes[reused.inode] = Inode(
                kind: kind, birth: reused.birth, modified: wall, generation: reused.generation &+ 1)
            return reused.inode
        }
        let inode = nextInode
        nextInode += 1
        inodes[inode] = Inode(kind: kind, birth: wall, modified: wall, generation: reusesInodes ? 1 : 0)
        return inode
    }

    private func free(_ inode: UInt64) {
        inodes[inode]!.links -= 1
        guard inodes[inode]!.links == 0 else { return }
        if reusesInodes, !detached.contains(inode) {
            // The kernel drops a watch on an inode that is freed.
            if let wd = watchByInode.removeValue(forKey: inode) {
                inodeByWatch[wd] = nil
                queue.append(SourceEvent(watch: wd, kind: .watchRemoved))
            }
            freed.append((inode, inodes[inode]!.birth, inodes[inode]!.generation))
            contents[inode] = nil
            attributes[inode] = nil
            writers[inode] = nil
            linked.remove(inode)
        }
        inodes[inode] = nil
    }

    // MARK: What is on disk

    /// Every path under the root, with its kind (hidden names included).
    func snapshot(includeHidden: Bool = true) -> [ItemPath: ItemKind] {
        var result: [ItemPath: ItemKind] = [:]
        func visit(_ inode: UInt64, _ path: ItemPath) {
            for (name, child) in inodes[inode]!.children {
                if !includeHidden && name.first == UInt8(ascii: ".") { continue }
                let childPath = path.appending(name)
                result[childPath] = inodes[child]!.kind
                if inodes[child]!.kind == .directory { visit(child, childPath) }
            }
        }
        visit(1, .root)
        return result
    }
}
