public import ChangeLog
import DequeModule
import Dispatch
public import Logging
import PostgresNIO
import Synchronization

/// The change log of one folder in the shared database, for several servers
/// of that folder: the one that writes (the leader, which runs the
/// observer) and any number that read.
///
/// All folders of an installation share one table, keyed by the folder's
/// key. The writer numbers what it is given at once, in memory, and commits
/// it in batches (group commit, like ``FileChangeLog``): each batch in one
/// transaction that also moves the folder's `last_seq` on — only from the
/// number this writer last committed, so a second writer is caught, never
/// interleaved. A record is readable once committed, so a number a reader
/// has seen is never handed out again.
///
/// Readers in other processes are woken by `NOTIFY` on ``channel`` (its
/// payload is the folder's key) and then read by cursor; a notification is
/// only a wake-up, and a poll every ``Options/pollInterval`` finds what a lost
/// one would have said. The newest records are kept in memory, so the many
/// event streams that follow the log live do not each query the database.
public final class PostgresChangeLog: ChangeLog {
    /// How the log is kept.
    public struct Options: Sendable {
        /// What ``trim()`` keeps.
        public var retention: ChangeLogRetention
        /// The newest records kept in memory for readers.
        public var memoryRecords: Int
        /// The most records committed in one transaction.
        public var batchLimit: Int
        /// How often a reader looks for new records without a notification.
        public var pollInterval: Duration
        /// How long the writer waits before it tries a failed commit again.
        public var retryDelay: Duration
        /// The wall clock, nanoseconds since 1970 (for retention by age; injected in tests).
        public var now: @Sendable () -> Int64

        /// Creates options; the defaults suit a server.
        public init(
            retention: ChangeLogRetention = ChangeLogRetention(), memoryRecords: Int = 16_384, batchLimit: Int = 2_000,
            pollInterval: Duration = .seconds(1), retryDelay: Duration = .seconds(1),
            now: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
        ) {
            self.retention = retention
            self.memoryRecords = memoryRecords
            self.batchLimit = batchLimit
            self.pollInterval = pollInterval
            self.retryDelay = retryDelay
            self.now = now
        }
    }

    /// Whether this process writes the log or only reads it.
    public enum Mode: Sendable {
        /// Appends: the one writer of the folder.
        case writing
        /// Reads, and follows what the writer commits.
        case reading
        /// Follows what the writer commits, and may become the writer
        /// (``beginWriting()``): a server of a folder shared by several.
        /// Opening registers the folder.
        case following
    }

    /// The `LISTEN`/`NOTIFY` channel of every folder's log; the payload is the folder's key.
    public static let channel = "fileshare_changes"

    struct Waiter {
        var continuation: CheckedContinuation<Void, Never>
    }

    struct State {
        /// The newest committed record's number, as far as this process knows.
        var latest: UInt64
        /// The oldest kept record's number, as far as this process knows.
        var oldest: UInt64
        /// The number the next append gets (the writer's).
        var nextSeq: UInt64
        /// Appended, not yet committed.
        var pending: Deque<ChangeRecord> = []
        var writerBusy = false
        /// The newest committed records, oldest first, without gaps, the last one `latest`.
        var recent: Deque<ChangeRecord> = []
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var flushWaiters: [UInt64: (target: UInt64, continuation: CheckedContinuation<ChangeLogError?, Never>)] = [:]
        var nextKey: UInt64 = 0
        var closed = false
        /// Whether this process writes the log now (``beginWriting()`` / ``endWriting()``).
        var writing: Bool
        /// The writer's epoch its commits name (`nil`: opened for writing
        /// alone, commits checked by their numbers only).
        var epoch: Int64?
        /// The newest number the database had at this reader's last look.
        var databaseLatest: UInt64 = 0
        /// When this reader last had every record the database had.
        var caughtUpAt = ContinuousClock.now
        /// The last commit failure, until a commit succeeds again.
        var failure: ChangeLogError?
        /// Whether a reader's refresh runs, and whether another was asked for meanwhile.
        var refreshing = false
        var refreshAgain = false

        /// Adds committed records (following `latest`) to those kept in memory.
        mutating func keepRecent(_ records: some BidirectionalCollection<ChangeRecord>, limit: Int) {
            if let first = records.first, first.seq != latest + 1 { recent.removeAll() }
            recent.append(contentsOf: records)
            if let last = records.last { latest = last.seq }
            while recent.count > limit { recent.removeFirst() }
        }
    }

    /// The folder's key in the database.
    public let folder: String
    /// The database.
    public let database: Database
    /// How the log is kept.
    public let options: Options
    let state: Mutex<State>
    let logger: Logger
    /// The reader's tasks (the listener and the poll), cancelled at close.
    private let followers = Mutex<[Task<Void, Never>]>([])

    private init(
        folder: String, database: Database, mode: Mode, options: Options, logger: Logger, latest: UInt64,
        oldest: UInt64
    ) {
        self.folder = folder
        self.database = database
        self.options = options
        self.logger = logger
        state = Mutex(State(latest: latest, oldest: oldest, nextSeq: latest + 1, writing: mode == .writing))
    }

    /// Opens the log of the folder `folder` (a key: the same for every
    /// server of that folder); the schema must be migrated.
    /// - Throws: ``ChangeLogError``: `.notFound` when reading a folder that
    ///   has no log yet, `.unavailable` when the database cannot be reached.
    public static func open(
        folder: String, database: Database, mode: Mode = .writing, options: Options = Options(), logger: Logger
    ) async throws(ChangeLogError) -> PostgresChangeLog {
        let bounds = try await Queries.open(folder: folder, create: mode != .reading, in: database)
        guard let bounds else {
            throw ChangeLogError(
                code: .notFound, message: "the database \(database.url) has no change log of the folder \(folder)")
        }
        let log = PostgresChangeLog(
            folder: folder, database: database, mode: mode, options: options, logger: logger, latest: bounds.latest,
            oldest: bounds.oldest)
        if mode != .writing { log.startFollowing() }
        return log
    }

    public var latest: UInt64 { state.withLock { $0.latest } }

    public var oldest: UInt64 { state.withLock { min($0.oldest, $0.latest + 1) } }

    public var isClosed: Bool { state.withLock { $0.closed } }

    // MARK: Appending

    @discardableResult
    public func append(_ entries: [ChangeLogEntry]) throws(ChangeLogError) -> [ChangeRecord] {
        guard !entries.isEmpty else { return [] }
        let (records, startWriter) = try state.withLock { state throws(ChangeLogError) in
            guard !state.closed else { throw ChangeLogError(code: .closed, message: "the change log is closed") }
            guard state.writing else {
                throw ChangeLogError(code: .readOnly, message: "this server does not write the change log (it follows)")
            }
            if let failure = state.failure, failure.code == .busy { throw failure }
            let first = state.nextSeq
            let records = entries.enumerated().map { ChangeRecord(seq: first + UInt64($0.offset), entry: $0.element) }
            state.pending.append(contentsOf: records)
            state.nextSeq += UInt64(entries.count)
            defer { state.writerBusy = true }
            return (records, !state.writerBusy)
        }
        if startWriter { Task { await self.writePending() } }
        return records
    }

    /// Commits what is pending, batch after batch, until nothing is; a
    /// failed commit is tried again after ``Options/retryDelay``.
    private func writePending() async {
        while true {
            let (batch, epoch) = state.withLock { state -> ([ChangeRecord], Int64?) in
                if state.pending.isEmpty || !state.writing {
                    state.pending.removeAll()
                    state.writerBusy = false
                    return ([], nil)
                }
                let count = min(state.pending.count, options.batchLimit)
                defer { state.pending.removeFirst(count) }
                return (Array(state.pending.prefix(count)), state.epoch)
            }
            guard !batch.isEmpty else { return }
            let committed: [ChangeRecord]
            do {
                committed = try await Queries.commit(batch, folder: folder, epoch: epoch, in: database)
            } catch {
                let conflict = error.code == .busy
                let waiters = state.withLock { state in
                    state.failure = error
                    if conflict || !state.writing {
                        // Another writer took the numbers: these can never be committed.
                        state.pending.removeAll()
                        state.writerBusy = false
                    } else {
                        state.pending.insert(contentsOf: batch, at: 0)
                    }
                    defer { state.flushWaiters.removeAll() }
                    return state.flushWaiters.values.map(\.continuation)
                }
                for waiter in waiters { waiter.resume(returning: error) }
                if conflict {
                    logger.error(
                        "another server writes this folder's change log: this one stops writing it",
                        metadata: ["folder": "\(folder)", "lost": "\(batch.count)"])
                    return
                }
                logger.error(
                    "cannot commit to the change log; trying again",
                    metadata: ["folder": "\(folder)", "error": "\(error.message)"])
                try? await Task.sleep(for: options.retryDelay)
                continue
            }
            publish(committed)
        }
    }

    /// Makes committed records readable and wakes who waits for them.
    func publish(_ batch: [ChangeRecord]) {
        let (waiters, flushed) = state.withLock { state in
            state.failure = nil
            let known = state.latest
            state.keepRecent(batch.drop { $0.seq <= known }, limit: options.memoryRecords)
            if state.oldest > state.latest { state.oldest = batch[0].seq }
            let waiters = Array(state.waiters.values)
            state.waiters.removeAll()
            var flushed: [CheckedContinuation<ChangeLogError?, Never>] = []
            for (key, waiter) in state.flushWaiters where waiter.target <= state.latest {
                flushed.append(waiter.continuation)
                state.flushWaiters.removeValue(forKey: key)
            }
            return (waiters, flushed)
        }
        for waiter in waiters { waiter.resume() }
        for waiter in flushed { waiter.resume(returning: nil) }
    }

    public func flush() async throws(ChangeLogError) {
        let key = state.withLock { state in
            state.nextKey += 1
            return state.nextKey
        }
        let failure: ChangeLogError? = await withCheckedContinuation { continuation in
            let now: ChangeLogError?? = state.withLock { state in
                let target = state.nextSeq - 1
                if state.latest >= target || !state.writing { return .some(nil) }
                if !state.writerBusy { return .some(state.failure) }
                state.flushWaiters[key] = (target, continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        if let failure { throw failure }
    }

    /// Waits on the calling thread until everything appended before the
    /// call is committed, or a commit failed (for a thread that may block,
    /// such as the observer's delivery thread before it saves its state;
    /// never from a task).
    public func flushNow() {
        let done = DispatchSemaphore(value: 0)
        Task {
            try? await self.flush()
            done.signal()
        }
        done.wait()
    }

    public func close() {
        let (waiters, tasks) = state.withLock { state in
            defer {
                state.closed = true
                state.waiters.removeAll()
            }
            return (state.closed ? [] : Array(state.waiters.values), followers.withLock { $0 })
        }
        for task in tasks { task.cancel() }
        // What was appended is still committed (``flush()`` waits for it).
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Waiting

    public func waitForRecords(after cursor: UInt64) async {
        let key = state.withLock { state in
            state.nextKey += 1
            return state.nextKey
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.latest > cursor || state.closed || Task.isCancelled { return true }
                    state.waiters[key] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
        }
    }

    // MARK: Following the writer

    /// Starts the reader's listener and poll.
    func startFollowing() {
        guard followers.withLock({ $0.isEmpty }), !isClosed else { return }
        let listener = Task { await self.listen() }
        let poll = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: self.options.pollInterval)
                await self.refresh()
            }
        }
        followers.withLock { $0 = [listener, poll] }
    }

    /// Listens on ``channel`` on a connection of its own, refreshing on
    /// each notification of this folder; connects again after a failure.
    private func listen() async {
        while !Task.isCancelled {
            do {
                try await database.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        // Listening from here on: what was committed before is read now.
                        await self.refresh()
                        for try await notification in notifications where notification.payload == self.folder {
                            await self.refresh()
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("change log listener lost its connection", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: options.pollInterval)
        }
    }

    /// Reads what was committed after ``latest`` and publishes it; one
    /// refresh at a time (one asked for meanwhile runs after it). The writer
    /// has nothing to read: it knows what it committed.
    func refresh() async {
        if state.withLock({ $0.writing }) { return }
        let start = state.withLock { state in
            if state.refreshing {
                state.refreshAgain = true
                return false
            }
            state.refreshing = true
            return true
        }
        guard start else { return }
        while true {
            let after = latest
            do {
                let (records, bounds) = try await Queries.records(
                    folder: folder, after: after, limit: options.batchLimit, in: database)
                state.withLock { state in
                    state.oldest = bounds.oldest
                    state.databaseLatest = bounds.latest
                    if (records.last?.seq ?? state.latest) >= bounds.latest { state.caughtUpAt = .now }
                    // Retention may have removed what follows `latest`: start over from the kept records.
                    if let first = records.first, first.seq != state.latest + 1 { state.recent.removeAll() }
                }
                if !records.isEmpty { publish(records) }
                if records.count == options.batchLimit { continue }
            } catch {
                logger.debug("cannot read the change log", metadata: ["error": "\(error.message)"])
            }
            let again = state.withLock { state in
                defer { state.refreshAgain = false }
                if !state.refreshAgain { state.refreshing = false }
                return state.refreshAgain
            }
            if !again { return }
        }
    }
}
