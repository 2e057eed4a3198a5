import FileWatching

/// Checks the ids a stream gives against the disk's inodes, by the rules of
/// `events.md` ("What an id names"), at each point where the observer has
/// caught up:
///
/// - an inode that was there at the last check and still is keeps its id,
///   however it was renamed, moved or swapped; or it took the id of an
///   item now gone whose name it took since (an atomic save: the saved
///   file keeps the document's id);
/// - an inode that is new since the last check has a new id (one no item
///   ever had at a check), or the id of an item now gone whose name it took
///   since (a file replaced at its name while the observer was not looking
///   is the same document written anew);
/// - no two inodes have one id.
///
/// `Inode` is what tells one inode from every other for the whole run: on
/// a real disk its number and generation (a number is reused at once after
/// a delete), in a simulation its record. Inodes at several names (hard
/// links) are left out: which link keeps which id is not the disk's to say.
struct InodeLedger<Inode: Hashable> {
    /// Each inode's id at the last check.
    private var idAtCheck: [Inode: ItemID] = [:]
    /// The name each inode had at the last check, for messages.
    private var pathAtCheck: [Inode: ItemPath] = [:]
    /// Every id seen at a check.
    private var everSeen: Set<ItemID> = []
    /// The inode that last held each name (kept after it left the name).
    private var lastHolder: [ItemPath: Inode] = [:]
    /// Since the last check: the inodes whose names each inode took.
    private var took: [Inode: Set<Inode>] = [:]
    private(set) var violations: [String] = []

    /// Records the disk after one operation: every name (hidden ones too)
    /// and the inode it leads to.
    mutating func record(_ disk: [ItemPath: Inode]) {
        for (path, inode) in disk {
            if let previous = lastHolder[path], previous != inode { took[inode, default: []].insert(previous) }
            lastHolder[path] = inode
        }
    }

    /// Checks the ids the stream gives each visible name (`ids`) against
    /// the inodes there (`disk`, the same names).
    mutating func check(ids: [ItemPath: ItemID], disk: [ItemPath: Inode], context: String = "") {
        record(disk)
        var pathsOf: [Inode: [ItemPath]] = [:]
        for (path, inode) in disk { pathsOf[inode, default: []].append(path) }
        var now: [Inode: ItemID] = [:]
        var holders: [ItemID: [ItemPath]] = [:]
        for (path, id) in ids { holders[id, default: []].append(path) }
        for (id, paths) in holders where paths.count > 1 {
            let inodes = Set(paths.compactMap { disk[$0] })
            if inodes.count > 1 {
                violations.append("\(context)\(id) is the id of several items: \(paths.sorted())")
            }
        }
        for (inode, paths) in pathsOf where paths.count == 1 {
            guard let id = ids[paths[0]] else {
                violations.append("\(context)\(paths[0]) has no id in the stream")
                continue
            }
            now[inode] = id
        }
        let alive = Set(disk.values)
        for (inode, id) in now {
            let path = pathsOf[inode]![0]
            if let before = idAtCheck[inode], before == id { continue }
            // The ids it may have taken: those of gone items whose names it
            // (or an item whose name it took) took since the last check.
            var inherited: [ItemID: Inode] = [:]
            var queue = Array(took[inode] ?? [])
            var visited: Set<Inode> = [inode]
            while let previous = queue.popLast() {
                guard visited.insert(previous).inserted else { continue }
                if !alive.contains(previous), let theirs = idAtCheck[previous] { inherited[theirs] = previous }
                queue += took[previous] ?? []
            }
            if inherited[id] != nil { continue }
            if let before = idAtCheck[inode] {
                violations.append(
                    "\(context)the inode at \(path) (at \(pathAtCheck[inode]!) before) changed id \(before) -> \(id)")
            } else if everSeen.contains(id) {
                let owner = idAtCheck.first { $0.value == id }
                let whose = owner.map { " (\(pathAtCheck[$0.key]!)'s, \(alive.contains($0.key) ? "there" : "gone"))" }
                violations.append("\(context)the new item at \(path) has an old id \(id)\(whose ?? "")")
            }
        }
        idAtCheck = now
        pathAtCheck = [:]
        for (inode, paths) in pathsOf { pathAtCheck[inode] = paths.min() }
        everSeen.formUnion(now.values)
        took.removeAll()
    }
}
