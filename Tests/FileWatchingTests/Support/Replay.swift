import FileWatching

/// Applies changes to a set of paths, as the replay rule of `events.md` says:
/// add on `added`/`duplicated`, delete on `removed` (with everything under
/// it), move the path and everything under it on `renamed`/`moved`. It
/// keeps each path's id too (from the events; the initial items have none
/// unless given), so the ids can be compared with the disk's identities.
struct Replay {
    private(set) var items: [ItemPath: ItemKind] = [:]
    /// The id the events gave each path.
    private(set) var ids: [ItemPath: ItemID] = [:]
    /// Every id a `removed` event named.
    private(set) var removedIDs: Set<ItemID> = []
    /// Contract violations seen while replaying (an event about a path the
    /// replay does not have, an addition of a path it already has, …).
    private(set) var violations: [String] = []
    private(set) var scanCompleted = false

    init(initial: [ItemPath: ItemKind] = [:], ids: [ItemPath: ItemID] = [:]) {
        items = initial
        for (path, id) in ids { setID(id, at: path) }
    }

    mutating func apply(_ changes: [Change]) {
        for change in changes { apply(change) }
    }

    mutating func apply(_ change: Change) {
        switch change {
        case .added(let item), .duplicated(let item, _):
            if items[item.path] != nil { violations.append("added an existing path: \(change.jsonLine)") }
            if !item.path.parent.isRoot && items[item.path.parent] != .directory {
                violations.append("added under a missing folder: \(change.jsonLine)")
            }
            if held[item.id, default: 0] > 0 {
                violations.append("added with the id of an item still there: \(change.jsonLine)")
            }
            items[item.path] = item.kind
            setID(item.id, at: item.path)
        case .removed(let path, let id, _):
            if items[path] == nil { violations.append("removed a missing path: \(change.jsonLine)") }
            items = items.filter { !$0.key.isSame(asOrUnder: path) }
            for gone in ids.keys where gone.isSame(asOrUnder: path) { setID(nil, at: gone) }
            removedIDs.insert(id)
        case .renamed(let from, let to, _, _), .moved(let from, let to, _, _):
            if items[to] != nil { violations.append("moved onto an existing path: \(change.jsonLine)") }
            if items[from] == nil { violations.append("moved a missing path: \(change.jsonLine)") }
            var moved: [ItemPath: ItemKind] = [:]
            for (path, kind) in items {
                if path.isSame(asOrUnder: from) {
                    let rest = path.bytes.dropFirst(from.bytes.count)
                    moved[ItemPath(bytes: to.bytes + rest)] = kind
                } else {
                    moved[path] = kind
                }
            }
            items = moved
            let movedIDs = ids.filter { $0.key.isSame(asOrUnder: from) }
            for (path, _) in ids where path.isSame(asOrUnder: from) || path.isSame(asOrUnder: to) {
                setID(nil, at: path)
            }
            for (path, id) in movedIDs {
                setID(id, at: ItemPath(bytes: to.bytes + path.bytes.dropFirst(from.bytes.count)))
            }
            if let known = ids[to], known != change.id {
                violations.append("moved an item with another id (\(known)): \(change.jsonLine)")
            }
            setID(change.id, at: to)
        case .modified(let item):
            if items[item.path] == nil { violations.append("modified a missing path: \(change.jsonLine)") }
            if let known = ids[item.path], known != item.id {
                violations.append("modified an item with another id (\(known)): \(change.jsonLine)")
            }
            setID(item.id, at: item.path)
        case .finished(let path, _, _):
            if items[path] == nil { violations.append("finished a missing path: \(change.jsonLine)") }
        case .scanCompleted:
            scanCompleted = true
        default:
            break
        }
    }

    /// How many paths hold each id (one, unless the stream gave an id twice).
    private var held: [ItemID: Int] = [:]

    private mutating func setID(_ id: ItemID?, at path: ItemPath) {
        if let old = ids[path] { held[old, default: 1] -= 1 }
        ids[path] = id
        if let id { held[id, default: 0] += 1 }
    }
}

/// A short description of how two path sets differ.
func difference(_ expected: [ItemPath: ItemKind], _ actual: [ItemPath: ItemKind]) -> String {
    let missing = expected.filter { actual[$0.key] != $0.value }.keys.sorted().prefix(10)
    let extra = actual.filter { expected[$0.key] != $0.value }.keys.sorted().prefix(10)
    return "missing: \(missing.map(\.description)), extra: \(extra.map(\.description))"
}

/// Checks that the ids a stream gives follow the disk's identities: an item
/// that stays on disk keeps its id, however it was renamed, moved or
/// swapped, and an id passes to another item only when the stream said its
/// item was removed (an atomic save gives the saved file the old one's id).
///
/// Given the replay's ids and the identity on disk at each path, at points
/// where the observer has caught up. Identities at several paths (hard
/// links) are left out: which link keeps which id is not the disk's to say.
struct IdentityLedger<Identity: Hashable> {
    private var last: [Identity: (id: ItemID, path: ItemPath)] = [:]
    private(set) var violations: [String] = []

    /// Forgets the ids of the identities `left` says left the observer's
    /// view since the last check (renamed to a hidden name): as if a check
    /// had run while they were away, they may come back with new ids.
    mutating func forget(where left: (Identity) -> Bool) {
        last = last.filter { !left($0.key) }
    }

    mutating func check(_ replay: Replay, identity: (ItemPath) -> Identity?, context: String = "") {
        var now: [Identity: (id: ItemID, path: ItemPath)] = [:]
        var ambiguous: Set<Identity> = []
        for (path, id) in replay.ids {
            guard let identity = identity(path) else { continue }
            if now.updateValue((id, path), forKey: identity) != nil { ambiguous.insert(identity) }
        }
        for identity in ambiguous { now[identity] = nil }
        for (identity, (id, path)) in now {
            guard let (before, oldPath) = last[identity], before != id else { continue }
            if !replay.removedIDs.contains(before) {
                violations.append(
                    "\(context)\(oldPath) (\(before)) is at \(path) with another id, \(id), and \(before) was never removed"
                )
            }
        }
        last = now
    }
}
