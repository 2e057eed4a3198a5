/// Coalesces the changes held back inside the latency window, keeping the
/// replay rule of `events.md`: a file added and removed again inside the
/// window disappears with everything said about it in between, and several
/// modifications of one item fold into the first report of it.
enum ChangeCoalescer {
    static func coalesce(_ changes: [Change]) -> [Change] {
        guard changes.count > 1 else { return changes }
        var keep = [Bool](repeating: true, count: changes.count)

        // Files added and removed again inside the window (not directories:
        // the events of their children depend on them). Nothing else depends
        // on a file, so every event about it can go.
        var addedAt: [ItemID: Int] = [:]
        for (position, change) in changes.enumerated() {
            switch change {
            case .added(let item) where item.kind != .directory, .duplicated(let item, _) where item.kind != .directory:
                addedAt[item.id] = position
            case .removed(_, let id, let kind) where kind != .directory:
                if let start = addedAt.removeValue(forKey: id) {
                    for i in start...position where changes[i].id == id { keep[i] = false }
                }
            default:
                break
            }
        }

        // Fold modifications into the first added or modified of the item,
        // while no rename or move of it came in between.
        var result: [Change] = []
        result.reserveCapacity(changes.count)
        var lastReport: [ItemID: Int] = [:]
        for (position, change) in changes.enumerated() where keep[position] {
            switch change {
            case .modified(let item):
                if let at = lastReport[item.id] {
                    switch result[at] {
                    case .added(var earlier):
                        earlier.size = item.size
                        earlier.isWriting = item.isWriting
                        result[at] = .added(earlier)
                        continue
                    case .modified(var earlier):
                        earlier.size = item.size
                        earlier.isWriting = item.isWriting
                        result[at] = .modified(earlier)
                        continue
                    case .duplicated(var earlier, let source):
                        earlier.size = item.size
                        earlier.isWriting = item.isWriting
                        result[at] = .duplicated(earlier, source: source)
                        continue
                    default:
                        break
                    }
                }
                lastReport[item.id] = result.count
                result.append(change)
            case .added(let item), .duplicated(let item, _):
                lastReport[item.id] = result.count
                result.append(change)
            case .renamed(_, _, let id, _), .moved(_, _, let id, _), .removed(_, let id, _), .finished(_, let id, _):
                lastReport[id] = nil
                result.append(change)
            default:
                result.append(change)
            }
        }
        return result
    }
}
