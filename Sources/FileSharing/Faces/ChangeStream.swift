import Accounts
import ChangeLog
import FileWatching
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// The change log over HTTP: `GET /api/changes?since=SEQ&limit=N` answers a
/// page of records, and `GET /api/events` streams them as server-sent events
/// (`id: SEQ`, `data: RECORD`), from `Last-Event-ID` (or `?since=`) when the
/// client gives one, else from now.
///
/// Each event stream reads the log by its own cursor: what is pending for
/// a client goes out in one write (up to ``pageRecords`` records), and a
/// client that reads slowly is simply further behind in the log, served
/// from memory or the files at its own pace. No client has a queue that
/// others fill, so none is starved and none can make the server hold an
/// unbounded backlog.
final class ChangeStream: Sendable {
    let log: any ChangeLog
    private let open = Atomic<Int>(0)

    init(log: any ChangeLog) { self.log = log }

    /// The event streams open now.
    var openStreams: Int { open.load(ordering: .relaxed) }

    /// Records per write to one client; small enough that hundreds of
    /// clients take turns quickly, large enough to make each write count.
    static let pageRecords = 128
    /// A page's bytes at most (a few records can be long).
    static let pageBytes = 64 * 1024
    /// A comment is sent on a quiet stream this often, so proxies keep it open.
    static let keepAliveInterval: Duration = .seconds(15)
    /// How long `/api/changes` waits for the change log at most (a shared
    /// database that cannot be reached holds a read back until then).
    static let databaseTimeLimit: Duration = .seconds(5)
    /// The largest `limit` of `/api/changes`.
    static let maxLimit = 10_000

    // MARK: /api/changes

    /// - Parameter visibility: What the requester may be told (``ChangeVisibility/Scope``).
    func changes(since: String?, limit: String?, visibility: ChangeVisibility.Scope) async throws -> Response {
        let cursor = try since.map { text throws(ShareError) -> UInt64 in
            guard let value = UInt64(text) else {
                throw ShareError(
                    .badRequest, "since must be a change number (0 or more), such as the \"next\" of the last answer")
            }
            return value
        }
        let count =
            try limit.map { text throws(ShareError) -> Int in
                guard let value = Int(text), (1...ChangeStream.maxLimit).contains(value) else {
                    throw ShareError(.badRequest, "limit must be a number from 1 to \(ChangeStream.maxLimit)")
                }
                return value
            } ?? 1000
        let page: ChangeLogPage
        do {
            let log = self.log
            let read = try await withTimeLimit(ChangeStream.databaseTimeLimit) {
                try await log.read(after: cursor, limit: count)
            }
            guard let read else {
                throw ShareError(
                    .serviceUnavailable,
                    "the change log's database does not answer within 5 seconds; try again later")
            }
            page = read
        } catch let error as ShareError {
            throw error
        } catch let error as ChangeLogError {
            // Kept in a database that does not answer: a reason, never a wrong page.
            if error.code == .unavailable {
                throw ShareError(.serviceUnavailable, "the change log's database cannot be reached: \(error.message)")
            }
            throw ShareError(.internalError, "the change log cannot be read: \(error.message)")
        } catch {
            throw ShareError(.internalError, "the change log cannot be read: \(error)")
        }
        switch page {
        case .expired(let oldest, let latest):
            return .json(
                status: .gone, body: ChangeStream.resyncBody(cursor: cursor ?? 0, oldest: oldest, latest: latest))
        case .records(let all, let next):
            // A page may hold fewer records than asked once filtered; `next` still goes past all of them.
            let records = visibility.filter(all)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(32 + records.reduce(0) { $0 + $1.json.count + 1 })
            bytes.append(contentsOf: "{\"changes\":[".utf8)
            for (index, record) in records.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: record.json)
            }
            bytes.append(contentsOf: "],\"next\":\(next)}".utf8)
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/json; charset=utf-8", .contentLength: String(bytes.count),
                    .cacheControl: "no-store",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// `{"error":…,"resync":true,"oldest":N,"latest":N}`: the answer to a cursor the log no longer serves.
    static func resyncBody(cursor: UInt64, oldest: UInt64, latest: UInt64) -> String {
        let reason =
            cursor > latest
            ? "change \(cursor) is newer than the newest in this folder's log (\(latest)): the log was reset"
            : "the log keeps changes from \(oldest) on; those between \(cursor) and \(oldest) are gone"
        return "{\"error\":" + JSONText.quoted(reason + "; list the folder again, then go on from \(latest)")
            + ",\"resync\":true,\"oldest\":\(oldest),\"latest\":\(latest)}"
    }

    // MARK: /api/events

    /// The stream's first cursor: `Last-Event-ID` (a reconnecting
    /// `EventSource`), else `since`, else the newest record (only what comes).
    func startCursor(lastEventID: String?, since: String?) throws(ShareError) -> UInt64 {
        // A malformed since is refused even beside a Last-Event-ID that makes it unused.
        let sinceValue = try since.map { text throws(ShareError) -> UInt64 in
            guard let value = UInt64(text) else {
                throw ShareError(.badRequest, "since must be a change number (0 or more)")
            }
            return value
        }
        if let lastEventID, let value = UInt64(lastEventID.trimmingCharacters()) { return value }
        return sinceValue ?? log.latest
    }

    func events(after start: UInt64, visibility: ChangeVisibility.Scope) -> Response {
        let log = self.log
        let body = ResponseBody { [self] writer in
            let stop = StreamStop()
            open.add(1, ordering: .relaxed)
            defer { open.subtract(1, ordering: .relaxed) }
            // The stream ends when the server shuts down, so the shutdown
            // does not wait for clients that never hang up.
            try await withGracefulShutdownHandler {
                var buffer = ByteBuffer()
                buffer.writeString("retry: 1000\n\n")
                try await writer.write(buffer)
                var cursor = start
                while !stop.isStopped && !Task.isCancelled {
                    let page: ChangeLogPage
                    do {
                        page = try await log.read(after: cursor, limit: ChangeStream.pageRecords)
                    } catch {
                        // A log that cannot be read ends the stream; the client reconnects from where it was.
                        break
                    }
                    switch page {
                    case .expired(let oldest, let latest):
                        var buffer = ByteBuffer()
                        buffer.writeString("event: resync\nid: \(latest)\ndata: ")
                        buffer.writeString(ChangeStream.resyncBody(cursor: cursor, oldest: oldest, latest: latest))
                        buffer.writeString("\n\n")
                        try await writer.write(buffer)
                        cursor = latest
                    case .records(let records, _) where records.isEmpty:
                        if log.isClosed { return }
                        if await !ChangeStream.wait(log, after: cursor, stop: stop) {
                            try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    case .records(let all, _):
                        let records = visibility.filter(all)
                        guard !records.isEmpty else {
                            // Nothing of this page is the client's: on past it, unsent.
                            cursor = all.last?.seq ?? cursor
                            continue
                        }
                        var page = ChangeStream.frames(records)
                        // Filtered records hidden after the last one sent are passed too.
                        if page.last == records.last?.seq, let last = all.last?.seq { page.last = last }
                        try await writer.write(page.buffer)
                        cursor = page.last
                        // A write to a writable socket returns without
                        // suspending, and a read from memory does too: without
                        // this the stream would send page after page while
                        // the other streams wait for the few threads of the
                        // pool. Each stream sends one page per turn.
                        await Task.yield()
                    }
                }
            } onGracefulShutdown: {
                stop.stop()
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                .init("X-Accel-Buffering")!: "no",
            ],
            body: body)
    }

    /// The records as server-sent events in one buffer, up to ``pageBytes``
    /// (and at least one record), and the number of the last one in it.
    static func frames(_ records: [ChangeRecord]) -> (buffer: ByteBuffer, last: UInt64) {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(min(pageBytes + 4096, records.reduce(0) { $0 + $1.eventStreamFrame.count }))
        var last: UInt64 = 0
        for record in records {
            buffer.writeBytes(record.eventStreamFrame)
            last = record.seq
            if buffer.readableBytes >= pageBytes { break }
        }
        return (buffer, last)
    }

    /// Waits for a record after `cursor`; `false` when the keep-alive interval passed first.
    static func wait(_ log: any ChangeLog, after cursor: UInt64, stop: StreamStop) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await log.waitForRecords(after: cursor)
                return true
            }
            group.addTask {
                try? await Task.sleep(for: keepAliveInterval)
                return false
            }
            group.addTask {
                await stop.wait()
                return true
            }
            let first = await group.next() ?? true
            group.cancelAll()
            return first
        }
    }
}

/// Ends one event stream at shutdown: a flag its loop checks, and a wait its idle wait races.
final class StreamStop: Sendable {
    private let state = Mutex<(stopped: Bool, waiters: [UInt64: CheckedContinuation<Void, Never>], next: UInt64)>(
        (false, [:], 0))

    var isStopped: Bool { state.withLock { $0.stopped } }

    func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once stopped, or when the task is cancelled.
    func wait() async {
        let key = state.withLock { state in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.stopped || Task.isCancelled { return true }
                    state.waiters[key] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
        }
    }
}
