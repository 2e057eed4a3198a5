import FileWatching

extension ChangeFeed {
    /// Where the log's newest records left the items they name, for a
    /// server that takes over the folder: its observer starts from the
    /// state the last leader saved, which may be older than the log (a
    /// leader commits its changes before it saves the state that holds
    /// them), so its first scan reports from the state's view what the
    /// log may hold already, or hold in other steps (a file renamed A to B
    /// to C is reported renamed A to C). Each change of that scan is
    /// rebased on the log's view: what the log already says is not
    /// numbered again, and an item the log left elsewhere is moved from
    /// where the log left it, so the log replays without a contradiction.
    ///
    /// Items the log's records name that the scan does not report (the
    /// state and the disk agree on them) may still be elsewhere than the
    /// log says: the leader died with their last changes not committed.
    /// Given where the saved state has them (``expect(saved:)``), the scan's
    /// changes are followed from there too, and once it is done the log is
    /// brought to where they are (``reconcile()``).
    struct Logged: Sendable {
        /// The items the records name, where the last of them left each.
        private var log = Places()
        /// Where the observer has them: the saved state's places, followed
        /// through the first scan (`nil`: not known).
        private var observed: Places?

        /// Whether no record was added.
        var isEmpty: Bool { log.places.isEmpty }
        /// How many items the records name.
        var count: Int { log.places.count }
        /// The items the records name.
        var ids: Set<ItemID> { Set(log.places.keys) }

        init() {}

        /// Adds a record's change, in the log's order.
        mutating func add(_ change: Change) { log.apply(change) }

        /// Where the saved state has the items the records name (those it
        /// does not have, it does not hold).
        mutating func expect(saved items: [ItemID: Item]) {
            var places = Places()
            for (id, item) in items {
                places.places[id] = .at(path: item.path, kind: item.kind, size: item.size, writing: false)
            }
            observed = places
        }

        /// What to number for the first scan's changes (``rebase(_:lookUp:)``
        /// each, then ``reconcile()``), and the ids the observer gave that
        /// are the log's (it is told them). One file under two ids keeps
        /// the log's:
        /// - a file the log has at a name, which the observer has nowhere
        ///   once the scan is done, and a new file the scan finds at that
        ///   name: one document saved anew (the leader saw the save, and
        ///   died before saving the state that has it); it is `modified`;
        /// - a file the log has at a name, which the observer has nowhere,
        ///   where the observer has a file the log has gone: the leader
        ///   gave it a new id after the state was saved (found moved in
        ///   two parts, as rule 5 of events.md allows).
        mutating func settle(_ scan: [Change], lookUp: (ItemID) -> Int64? = { _ in nil }) -> (
            steps: [Change], ids: [ItemID: ItemID]
        ) {
            // Whether the observer has a file of the log nowhere once the
            // scan is done (where it has them is known), or the scan
            // removes it (where not).
            var after = observed
            var mentions: [ItemID: Int] = [:]
            for change in scan {
                after?.apply(change)
                if let id = change.id { mentions[id, default: 0] += 1 }
            }
            func isGone(_ id: ItemID) -> Bool {
                guard let after else {
                    return scan.contains { if case .removed(_, id, _) = $0 { true } else { false } }
                }
                return (after.places[id] ?? .gone) == .gone
            }
            // A trial run finds each new file at the path where the log has
            // such a file as the scan gets there (folders moved before it).
            var ids: [ItemID: ItemID] = [:]
            var trial = self
            for change in scan {
                if case .removed(_, let id, .file) = change, isGone(id) { continue }
                if case .added(let item) = change, item.kind == .file, trial.log.places[item.id] == nil,
                    let old = trial.log.file(at: item.path), mentions[old, default: 0] <= 1, isGone(old),
                    !ids.values.contains(old)
                {
                    ids[item.id] = old
                    var kept = item
                    kept.id = old
                    trial.log.apply(.modified(kept))
                    continue
                }
                _ = trial.rebase(change, lookUp: lookUp)
            }
            // A file the log has at a name, which the observer has nowhere,
            // where the observer has a file the log has gone.
            if let after {
                for (logged, place) in trial.log.places where !ids.values.contains(logged) && isGone(logged) {
                    guard case .at(let path, .file, _, _) = place,
                        let (found, _) = after.places.first(where: { id, there in
                            if case .at(path, .file, _, _) = there { id != logged } else { false }
                        }),
                        ids[found] == nil, (log.places[found] ?? .gone) == .gone
                    else { continue }
                    ids[found] = logged
                }
            }
            let kept = Set(ids.values)
            let new = Set(ids.keys.filter { log.places[$0] == nil })
            // The observer is told the log's ids: where it has the items, by those.
            for (given, logged) in ids {
                if let place = observed?.places.removeValue(forKey: given) { observed?.places[logged] = place }
            }
            var steps: [Change] = []
            for change in scan {
                if case .removed(_, let id, _) = change, kept.contains(id) { continue }
                let change = change.replacingIDs(ids)
                if case .added(let item) = change, kept.contains(item.id), new.contains(where: { ids[$0] == item.id }) {
                    observed?.apply(change)
                    log.apply(.modified(item))
                    steps.append(.modified(item))
                    continue
                }
                steps += rebase(change, lookUp: lookUp)
            }
            steps += reconcile()
            return (steps, ids)
        }

        /// What to number for `change`, reported by the first scan: nothing
        /// when the log says it already; otherwise the step from where the
        /// log left the item to where the scan finds it. The result is
        /// taken as logged. `lookUp` gives an item's size where the log has
        /// it gone and the scan finds it back (`nil`: not known).
        mutating func rebase(_ change: Change, lookUp: (ItemID) -> Int64? = { _ in nil }) -> [Change] {
            observed?.apply(change)
            guard let id = change.id, let place = log.places[id] else {
                log.apply(change)
                return [change]
            }
            var result: [Change] = []
            switch (change, place) {
            case (.removed(_, _, let kind), .at(let path, _, _, _)):
                result = [.removed(path: path, id: id, kind: kind)]
            case (.removed, .gone):
                break
            case (.renamed(_, let to, _, let kind), .at(let path, _, _, _)),
                (.moved(_, let to, _, let kind), .at(let path, _, _, _)):
                result = Self.move(id, kind: kind, from: path, to: to)
            case (.renamed(_, let to, _, let kind), .gone), (.moved(_, let to, _, let kind), .gone):
                let size = kind == .file ? lookUp(id) ?? 0 : 0
                result = [.added(ChangedItem(path: to, id: id, kind: kind, size: size, isWriting: false))]
            case (.added(let item), .at(let path, _, let size, let writing)),
                (.modified(let item), .at(let path, _, let size, let writing)),
                (.duplicated(let item, _), .at(let path, _, let size, let writing)):
                result = Self.move(id, kind: item.kind, from: path, to: item.path)
                if item.kind == .file && (size != item.size || writing != item.isWriting) {
                    // The content the log last said is not the one found.
                    result.append(
                        writing && !item.isWriting && size == item.size
                            ? .finished(path: item.path, id: id, size: item.size) : .modified(item))
                }
            case (.added(let item), .gone), (.modified(let item), .gone), (.duplicated(let item, _), .gone):
                result = [.added(item)]
            case (.finished(let to, _, let size), .at(let path, _, let loggedSize, let writing)):
                result = Self.move(id, kind: .file, from: path, to: to)
                if writing || loggedSize != size { result.append(.finished(path: to, id: id, size: size)) }
            case (.finished(let to, _, let size), .gone):
                result = [.added(ChangedItem(path: to, id: id, kind: .file, size: size, isWriting: false))]
            default:
                result = [change]
            }
            for step in result { log.apply(step) }
            return result
        }

        /// Once the first scan is done: the steps that bring each item the
        /// records name from where the log has it to where the observer
        /// has it, where the two differ (the leader died with the item's
        /// last changes not committed, and the disk then agreed with the
        /// saved state). Removals first (a folder's with it), then moves
        /// whose new name is free, then arrivals; a move whose new name
        /// stays taken (names that changed hands) is a removal and an
        /// arrival. Nothing when where the observer has them is not known.
        mutating func reconcile() -> [Change] {
            guard let observed else { return [] }
            var removals: [(ItemPath, ItemID, ItemKind)] = []
            var moves: [(ItemPath, ItemPath, ItemID, ItemKind)] = []
            var arrivals: [ChangedItem] = []
            for (id, place) in log.places {
                let there = observed.places[id] ?? .gone
                switch (place, there) {
                case (.at(let path, let kind, _, _), .gone):
                    removals.append((path, id, kind))
                case (.at(let path, _, _, _), .at(let new, let kind, _, _)) where path != new:
                    moves.append((path, new, id, kind))
                case (.gone, .at(let path, let kind, let size, _)):
                    arrivals.append(ChangedItem(path: path, id: id, kind: kind, size: size ?? 0, isWriting: false))
                default:
                    break
                }
            }
            var result: [Change] = []
            func take(_ change: Change) {
                log.apply(change)
                result.append(change)
            }
            for (_, id, kind) in removals.sorted(by: { $0.0.bytes.count < $1.0.bytes.count }) {
                // (Gone already with a folder removed before it.)
                guard case .at(let now, _, _, _) = log.places[id] else { continue }
                take(.removed(path: now, id: id, kind: kind))
            }
            var waiting = moves
            while !waiting.isEmpty {
                var next: [(ItemPath, ItemPath, ItemID, ItemKind)] = []
                for (_, new, id, kind) in waiting {
                    // Where the log has it now (a folder moved before it carried it).
                    guard case .at(let now, _, _, _) = log.places[id], now != new else { continue }
                    if log.isTaken(new) {
                        next.append((now, new, id, kind))
                    } else {
                        take(
                            now.parent == new.parent
                                ? .renamed(from: now, to: new, id: id, kind: kind)
                                : .moved(from: now, to: new, id: id, kind: kind))
                    }
                }
                guard next.count == waiting.count else {
                    waiting = next
                    continue
                }
                // No new name came free: each is removed, and arrives.
                for (_, new, id, kind) in next {
                    guard case .at(let now, _, _, _) = log.places[id] else { continue }
                    take(.removed(path: now, id: id, kind: kind))
                    if case .at(_, _, let size, _) = observed.places[id] {
                        arrivals.append(ChangedItem(path: new, id: id, kind: kind, size: size ?? 0, isWriting: false))
                    }
                }
                break
            }
            for item in arrivals.sorted(by: { $0.path.bytes.count < $1.path.bytes.count })
            where !log.isTaken(item.path) {
                take(.added(item))
            }
            return result
        }

        /// The rename or move of an item from `from` to `to`; none when the same.
        private static func move(_ id: ItemID, kind: ItemKind, from: ItemPath, to: ItemPath) -> [Change] {
            guard from != to else { return [] }
            return from.parent == to.parent
                ? [.renamed(from: from, to: to, id: id, kind: kind)]
                : [.moved(from: from, to: to, id: id, kind: kind)]
        }
    }

    /// Where an item is, as a log (or an observer) says.
    enum Place: Sendable, Equatable {
        case at(path: ItemPath, kind: ItemKind, size: Int64?, writing: Bool)
        case gone
    }

    /// Items by id, where a sequence of changes leaves them.
    struct Places: Sendable {
        var places: [ItemID: Place] = [:]

        /// The file at `path`, if one is.
        func file(at path: ItemPath) -> ItemID? {
            places.first { if case .at(path, .file, _, _) = $0.value { true } else { false } }?.key
        }

        /// Whether an item is at `path`.
        func isTaken(_ path: ItemPath) -> Bool {
            places.values.contains { if case .at(path, _, _, _) = $0 { true } else { false } }
        }

        /// Puts the item `change` names where it leaves it; a folder's
        /// items go with it (moved or gone).
        mutating func apply(_ change: Change) {
            switch change {
            case .added(let item), .modified(let item), .duplicated(let item, _):
                places[item.id] = .at(path: item.path, kind: item.kind, size: item.size, writing: item.isWriting)
            case .finished(let path, let id, let size):
                places[id] = .at(path: path, kind: .file, size: size, writing: false)
            case .renamed(let from, let to, let id, let kind), .moved(let from, let to, let id, let kind):
                if case .at(_, _, let size, let writing) = places[id] {
                    places[id] = .at(path: to, kind: kind, size: size, writing: writing)
                } else {
                    places[id] = .at(path: to, kind: kind, size: nil, writing: false)
                }
                if kind == .directory { carry(under: from, to: to, except: id) }
            case .removed(let path, let id, let kind):
                places[id] = .gone
                if kind == .directory { carry(under: path, to: nil, except: id) }
            default:
                break
            }
        }

        /// The items under `folder` follow it to `destination`, or are gone with it.
        private mutating func carry(under folder: ItemPath, to destination: ItemPath?, except folderID: ItemID) {
            for (id, place) in places where id != folderID {
                guard case .at(let path, let kind, let size, let writing) = place, path != folder,
                    path.isSame(asOrUnder: folder)
                else { continue }
                guard let destination else {
                    places[id] = .gone
                    continue
                }
                let rest = path.bytes.dropFirst(folder.bytes.count)
                let moved = ItemPath(bytes: destination.bytes + rest)
                places[id] = .at(path: moved, kind: kind, size: size, writing: writing)
            }
        }
    }
}
