import Synchronization

/// Tells whether a download is a new one or another piece of one already
/// counted: the same client, the same file, the same content (validator),
/// within ``window``. A client fetching a file in many ranges (a video
/// player, a download manager) is one download, not one per range.
///
/// Pure: time is given to every call. At most ``capacity`` keys are
/// remembered, in two generations: when the newer holds half of them, it
/// becomes the older and the older is forgotten whole. So the newest
/// `capacity / 2` keys are always remembered, and each download costs the
/// same however many were remembered (forgetting the oldest key one at a
/// time meant looking through them all, on every new download of a busy server).
struct DownloadDedup: Sendable {
    /// A download: the client, the file and its validator, as one 64-bit
    /// digest (`Hasher`, seeded at random per process). Every download of
    /// a file through the event loop asks here, and keeping the three
    /// strings made each ask hash, compare and copy them, a third of the
    /// audit's cost per small `GET` (`perf`). Two downloads with one digest
    /// (about one chance in 10^11 among the 10,000 kept) would only count
    /// a range of the second as a piece of the first.
    struct Key: Hashable, Sendable {
        let digest: Int

        init(client: String, file: String, validator: String) {
            var hasher = Hasher()
            hasher.combine(client)
            hasher.combine(file)
            hasher.combine(validator)
            digest = hasher.finalize()
        }
    }

    let window: Duration
    let capacity: Int
    private var newer: [Key: ContinuousClock.Instant] = [:]
    private var older: [Key: ContinuousClock.Instant] = [:]

    init(window: Duration = .seconds(600), capacity: Int = 10_000) {
        self.window = window
        self.capacity = max(2, capacity)
    }

    /// Whether this download is new at `now` (then it is remembered).
    mutating func isNew(_ key: Key, now: ContinuousClock.Instant) -> Bool {
        // One hash and probe for the common case, a key already in the newer
        // generation: `updateValue` stores and returns the old value at once.
        let last = newer.updateValue(now, forKey: key) ?? older[key]
        if newer.count >= capacity / 2 {
            older = newer
            newer = [:]
        }
        guard let last else { return true }
        return now - last >= window
    }

    /// The keys remembered (one refreshed since its generation ended counts twice).
    var count: Int { newer.count + older.count }
}

/// A ``DownloadDedup`` shared by the requests of a server.
final class DownloadCounter: Sendable {
    private let state: Mutex<DownloadDedup>

    init(_ dedup: DownloadDedup = DownloadDedup()) { state = Mutex(dedup) }

    /// Whether this download is new now (then it is remembered).
    func isNew(_ key: DownloadDedup.Key, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { $0.isNew(key, now: now) }
    }

    /// The keys remembered.
    var count: Int { state.withLock { $0.count } }
}
