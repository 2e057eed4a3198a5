/// Keeps a rename's two halves together across reads of the kernel's queue.
///
/// A rename queues its `IN_MOVED_FROM` and `IN_MOVED_TO` one after the
/// other from one system call, but a read can come between them: on a busy
/// machine the renaming thread may be preempted there for milliseconds.
/// Handled apart, the halves read as a removal and an arrival, and the item
/// loses its id. So the events from the first `movedFrom` without its
/// partner onwards are carried over to the next read, for at most ``wait``
/// (watchdog holds such a half back the same way).
///
/// A move out of the tree, or into a folder that is not watched (the
/// private folder's trash and versions), never gets its second half: it is
/// handled once ``wait`` has passed, or at once when a ``FileObserver/sync()``
/// asks (whatever was renamed before the sync's call has queued both halves
/// already, so nothing it covers is split). Pure: the caller reads the
/// queue and the clock.
///
/// A fixed wait alone splits a rename whose thread is held up longer than
/// it (a machine busy with many processes, or a thread reclaiming memory
/// for the second event). So before the carried events are handled, the
/// caller waits for the renames still reporting
/// (``FileSystemAccess/awaitRenames(inDirectory:identity:)``) and reads
/// the queue once more: what the renames queued is then read, and a half
/// still alone really left the tree.
struct MovePairing: Sendable {
    /// How long a `movedFrom` waits for its partner, in nanoseconds.
    let wait: Int64
    /// Events read but not handled yet: from an unpaired `movedFrom` on.
    private(set) var carried: [SourceEvent] = []
    /// When the first of ``carried`` was read.
    private var since: Int64 = 0

    init(wait: Duration = .milliseconds(50)) {
        let (seconds, attoseconds) = wait.components
        self.wait = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// When the carried events must be handled, if any are carried.
    var deadline: Int64? { carried.isEmpty ? nil : since + wait }

    /// Whether ``take(_:now:flush:)`` would now hand out a `movedFrom`
    /// without its partner, its wait over: the moment for the caller to wait
    /// for the renames still reporting, and to read again, first.
    func isDue(_ read: [SourceEvent], now: Int64) -> Bool {
        if !carried.isEmpty { return now - since >= wait }
        return wait <= 0 && Self.firstUnpairedMoveFrom(read) != nil
    }

    /// The events to handle now, in order: what was carried, then `read`,
    /// up to a `movedFrom` whose partner may still come (kept for later).
    /// With `flush`, or once the wait is over, everything.
    mutating func take(_ read: [SourceEvent], now: Int64, flush: Bool) -> [SourceEvent] {
        let wasCarrying = !carried.isEmpty
        var events = carried
        events += read
        carried = []
        guard !flush, let cut = Self.cut(events) else { return events }
        // The same first event still waiting keeps its time; a new one starts its own.
        if !(wasCarrying && cut == 0) { since = now }
        guard now - since < wait else { return events }
        carried = Array(events[cut...])
        events.removeSubrange(cut...)
        return events
    }

    /// Where to cut `events` so the part after holds every unpaired
    /// `movedFrom` and nothing of it is apart from what it goes with: the
    /// other half of each rename in it, and the arrival of an exchange
    /// (`RENAME_EXCHANGE` reports an arrival at a name, then that name's old
    /// item leaving, which the core reads as one exchange when both are in
    /// one read: ``ObserverCore/isExchange(_:at:)``).
    static func cut(_ events: [SourceEvent]) -> Int? {
        guard var cut = firstUnpairedMoveFrom(events) else { return nil }
        var moved = true
        while moved && cut > 0 {
            moved = false
            var cookies = Set<UInt32>()
            for position in cut..<events.count {
                switch events[position].kind {
                case .movedTo(let cookie): cookies.insert(cookie)
                case .movedFrom:
                    // The exchange's arrival, a few events before.
                    let window = SourceEvent.exchangeWindow
                    for earlier in max(0, position - window)..<max(0, position - window, min(position, cut)) {
                        if SourceEvent.isExchangePair(
                            arrival: events[earlier], departure: events[position], distance: position - earlier)
                        {
                            cut = earlier
                            moved = true
                        }
                    }
                default: break
                }
            }
            // The first half of a rename whose second half is carried.
            for position in 0..<cut {
                if case .movedFrom(let cookie) = events[position].kind, cookies.contains(cookie) {
                    cut = position
                    moved = true
                    break
                }
            }
        }
        return cut
    }

    /// The position of the first `movedFrom` whose `movedTo` is not in `events`.
    static func firstUnpairedMoveFrom(_ events: [SourceEvent]) -> Int? {
        unpairedMovesFrom(events).min()
    }

    /// The positions of the `movedFrom`s whose `movedTo` is not in `events`
    /// (the dictionary's own values: every read of the queue asks, and an
    /// array of them would be made for each).
    static func unpairedMovesFrom(_ events: [SourceEvent]) -> Dictionary<UInt32, Int>.Values {
        var open: [UInt32: Int] = [:]
        for (position, event) in events.enumerated() {
            switch event.kind {
            case .movedFrom(let cookie): open[cookie] = open[cookie] ?? position
            case .movedTo(let cookie): open[cookie] = nil
            default: break
            }
        }
        return open.values
    }
}
