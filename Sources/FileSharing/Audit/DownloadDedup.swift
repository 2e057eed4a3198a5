import Synchronization

/// Tells whether a download is a new one or another piece of one already
/// counted: the same client, the same file, the same content (validator),
/// within ``window``. A client fetching a file in many ranges (a video
/// player, a download manager) is one download, not one per range.
///
/// Pure: time is given to every call. At most ``capacity`` keys are
/// remembered, the oldest forgotten first.
struct DownloadDedup: Sendable {
    struct Key: Hashable, Sendable {
        var client: String
        var file: String
        var validator: String
    }

    let window: Duration
    let capacity: Int
    private var seen: [Key: ContinuousClock.Instant] = [:]

    init(window: Duration = .seconds(600), capacity: Int = 10_000) {
        self.window = window
        self.capacity = max(1, capacity)
    }

    /// Whether this download is new at `now` (then it is remembered).
    mutating func isNew(_ key: Key, now: ContinuousClock.Instant) -> Bool {
        if let last = seen[key], now - last < window {
            seen[key] = now
            return false
        }
        seen[key] = now
        if seen.count > capacity {
            seen = seen.filter { now - $0.value < window }
            while seen.count > capacity, let oldest = seen.min(by: { $0.value < $1.value })?.key {
                seen.removeValue(forKey: oldest)
            }
        }
        return true
    }

    var count: Int { seen.count }
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
