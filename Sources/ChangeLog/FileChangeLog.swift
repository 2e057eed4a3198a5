import DequeModule
import Dispatch
import FileWatching
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The change log on disk, in a folder of its own (the server keeps it in
/// `.fileshare/changes/` of the shared folder): segment files of
/// checksummed records, appended to and never rewritten.
///
/// Appends are made durable by group commit: a writer queue writes what was
/// appended and flushes it with one `fdatasync`, while what arrives meanwhile
/// waits for the next flush; readers see a record only once it is durable, so
/// a number handed out is never handed out again after a crash. At opening,
/// a torn tail (a record cut short by a crash) is cut back to the last whole
/// record. The newest records are kept in memory for the many readers that
/// follow the log live; older ones are read from the files, by checkpoints.
///
/// One process writes a log at a time (a lock file says so); any number may
/// read it (``Mode/reading``), as `fileshare changes --since` does.
public final class FileChangeLog: ChangeLog {
    /// How the log is kept.
    public struct Options: Sendable {
        /// What is kept.
        public var retention: ChangeLogRetention
        /// The size a segment file stays within: a new one is begun before
        /// a record would pass it (a single record larger than this has a
        /// segment of its own). Retention drops whole segments.
        public var segmentBytes: Int
        /// The newest records kept in memory for readers (at most this many,
        /// and at most ``memoryBytes`` of their JSON): event streams that
        /// follow the log, even a burst behind, read them without decoding
        /// the files.
        public var memoryRecords: Int
        /// The JSON bytes of the records kept in memory, at most.
        public var memoryBytes: Int
        /// The wall clock, nanoseconds since 1970 (for retention by age; injected in tests).
        public var now: @Sendable () -> Int64

        /// Creates options; the defaults suit a server.
        public init(
            retention: ChangeLogRetention = ChangeLogRetention(), segmentBytes: Int = 32 << 20,
            memoryRecords: Int = 65_536,
            memoryBytes: Int = 24 << 20, now: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
        ) {
            self.retention = retention
            self.segmentBytes = segmentBytes
            self.memoryRecords = memoryRecords
            self.memoryBytes = memoryBytes
            self.now = now
        }
    }

    /// Whether this process writes the log or only reads it.
    public enum Mode: Sendable {
        /// Appends (one process at a time); a torn tail is cut back at opening.
        case writing
        /// Reads what was durable when it was opened; never changes a file.
        case reading
    }

    /// The wall clock in nanoseconds since 1970.
    @Sendable public static func wallClock() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    struct Waiter {
        var after: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    struct FlushWaiter {
        var target: UInt64
        var continuation: CheckedContinuation<ChangeLogError?, Never>
    }

    struct State {
        var segments: [LogSegment]
        /// The newest durable record's number.
        var latest: UInt64
        /// The number the next append gets.
        var nextSeq: UInt64
        /// Appended, not yet durable.
        var pending: [ChangeRecord] = []
        var writerBusy = false
        /// The newest durable records, oldest first, numbered without gaps.
        var recent: Deque<ChangeRecord> = []
        /// The JSON bytes of `recent`.
        var recentBytes = 0
        var waiters: [UInt64: Waiter] = [:]
        var flushWaiters: [UInt64: FlushWaiter] = [:]
        var nextKey: UInt64 = 0
        var closed = false
        /// The last write failure, until a write succeeds again.
        var failure: ChangeLogError?

        var oldest: UInt64 { min(segments.first?.firstSeq ?? latest + 1, latest + 1) }

        /// Adds durable records to those kept in memory, dropping the oldest beyond the bounds.
        mutating func keepRecent(_ records: some Collection<ChangeRecord>, options: Options) {
            recent.append(contentsOf: records)
            recentBytes += records.reduce(0) { $0 + $1.eventStreamFrame.count }
            while let first = recent.first,
                recent.count > options.memoryRecords || (recentBytes > options.memoryBytes && recent.count > 1)
            {
                recentBytes -= first.eventStreamFrame.count
                recent.removeFirst()
            }
        }
    }

    /// What only the writer queue touches: the newest segment's descriptor and size.
    struct Writer {
        var fd: Int32
        var path: String
        var size: Int64
    }

    /// The folder of the log.
    public let folder: String
    /// How it is kept.
    public let options: Options
    /// Whether this process writes it.
    public let mode: Mode
    private let state: Mutex<State>
    private let writer: Mutex<Writer?>
    /// The writer lock's descriptor, until the log is closed.
    private let lockFD: Mutex<Int32>
    private let queue = DispatchQueue(label: "fileshare.change-log.writer")
    private let logger: Logger

    /// Opens the log in `folder`, creating it when writing (and the folder is missing).
    /// - Throws: ``ChangeLogError``: `.busy` when another process writes the
    ///   log, `.notFound` when reading a log that does not exist, `.io` when
    ///   the files cannot be read or written.
    public init(folder: String, mode: Mode = .writing, options: Options = Options(), logger: Logger)
        throws(ChangeLogError)
    {
        self.folder = folder
        self.options = options
        self.mode = mode
        self.logger = logger
        var lock: Int32 = -1
        if mode == .writing {
            try LogFiles.makeFolder(folder)
            lock = try LogFiles.lockExclusively(folder + "/lock")
        }
        do {
            let (recovered, writer) = try FileChangeLog.recover(
                folder: folder, mode: mode, options: options, logger: logger)
            state = Mutex(recovered)
            self.writer = Mutex(writer)
        } catch {
            if lock >= 0 { Glibc.close(lock) }
            throw error
        }
        lockFD = Mutex(lock)
    }

    deinit { releaseFiles() }

    /// Closes the newest segment and lets go of the writer lock (once).
    private func releaseFiles() {
        if let writer = writer.withLock({ writer in
            defer { writer = nil }; return writer
        }) {
            Glibc.close(writer.fd)
        }
        let lock = lockFD.withLock { lock in
            defer { lock = -1 }; return lock
        }
        if lock >= 0 { Glibc.close(lock) }
    }

    public var latest: UInt64 { state.withLock { $0.latest } }

    public var oldest: UInt64 { state.withLock { $0.oldest } }

    public var isClosed: Bool { state.withLock { $0.closed } }

    // MARK: Appending

    @discardableResult
    public func append(_ entries: [ChangeLogEntry]) throws(ChangeLogError) -> [ChangeRecord] {
        guard mode == .writing else {
            throw ChangeLogError(code: .readOnly, message: "the change log was opened for reading")
        }
        guard !entries.isEmpty else { return [] }
        let (records, startWriter) = try state.withLock { state throws(ChangeLogError) in
            guard !state.closed else { throw ChangeLogError(code: .closed, message: "the change log is closed") }
            let first = state.nextSeq
            let records = entries.enumerated().map { ChangeRecord(seq: first + UInt64($0.offset), entry: $0.element) }
            state.pending.append(contentsOf: records)
            state.nextSeq += UInt64(entries.count)
            defer { state.writerBusy = true }
            return (records, !state.writerBusy)
        }
        if startWriter { queue.async { self.writePending() } }
        return records
    }

    /// Writes and flushes what is pending, batch after batch, until nothing is.
    private func writePending() {
        while true {
            let batch = state.withLock { state -> [ChangeRecord] in
                if state.pending.isEmpty { state.writerBusy = false }
                defer { state.pending.removeAll(keepingCapacity: true) }
                return state.pending
            }
            guard !batch.isEmpty else { return }
            // A batch larger than a segment is written in parts, each
            // published once durable: a part that fails is all that is tried again.
            var rest = batch[...]
            do {
                while !rest.isEmpty {
                    let written = try writeDurably(rest)
                    publish(rest.prefix(written))
                    rest = rest.dropFirst(written)
                }
            } catch  where error.code == .closed {
                let lost = state.withLock { state in
                    defer {
                        state.pending.removeAll()
                        state.writerBusy = false
                    }
                    return rest.count + state.pending.count
                }
                logger.error("change log closed before records could be written", metadata: ["records": "\(lost)"])
                return
            } catch {
                let waiters = state.withLock { state in
                    state.pending.insert(contentsOf: rest, at: 0)
                    state.failure = error
                    defer { state.flushWaiters.removeAll() }
                    return state.flushWaiters.values.map(\.continuation)
                }
                for waiter in waiters { waiter.resume(returning: error) }
                logger.error(
                    "cannot write the change log; trying again in a second",
                    metadata: ["folder": "\(folder)", "error": "\(error.message)"])
                queue.asyncAfter(deadline: .now() + .seconds(1)) { self.writePending() }
                return
            }
        }
    }

    /// Writes and flushes the first of `records` that fit in the newest
    /// segment (at least one: a record larger than a segment has one of its
    /// own), beginning the next segment first when not even one fits;
    /// answers how many it wrote.
    private func writeDurably(_ records: ArraySlice<ChangeRecord>) throws(ChangeLogError) -> Int {
        guard var current = writer.withLock({ $0 }) else {
            throw ChangeLogError(code: .closed, message: "the change log is closed")
        }
        let limit = Int64(options.segmentBytes)
        let empty = Int64(RecordCodec.headerSize)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(records.count * 256, options.segmentBytes))
        var offsets: [Int] = []
        for record in records {
            let before = bytes.count
            RecordCodec.encode(record, into: &bytes)
            // Too large for what is left, unless first in its segment.
            if current.size + Int64(bytes.count) > limit && current.size + Int64(before) > empty {
                bytes.removeLast(bytes.count - before)
                guard offsets.isEmpty else { break }
                current = try beginSegment(firstSeq: record.seq, time: record.time, after: current)
                RecordCodec.encode(record, into: &bytes)
            }
            offsets.append(before)
            // Past the limit only for a record alone in its segment.
            if current.size + Int64(bytes.count) >= limit { break }
        }
        do {
            try LogFiles.write(current.fd, bytes, at: current.size, path: current.path)
            try LogFiles.syncData(current.fd, path: current.path)
        } catch {
            // What was written in part is written over by the next try.
            try? LogFiles.truncate(current.fd, to: current.size, path: current.path)
            throw error
        }
        let start = current.size
        current.size += Int64(bytes.count)
        writer.withLock { $0 = current }
        let written = records.prefix(offsets.count)
        state.withLock { state in
            guard !state.segments.isEmpty else { return }
            let last = state.segments.count - 1
            if state.segments[last].firstTime == nil { state.segments[last].firstTime = written.first?.time }
            for (record, offset) in zip(written, offsets) {
                state.segments[last].noteOffset(start + Int64(offset), of: record.seq)
            }
        }
        return offsets.count
    }

    /// Closes the newest segment (already flushed) and begins the next.
    private func beginSegment(firstSeq: UInt64, time: Int64, after current: Writer) throws(ChangeLogError) -> Writer {
        let next = try FileChangeLog.createSegment(folder: folder, firstSeq: firstSeq)
        Glibc.close(current.fd)
        writer.withLock { $0 = next }
        state.withLock { $0.segments.append(LogSegment(firstSeq: firstSeq, firstTime: time)) }
        return next
    }

    /// Makes durable records readable, wakes who waits for them, and drops
    /// what the count bound no longer keeps (counting needs no disk, so it
    /// goes at once; the age bound waits for ``trim()``).
    private func publish(_ records: ArraySlice<ChangeRecord>) {
        let retention = options.retention
        let (waiters, flushed, dropped) = state.withLock { state in
            state.latest = records[records.endIndex - 1].seq
            state.failure = nil
            state.keepRecent(records, options: options)
            let waiters = state.waiters.values.map(\.continuation)
            state.waiters.removeAll()
            var flushed: [CheckedContinuation<ChangeLogError?, Never>] = []
            for (key, waiter) in state.flushWaiters where waiter.target <= state.latest {
                flushed.append(waiter.continuation)
                state.flushWaiters.removeValue(forKey: key)
            }
            // A segment goes once the records after it are enough on their own.
            let dropped = FileChangeLog.dropSegments(&state) { _, next, latest in
                latest - (next.firstSeq - 1) >= retention.maxRecords
            }
            return (waiters, flushed, dropped)
        }
        for waiter in waiters { waiter.resume() }
        for waiter in flushed { waiter.resume(returning: nil) }
        removeFiles(of: dropped)
    }

    /// Makes everything appended before the call durable, on the calling
    /// thread (for a thread that may block, such as the observer's
    /// delivery thread before it saves its state; never from a task).
    public func flushNow() {
        guard mode == .writing else { return }
        queue.sync { if state.withLock({ !$0.pending.isEmpty }) { writePending() } }
    }

    public func flush() async throws(ChangeLogError) {
        let key = state.withLock { state in
            state.nextKey += 1
            return state.nextKey
        }
        let failure: ChangeLogError? = await withCheckedContinuation { continuation in
            let now: ChangeLogError?? = state.withLock { state in
                let target = state.nextSeq - 1
                if state.latest >= target { return .some(nil) }
                if state.closed && !state.writerBusy { return .some(state.failure) }
                state.flushWaiters[key] = FlushWaiter(target: target, continuation: continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        if let failure { throw failure }
    }

    public func close() {
        let alreadyClosed = state.withLock { state in
            defer { state.closed = true }
            return state.closed
        }
        guard !alreadyClosed else { return }
        // What was appended is written before the log lets go.
        if mode == .writing { queue.sync { if state.withLock({ !$0.pending.isEmpty }) { writePending() } } }
        let (waiters, flushWaiters, failure) = state.withLock { state in
            defer {
                state.waiters.removeAll()
                state.flushWaiters.removeAll()
            }
            return (
                state.waiters.values.map(\.continuation), state.flushWaiters.values.map(\.continuation), state.failure
            )
        }
        for waiter in waiters { waiter.resume() }
        for waiter in flushWaiters { waiter.resume(returning: failure) }
        // Another process (a restarted server) may write the log from now on.
        queue.sync { releaseFiles() }
    }

    // MARK: Reading

    public func waitForRecords(after cursor: UInt64) async {
        let key = state.withLock { state in
            state.nextKey += 1
            return state.nextKey
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.latest > cursor || state.closed || Task.isCancelled { return true }
                    state.waiters[key] = Waiter(after: cursor, continuation: continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.continuation.resume()
        }
    }

    enum ReadPlan {
        case done(ChangeLogPage)
        case disk(segments: [LogSegment], cursor: UInt64, latest: UInt64)
    }

    public func read(after cursor: UInt64?, limit: Int) async throws(ChangeLogError) -> ChangeLogPage {
        switch plan(after: cursor, limit: max(1, limit)) {
        case .done(let page): return page
        case .disk(let segments, let cursor, let latest):
            // Reading old segments blocks: off the cooperative pool (`runBlocking`).
            let result: Result<[ChangeRecord], ChangeLogError> = await runBlocking {
                do throws(ChangeLogError) {
                    return .success(try self.readFiles(segments, after: cursor, limit: max(1, limit), latest: latest))
                } catch {
                    return .failure(error)
                }
            }
            let records: [ChangeRecord]
            switch result {
            case .success(let found): records = found
            case .failure(let error) where error.code == .notFound:
                // Retention removed the segment meanwhile.
                let bounds = state.withLock { ($0.oldest, $0.latest) }
                return .expired(oldest: bounds.0, latest: bounds.1)
            case .failure(let error): throw error
            }
            return .records(records, next: records.last?.seq ?? cursor)
        }
    }

    /// Reads synchronously (for the command line, which has nothing else to do meanwhile).
    public func readNow(after cursor: UInt64?, limit: Int) throws(ChangeLogError) -> ChangeLogPage {
        switch plan(after: cursor, limit: max(1, limit)) {
        case .done(let page): return page
        case .disk(let segments, let cursor, let latest):
            let records = try readFiles(segments, after: cursor, limit: max(1, limit), latest: latest)
            return .records(records, next: records.last?.seq ?? cursor)
        }
    }

    private func plan(after cursor: UInt64?, limit: Int) -> ReadPlan {
        state.withLock { state in
            let oldest = state.oldest
            let cursor = cursor ?? oldest - 1
            if cursor > state.latest || cursor + 1 < oldest {
                return .done(.expired(oldest: oldest, latest: state.latest))
            }
            if cursor == state.latest { return .done(.records([], next: cursor)) }
            if let first = state.recent.first, first.seq <= cursor + 1 {
                let start = Int(cursor + 1 - first.seq)
                let end = min(state.recent.count, start + limit)
                let records = Array(state.recent[start..<end])
                return .done(.records(records, next: records.last!.seq))
            }
            return .disk(segments: state.segments, cursor: cursor, latest: state.latest)
        }
    }

    /// Up to `limit` records after `cursor`, and no further than `latest`, from the files.
    private func readFiles(_ segments: [LogSegment], after cursor: UInt64, limit: Int, latest: UInt64)
        throws(ChangeLogError) -> [ChangeRecord]
    {
        guard var index = segments.lastIndex(where: { $0.firstSeq <= cursor + 1 }) else { return [] }
        var records: [ChangeRecord] = []
        while index < segments.count && records.count < limit {
            let segment = segments[index]
            let path = folder + "/" + segment.fileName
            let fd = try LogFiles.open(path, O_RDONLY)
            defer { Glibc.close(fd) }
            var scanner = SegmentScanner(fd: fd, path: path, offset: segment.startOffset(for: cursor + 1))
            var learned: [(seq: UInt64, offset: Int64)] = []
            scanning: while records.count < limit {
                switch try scanner.next() {
                case .record(let record, let offset):
                    if record.seq % LogSegment.checkpointEvery == 0 { learned.append((record.seq, offset)) }
                    if record.seq > latest { break scanning }
                    if record.seq > cursor { records.append(record) }
                case .end:
                    break scanning
                }
            }
            if !learned.isEmpty { remember(learned, in: segment.firstSeq) }
            index += 1
        }
        if let first = records.first, first.seq != cursor + 1 {
            throw ChangeLogError(
                code: .damaged,
                message: "the change log in \(folder) skips from \(cursor) to \(first.seq): a segment is damaged",
                path: folder)
        }
        return records
    }

    private func remember(_ checkpoints: [(seq: UInt64, offset: Int64)], in firstSeq: UInt64) {
        state.withLock { state in
            guard let index = state.segments.firstIndex(where: { $0.firstSeq == firstSeq }) else { return }
            for checkpoint in checkpoints { state.segments[index].noteOffset(checkpoint.offset, of: checkpoint.seq) }
        }
    }

    // MARK: Retention

    public func trim() async throws(ChangeLogError) {
        guard mode == .writing else { return }
        let segments = state.withLock { $0.segments }
        guard segments.count > 1 else { return }
        // The first record's time of each segment after the first bounds
        // the age of the one before it.
        var times: [UInt64: Int64] = [:]
        for segment in segments.dropFirst() {
            if let time = segment.firstTime {
                times[segment.firstSeq] = time
            } else if let time = try firstTime(of: segment) {
                times[segment.firstSeq] = time
            }
        }
        let retention = options.retention
        let oldestKept = options.now() - retention.maxAgeSeconds * 1_000_000_000
        let dropped = state.withLock { state in
            FileChangeLog.dropSegments(&state) { segment, next, latest in
                latest - (next.firstSeq - 1) >= retention.maxRecords
                    || (times[next.firstSeq].map { $0 < oldestKept } ?? false)
            }
        }
        removeFiles(of: dropped)
    }

    /// Removes the oldest segments while `drops` says so of the oldest one
    /// (given it, the segment after it, and the newest number); never the newest segment.
    private static func dropSegments(
        _ state: inout State, while drops: (LogSegment, LogSegment, UInt64) -> Bool
    ) -> [LogSegment] {
        var dropped: [LogSegment] = []
        while state.segments.count > 1 && drops(state.segments[0], state.segments[1], state.latest) {
            dropped.append(state.segments.removeFirst())
        }
        return dropped
    }

    private func removeFiles(of segments: [LogSegment]) {
        guard !segments.isEmpty else { return }
        for segment in segments { unlink(folder + "/" + segment.fileName) }
        LogFiles.syncFolder(folder)
        logger.info("change log trimmed", metadata: ["segments": "\(segments.count)", "oldest": "\(oldest)"])
    }

    private func firstTime(of segment: LogSegment) throws(ChangeLogError) -> Int64? {
        let path = folder + "/" + segment.fileName
        guard let fd = try? LogFiles.open(path, O_RDONLY) else { return nil }
        defer { Glibc.close(fd) }
        var scanner = SegmentScanner(fd: fd, path: path, offset: Int64(RecordCodec.headerSize))
        guard case .record(let record, _) = try scanner.next() else { return nil }
        let time = record.time
        state.withLock { state in
            if let index = state.segments.firstIndex(where: { $0.firstSeq == segment.firstSeq }) {
                state.segments[index].firstTime = time
            }
        }
        return time
    }
}

extension FileChangeLog {
    /// Where the server keeps the log of a shared folder: `.fileshare/changes` inside it.
    public static func folder(forSharedFolder root: String) -> String {
        folder(forPrivateFolder: (root.hasSuffix("/") ? String(root.dropLast()) : root) + "/.fileshare")
    }

    /// The log's folder in the server's state folder at `privatePath`
    /// (`.fileshare` inside the shared folder, or the one a read-only share keeps elsewhere).
    public static func folder(forPrivateFolder privatePath: String) -> String { privatePath + "/changes" }
}
