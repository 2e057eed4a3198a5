import FileWatching

/// The logic of the thumbnails made ahead of time, with no I/O and no
/// lock: a bounded queue of items, each queued once, worked through by one
/// worker at a time. `ThumbnailsAhead` holds it under a lock and performs
/// what it says.
struct ThumbnailsAheadQueue<Job: Sendable>: Sendable {
    /// The items waiting, at most.
    let capacity: Int
    private var pending: [(key: ItemID, job: Job)] = []
    /// Where the first waiting item is in `pending` (taken items are
    /// dropped from the front in bulk, not one by one).
    private var head = 0
    /// The items waiting or being made: each once, however often its folder is listed.
    private var known: Set<ItemID> = []
    private var working = false
    private var stopped = false

    init(capacity: Int) { self.capacity = max(0, capacity) }

    /// What `offer` did.
    struct Offered: Equatable {
        /// Queued now.
        var queued = 0
        /// Already waiting or being made.
        var alreadyKnown = 0
        /// Left out: the queue was full (or stopped).
        var dropped = 0
        /// Whether a worker must be started (none is running).
        var startWorker = false
    }

    /// How many items wait.
    var count: Int { pending.count - head }

    /// Queues what fits of `jobs`.
    mutating func offer(_ jobs: [(key: ItemID, job: Job)]) -> Offered {
        var offered = Offered()
        for (key, job) in jobs {
            if known.contains(key) {
                offered.alreadyKnown += 1
            } else if stopped || count >= capacity {
                offered.dropped += 1
            } else {
                known.insert(key)
                pending.append((key, job))
                offered.queued += 1
            }
        }
        if offered.queued > 0 && !working {
            working = true
            offered.startWorker = true
        }
        return offered
    }

    /// The next item for the worker, or `nil`: then the worker ends, and
    /// the next offer starts another.
    mutating func next() -> (key: ItemID, job: Job)? {
        guard !stopped, head < pending.count else {
            working = false
            pending.removeAll(keepingCapacity: false)
            head = 0
            return nil
        }
        let next = pending[head]
        head += 1
        if head >= 256 && head * 2 >= pending.count {
            pending.removeFirst(head)
            head = 0
        }
        return next
    }

    /// The worker is done with `key` (made, kept already, or failed): a
    /// later listing may queue it again (a new version of the file).
    mutating func finished(_ key: ItemID) {
        known.remove(key)
    }

    /// Drops what waits and takes nothing more.
    mutating func stop() {
        stopped = true
        for (key, _) in pending[head...] { known.remove(key) }
        pending.removeAll()
        head = 0
    }
}
