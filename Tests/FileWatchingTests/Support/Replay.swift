import FileWatching

/// Applies changes to a set of paths, as the replay rule of `events.md` says:
/// add on `added`/`duplicated`, delete on `removed` (with everything under
/// it), move the path and everything under it on `renamed`/`moved`.
struct Replay {
    private(set) var items: [ItemPath: ItemKind] = [:]
    /// Contract violations seen while replaying (an event about a path the
    /// replay does not have, an addition of a path it already has, …).
    private(set) var violations: [String] = []
    private(set) var scanCompleted = false

    init(initial: [ItemPath: ItemKind] = [:]) { items = initial }

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
            items[item.path] = item.kind
        case .removed(let path, _, _):
            if items[path] == nil { violations.append("removed a missing path: \(change.jsonLine)") }
            items = items.filter { !$0.key.isSame(asOrUnder: path) }
        case .renamed(let from, let to, _, _), .moved(let from, let to, _, _):
            if items[from] == nil { violations.append("moved a missing path: \(change.jsonLine)") }
            if items[to] != nil { violations.append("moved onto an existing path: \(change.jsonLine)") }
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
        case .modified(let item):
            if items[item.path] == nil { violations.append("modified a missing path: \(change.jsonLine)") }
        case .finished(let path, _, _):
            if items[path] == nil { violations.append("finished a missing path: \(change.jsonLine)") }
        case .scanCompleted:
            scanCompleted = true
        default:
            break
        }
    }
}

/// A short description of how two path sets differ.
func difference(_ expected: [ItemPath: ItemKind], _ actual: [ItemPath: ItemKind]) -> String {
    let missing = expected.filter { actual[$0.key] != $0.value }.keys.sorted().prefix(10)
    let extra = actual.filter { expected[$0.key] != $0.value }.keys.sorted().prefix(10)
    return "missing: \(missing.map(\.description)), extra: \(extra.map(\.description))"
}
