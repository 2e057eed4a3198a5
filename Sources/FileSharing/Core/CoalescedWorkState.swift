/// Which making of an answer each request gets: the state of
/// ``CoalescedWork``, without its tasks.
///
/// At most one making per key runs, and at most one more is queued behind
/// it. A request that arrives while nothing is made starts a making; one
/// that arrives while a making runs waits for the queued one (queuing it if
/// there is none), which begins only after the running one ends. So every
/// request gets an answer whose making began after the request arrived —
/// never an older one — and any number of requests that arrive during one
/// making share the next.
///
/// Makings are named by numbers this state hands out; the caller starts,
/// runs and ends them, and tells this state when one begins and ends.
struct CoalescedWorkState<Key: Equatable> {
    /// What an arriving request does.
    enum Arrival: Equatable {
        /// Start making `id` now.
        case start(id: Int)
        /// Make `id` once making `previous` has ended.
        case queue(id: Int, after: Int)
        /// Wait for making `id`, which has not begun yet.
        case wait(id: Int)
    }

    private struct Slot {
        var key: Key
        /// The making that runs (nil between one ending and the queued one beginning).
        var running: Int?
        /// The making that will begin when `running` ends.
        var queued: Int?
        /// The requests waiting for `queued`.
        var riders = 0
    }

    /// One slot per key with a making running or queued (few at a time: a
    /// list searched in order needs only `Equatable` keys).
    private var slots: [Slot] = []
    private var lastID = 0

    /// Keys with a making running or queued.
    var busyKeys: Int { slots.count }

    /// Requests waiting for a making that has not begun.
    var waiting: Int { slots.reduce(0) { $0 + $1.riders } }

    /// A request for `key` arrives.
    mutating func arrive(_ key: Key) -> Arrival {
        guard let index = slots.firstIndex(where: { $0.key == key }) else {
            lastID += 1
            slots.append(Slot(key: key, running: lastID, queued: nil))
            return .start(id: lastID)
        }
        if let queued = slots[index].queued {
            slots[index].riders += 1
            return .wait(id: queued)
        }
        // A slot without a queued making has a running one (see `ended`).
        guard let running = slots[index].running else {
            preconditionFailure("a slot with neither a running nor a queued making")
        }
        lastID += 1
        slots[index].queued = lastID
        slots[index].riders = 1
        return .queue(id: lastID, after: running)
    }

    /// The queued making `id` of `key` begins (its predecessor has ended).
    mutating func begin(_ id: Int, of key: Key) {
        guard let index = slots.firstIndex(where: { $0.key == key }), slots[index].queued == id else {
            preconditionFailure("making \(id) began without being queued")
        }
        slots[index].running = id
        slots[index].queued = nil
        slots[index].riders = 0
    }

    /// Making `id` of `key` ended. Its slot goes when nothing is queued behind it.
    mutating func ended(_ id: Int, of key: Key) {
        guard let index = slots.firstIndex(where: { $0.key == key }), slots[index].running == id else {
            preconditionFailure("making \(id) ended without running")
        }
        slots[index].running = nil
        if slots[index].queued == nil { slots.remove(at: index) }
    }
}
