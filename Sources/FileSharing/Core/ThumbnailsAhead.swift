import FileWatching
import Logging
import Synchronization

/// Thumbnails made ahead of time, in the background, for the folders people
/// list, so opening a folder of 1,000 photos does not put 1,000 cold decodes
/// in the request path. A listing only queues (a lock and an append: it is
/// never slowed); one worker task at background priority makes them, one
/// at a time, through the thumbnailers' own bounded pools, where a
/// request's thumbnail goes before it. What the bounded queue cannot hold
/// is dropped, and made when asked for.
final class ThumbnailsAhead: Sendable {
    /// One file to make the thumbnail of.
    struct Job: Sendable {
        var id: ItemID
        var path: SharePath
    }

    private let queue: Mutex<ThumbnailsAheadQueue<SharePath>>
    private let logger: Logger

    /// - Parameter capacity: The files waiting, at most.
    init(capacity: Int, logger: Logger) {
        queue = Mutex(ThumbnailsAheadQueue(capacity: capacity))
        self.logger = logger
    }

    /// Queues `jobs`; returns at once.
    /// - Parameter make: Makes and keeps one file's thumbnail (its failures
    ///   are its own); the worker this offer starts, if any, uses it until
    ///   the queue is empty.
    func offer(_ jobs: [Job], make: @escaping @Sendable (SharePath) async -> Void) {
        let offered = queue.withLock { $0.offer(jobs.map { (key: $0.id, job: $0.path) }) }
        if offered.dropped > 0 {
            logger.debug(
                "thumbnails ahead: queue full",
                metadata: ["dropped": "\(offered.dropped)", "queued": "\(offered.queued)"])
        }
        guard offered.startWorker else { return }
        // The worker makes what every listing queued, not only the one that
        // started it: it runs as the server, not as that listing's requester.
        Task(priority: .background) {
            await Requester.$current.withValue(.everyone) {
                while let next = self.queue.withLock({ $0.next() }) {
                    await make(next.job)
                    self.queue.withLock { $0.finished(next.key) }
                }
            }
        }
    }

    /// How many files wait.
    var waiting: Int { queue.withLock { $0.count } }

    /// Drops what waits; nothing more is queued (the server is stopping).
    func stop() {
        queue.withLock { $0.stop() }
    }
}
