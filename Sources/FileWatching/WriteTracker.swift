/// Which files are still being written, and when to check them again.
///
/// Pure bookkeeping: the observer core asks ``due(at:)`` for the files whose
/// settle time has passed, checks each against the file system, and reports
/// back with ``activity(on:at:closed:stamp:)`` or ``forget(_:)``.
struct WriteTracker {
    struct State {
        /// When the file last changed or was last seen to be held open.
        var lastActivity: Int64
        /// The size and modification time when last checked.
        var size: Int64
        var modified: Int64
        /// Whether the kernel reported a close after the last write, so the
        /// fallback (without read leases) may take the file as complete.
        var closed: Bool
    }

    let settle: Int64
    private(set) var states: [Tree.Index: State] = [:]
    /// A lower bound of the earliest deadline (activity only moves deadlines later).
    private var earliest: Int64 = .max

    init(settle: Int64) { self.settle = settle }

    var isEmpty: Bool { states.isEmpty }

    func isTracking(_ index: Tree.Index) -> Bool { states[index] != nil }

    /// Records writing activity on a file.
    mutating func activity(on index: Tree.Index, at now: Int64, closed: Bool, size: Int64, modified: Int64) {
        if var state = states[index] {
            state.lastActivity = now
            state.size = size
            state.modified = modified
            state.closed = closed
            states[index] = state
        } else {
            states[index] = State(lastActivity: now, size: size, modified: modified, closed: closed)
        }
        earliest = min(earliest, now + settle)
    }

    /// Records a close by the kernel without touching the activity time.
    mutating func closed(_ index: Tree.Index, at now: Int64) {
        guard states[index] != nil else { return }
        states[index]!.closed = true
        states[index]!.lastActivity = now
        earliest = min(earliest, now + settle)
    }

    func state(of index: Tree.Index) -> State? { states[index] }

    mutating func forget(_ index: Tree.Index) { states[index] = nil }

    /// The next time a check is due, if any file is tracked.
    var nextDeadline: Int64? { states.isEmpty ? nil : earliest }

    /// The files whose settle time has passed, oldest first.
    mutating func due(at now: Int64) -> [Tree.Index] {
        guard now >= earliest else { return [] }
        var result: [(Int64, Tree.Index)] = []
        var next = Int64.max
        for (index, state) in states {
            let deadline = state.lastActivity + settle
            if deadline <= now { result.append((state.lastActivity, index)) } else { next = min(next, deadline) }
        }
        earliest = next
        return result.sorted { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }.map(\.1)
    }

    /// Keeps a checked file for another settle period.
    mutating func recheck(_ index: Tree.Index, at now: Int64) {
        guard states[index] != nil else { return }
        states[index]!.lastActivity = now
        earliest = min(earliest, now + settle)
    }

    /// Re-keys tracking when the tree reuses or replaces records.
    mutating func transfer(from old: Tree.Index, to new: Tree.Index) {
        guard let state = states.removeValue(forKey: old) else { return }
        states[new] = state
    }
}
