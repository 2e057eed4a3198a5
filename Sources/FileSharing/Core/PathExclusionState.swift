/// Which of the server's changes may run now: two whose paths overlap (the
/// same path, or one under the other) run one after the other, in the order
/// they asked; changes of unrelated paths run at once. Pure: the caller
/// holds it under a lock and resumes the turns it grants (`PathExclusion`).
///
/// A waiting change also holds back the later ones that overlap it, so a
/// stream of changes to one file cannot starve a change of its folder.
struct PathExclusionState: Sendable {
    /// A change's place: given when it asks, returned when it ends.
    typealias Turn = UInt64

    private var running: [Turn: [SharePath]] = [:]
    private var waiting: [(turn: Turn, paths: [SharePath])] = []
    private var next: Turn = 0

    init() {}

    /// Asks to change `paths`; returns the turn and whether it may run now
    /// (else it is granted later, by ``finish(_:)``).
    mutating func begin(_ paths: [SharePath]) -> (turn: Turn, runsNow: Bool) {
        next += 1
        let turn = next
        if !overlapsRunning(paths) && !waiting.contains(where: { Self.overlap($0.paths, paths) }) {
            running[turn] = paths
            return (turn, true)
        }
        waiting.append((turn, paths))
        return (turn, false)
    }

    /// Ends a running change; returns the waiting turns that run now, in order.
    mutating func finish(_ turn: Turn) -> [Turn] {
        guard running.removeValue(forKey: turn) != nil else { return [] }
        var granted: [Turn] = []
        var stillWaiting: [(turn: Turn, paths: [SharePath])] = []
        for entry in waiting {
            if !overlapsRunning(entry.paths) && !stillWaiting.contains(where: { Self.overlap($0.paths, entry.paths) }) {
                running[entry.turn] = entry.paths
                granted.append(entry.turn)
            } else {
                stillWaiting.append(entry)
            }
        }
        waiting = stillWaiting
        return granted
    }

    /// How many changes run now.
    var runningCount: Int { running.count }
    /// How many changes wait.
    var waitingCount: Int { waiting.count }

    private func overlapsRunning(_ paths: [SharePath]) -> Bool {
        running.values.contains { Self.overlap($0, paths) }
    }

    /// Whether a path of one list is the same as, above or under a path of the other.
    static func overlap(_ one: [SharePath], _ other: [SharePath]) -> Bool {
        one.contains { a in other.contains { b in a.isSame(asOrUnder: b) || b.isSame(asOrUnder: a) } }
    }
}
