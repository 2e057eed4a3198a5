import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the observer's slow work in order, on a thread of its own: the
/// callbacks of ``FileObserver/observe(_:)`` (which may print, or write to
/// sockets) and the writes of the state file (which flush to disk). The
/// monitor thread only enqueues, so neither can hold up the reading of kernel
/// events, whose queue would overflow meanwhile.
///
/// Buffering policy: unbounded and lossless, in order. A dropped batch would
/// break the replay rule for that subscriber, and waiting for a slow one
/// would stall the monitor (and overflow the kernel's queue), so the queue
/// grows instead; past `warningThreshold` changes waiting it says so in the
/// log, once until it has drained.
final class DeliveryQueue: @unchecked Sendable {
    private struct Job {
        /// The number of changes the job delivers (for the backlog).
        var changes: Int
        /// `nil` ends the thread.
        var work: (@Sendable () -> Void)?
    }

    private struct State {
        var jobs: [Job?] = []
        var head = 0
        var waitingChanges = 0
        var warned = false
    }

    static let warningThreshold = 100_000

    private let state = Mutex(State())
    /// Counts the jobs queued; the thread sleeps on it. (Only touched through
    /// `sem_post` and `sem_wait`, which are thread-safe: hence `@unchecked`.)
    private let semaphore: UnsafeMutablePointer<sem_t>
    private let logger: Logger

    init(logger: Logger) {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        self.logger = logger
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Starts the thread that runs the jobs.
    func start() throws(FileWatchingError) {
        try startDetachedThread { [self] in self.run() }
    }

    /// Queues `work`, which delivers `changes` changes, after everything queued before.
    func enqueue(changes: Int = 0, _ work: @escaping @Sendable () -> Void) {
        append(Job(changes: changes, work: work))
    }

    /// Queues the end of the thread, after everything queued before.
    func stop() { append(Job(changes: 0, work: nil)) }

    /// Waits until everything queued so far has run.
    func drain() {
        let done = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(done, 0, 0)
        let box = SemaphoreBox(done)
        enqueue { sem_post(box.semaphore) }
        while sem_wait(done) != 0 {}
        sem_destroy(done)
        done.deallocate()
    }

    private func append(_ job: Job) {
        let backlog: Int? = state.withLock { state in
            state.jobs.append(job)
            state.waitingChanges += job.changes
            guard state.waitingChanges > DeliveryQueue.warningThreshold && !state.warned else { return nil }
            state.warned = true
            return state.waitingChanges
        }
        if let backlog {
            logger.warning(
                "change callbacks fall behind; their changes are queued, none is dropped",
                metadata: ["queued_changes": "\(backlog)"])
        }
        sem_post(semaphore)
    }

    private func run() {
        while true {
            while sem_wait(semaphore) != 0 {}  // EINTR
            let job = state.withLock { state in
                let job = state.jobs[state.head]!
                state.jobs[state.head] = nil
                state.head += 1
                if state.head > 1024 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            guard let work = job.work else { return }
            work()
            if job.changes > 0 {
                state.withLock { state in
                    state.waitingChanges -= job.changes
                    if state.waitingChanges == 0 { state.warned = false }
                }
            }
        }
    }
}

/// Carries a semaphore into a job (`sem_post` is thread-safe).
private struct SemaphoreBox: @unchecked Sendable {
    let semaphore: UnsafeMutablePointer<sem_t>
    init(_ semaphore: UnsafeMutablePointer<sem_t>) { self.semaphore = semaphore }
}
