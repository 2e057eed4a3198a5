/// The index changes that turn one list into the next, for a table or
/// collection view to animate (the order of `UITableView`'s and
/// `UICollectionView`'s batch updates).
///
/// To apply them, as ``apply(to:newItems:)`` does:
/// 1. remove the items at `removals` and at every move's `from` — indices in
///    the old list — highest first;
/// 2. insert the new list's items at `insertions` and at every move's `to` —
///    indices in the new list — lowest first;
/// 3. replace the items at `updates` — indices in the new list, of items
///    that neither came nor moved — with their new values.
public struct ListChanges: Sendable, Hashable {
    /// Indices in the old list of items that are gone.
    public var removals: [Int]
    /// Indices in the new list of items that are new.
    public var insertions: [Int]
    /// Items that moved: index in the old list, index in the new list.
    public var moves: [Move]
    /// Indices in the new list of items that stayed in place and changed.
    public var updates: [Int]

    /// A move of one item.
    public struct Move: Sendable, Hashable {
        /// Its index in the old list.
        public var from: Int
        /// Its index in the new list.
        public var to: Int
    }

    /// Whether nothing changed.
    public var isEmpty: Bool { removals.isEmpty && insertions.isEmpty && moves.isEmpty && updates.isEmpty }

    /// The changes from `old` to `new`, items matched by `id`; as few moves
    /// as possible (the items of a longest run in the same order stay).
    public static func between<Element: Identifiable & Equatable>(_ old: [Element], _ new: [Element]) -> ListChanges {
        var oldIndex: [Element.ID: Int] = [:]
        oldIndex.reserveCapacity(old.count)
        for (index, element) in old.enumerated() { oldIndex[element.id] = index }
        var newIDs = Set<Element.ID>()
        newIDs.reserveCapacity(new.count)
        var insertions: [Int] = []
        // Old positions of the items kept, in new order.
        var kept: [(old: Int, new: Int)] = []
        for (index, element) in new.enumerated() {
            newIDs.insert(element.id)
            if let position = oldIndex[element.id] { kept.append((position, index)) } else { insertions.append(index) }
        }
        let removals = old.indices.filter { !newIDs.contains(old[$0].id) }
        let staying = longestIncreasingRun(kept.map(\.old))
        var moves: [Move] = []
        var updates: [Int] = []
        for (position, pair) in kept.enumerated() {
            if staying.contains(position) {
                if old[pair.old] != new[pair.new] { updates.append(pair.new) }
            } else {
                moves.append(Move(from: pair.old, to: pair.new))
            }
        }
        return ListChanges(removals: removals, insertions: insertions, moves: moves, updates: updates)
    }

    /// Applies the changes to `old`, taking new and moved items from `newItems`.
    public func apply<Element>(to old: [Element], newItems: [Element]) -> [Element] {
        var list = old
        var moving: [Int: Element] = [:]
        for move in moves { moving[move.to] = newItems[move.to] }
        for index in (removals + moves.map(\.from)).sorted(by: >) { list.remove(at: index) }
        for index in (insertions + moves.map(\.to)).sorted() {
            list.insert(moving[index] ?? newItems[index], at: index)
        }
        for index in updates { list[index] = newItems[index] }
        return list
    }

    /// The positions (in `values`) of a longest strictly increasing subsequence.
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        guard !values.isEmpty else { return [] }
        var tails: [Int] = []  // positions in `values`
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result = Set<Int>()
        var position = tails.last!
        while position >= 0 {
            result.insert(position)
            position = previous[position]
        }
        return result
    }
}
