#if canImport(Glibc)
    import Glibc
#endif

/// Threads of its own that run blocking work, at most ``maximumThreads`` at
/// once, in the order it was given: what waits on the disk or computes for
/// long stays off Swift's cooperative pool, whose few threads must never
/// wait, and off Dispatch's global queue, whose threads (about one a core
/// on Linux) the rest of the process shares. As NIOThreadPool does, and
/// Hummingbird's file I/O on it: a pool that only its own kind of work can fill.
///
/// Threads start when work waits and none is idle, and end after
/// ``idleTime`` without work, so a pool made and left costs nothing.
public final class BlockingPool: @unchecked Sendable {
    /// The pool ``runBlocking(_:)`` uses: the file system's calls, the
    /// server's disk work. Such work mostly waits for the disk, so there are
    /// more threads than cores (twice the cores, at least 16); a bound, so a
    /// flood of slow reads queues rather than starting threads without end.
    public static let shared = BlockingPool(threads: max(16, 2 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    /// The threads at once, at most.
    public let maximumThreads: Int
    /// How long a thread waits for work before it ends.
    public let idleTime: Duration
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let wake: UnsafeMutablePointer<pthread_cond_t>
    // Guarded by `mutex`: the work waiting (from `head` on), the threads
    // started and those waiting for work.
    private var queue: [@Sendable () -> Void] = []
    private var head = 0
    private var threads = 0
    private var idle = 0

    /// A pool of at most `threads` threads.
    public init(threads: Int, idleTime: Duration = .seconds(10)) {
        maximumThreads = max(1, threads)
        self.idleTime = idleTime
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        wake = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits on the monotonic clock: setting the date ends no thread early.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wake, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(wake)
        wake.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `work` on one of the pool's threads; its error is rethrown.
    public func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    /// Runs `work`, which cannot fail, on one of the pool's threads.
    public func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: work()) }
        }
    }

    /// How many threads are running now (for tests).
    package var threadCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return threads
    }

    /// Queues `job`; wakes an idle thread, or starts one while fewer than
    /// the maximum run and the work waiting outnumbers the idle threads.
    func submit(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        queue.append(job)
        let start = queue.count - head > idle && threads < maximumThreads
        if start { threads += 1 }
        if idle > 0 { pthread_cond_signal(wake) }
        pthread_mutex_unlock(mutex)
        guard start else { return }
        do {
            try startDetachedThread { [self] in work() }
        } catch {
            // No thread could start (the process is at its limit): the work
            // must not wait for one that never comes, so with none running
            // it is done here, blocking its caller.
            pthread_mutex_lock(mutex)
            threads -= 1
            let orphaned = threads == 0 ? takeAll() : []
            pthread_mutex_unlock(mutex)
            for job in orphaned { job() }
        }
    }

    /// One thread's life: the work waiting, in order, until none came for ``idleTime``.
    private func work() {
        pthread_mutex_lock(mutex)
        while true {
            if head < queue.count {
                let job = queue[head]
                head += 1
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                }
                pthread_mutex_unlock(mutex)
                job()
                pthread_mutex_lock(mutex)
                continue
            }
            idle += 1
            var until = timespec()
            clock_gettime(CLOCK_MONOTONIC, &until)
            let (seconds, attoseconds) = idleTime.components
            let nanoseconds = Int(until.tv_nsec) + Int(attoseconds / 1_000_000_000)
            until.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            until.tv_nsec = nanoseconds % 1_000_000_000
            let waited = pthread_cond_timedwait(wake, mutex, &until)
            idle -= 1
            if waited == ETIMEDOUT && head == queue.count {
                threads -= 1
                pthread_mutex_unlock(mutex)
                return
            }
        }
    }

    /// Empties the queue (the mutex held).
    private func takeAll() -> [@Sendable () -> Void] {
        defer {
            queue.removeAll()
            head = 0
        }
        return Array(queue[head...])
    }
}
