import CFileshareShim
import FileWatching
import Foundation
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The audit: every access as a JSON line, appended to
/// `.fileshare/audit/audit.jsonl` in the shared folder, which is rotated
/// by size (`audit.1.jsonl` the newest full one, up to ``Options/keepFiles``).
///
/// Recording never waits for the disk: each event is written as its JSON
/// line into a bounded buffer that a writer task empties in batches, off
/// the request path. When the buffer is full (the disk far slower than the
/// requests), the event is dropped, counted, and the count logged once the
/// writer catches up: a request is never held back for the audit.
///
/// The line is written by the request's own thread, as it records: the
/// writer then only hands the bytes to the kernel. When it turned events
/// into lines itself, each batch (some 2,000 events at 40,000 small
/// downloads a second) kept a third thread busy for one to two
/// milliseconds on end, twenty times a second, on two cores shared with
/// the event loops (`perf sched`): a request arriving then waited that long.
///
/// The writer writes at most once per ``Options/batchWindow`` (50 ms by
/// default), and only the first event after a write wakes it: waking a
/// thread for every request cost a small download a tenth of its time
/// (profiled). An event is on disk within the window; ``flush()`` (the
/// audit's reader in the server) does not wait for it, nor does a buffer
/// half full (the writer writes it at once).
public final class AuditLog: Sendable {
    /// How large and how many.
    public struct Options: Sendable {
        /// A file is rotated once it reaches this size.
        public var maxFileBytes: Int64
        /// Full files kept besides the current one.
        public var keepFiles: Int
        /// Events waiting for the writer at most. The default holds about
        /// 0.8 s of 40,000 small downloads a second (some 7 MB while the
        /// writer is behind, nothing when it is not): 4,096 lost events
        /// when the writer's thread went unscheduled for a tenth of a second
        /// on two cores shared with the client and a compiler.
        public var bufferCapacity: Int
        /// The writer writes at most once in this time (what arrives meanwhile waits for the next write).
        public var batchWindow: Duration

        public init(
            maxFileBytes: Int64 = 8 << 20, keepFiles: Int = 10, bufferCapacity: Int = 32_768,
            batchWindow: Duration = .milliseconds(50)
        ) {
            self.maxFileBytes = maxFileBytes
            self.keepFiles = keepFiles
            self.bufferCapacity = bufferCapacity
            self.batchWindow = batchWindow
        }

        /// Events waiting in this number (half the buffer) are written
        /// without waiting out the window: ``AuditLog/record(_:)`` wakes the
        /// writer when they reach it, and the writer does not sleep once they have.
        var writtenAtOnce: Int { bufferCapacity / 2 }
    }

    /// The folder of the files.
    public let folder: String
    public let options: Options
    private let pending: PendingEvents
    /// Wakes the writer; holds one wake-up at most (the writer takes all that waits).
    private let wake: AsyncStream<Void>.Continuation
    private let writer: Task<Void, Never>

    struct Pending {
        /// The lines of the events recorded and not yet written.
        var lines = AuditFile.Lines(capacity: 0)
        var dropped = 0
        /// Those waiting in ``AuditLog/flush()``, resumed once what came before them is written.
        var flushes: [CheckedContinuation<Void, Never>] = []

        /// Set with the writer's last batch: nothing is written after it.
        var ended = false
        /// The writer, waiting out its window (a flush or the end wakes it sooner).
        var sleeper: CheckedContinuation<Void, Never>?
        /// ``AuditLog/finish()`` was called: the writer waits out no window any more.
        var finishing = false

        /// Whether the writer has nothing to do (so the next event must wake it).
        var isEmpty: Bool { lines.ends.isEmpty && dropped == 0 && flushes.isEmpty }
    }

    final class PendingEvents: Sendable {
        let state = Mutex(Pending())
        /// Writes made so far (each of all that waited then).
        let batches = Atomic<Int>(0)

        /// Ends the writer's wait for its window, if it waits.
        func wakeSleeper() {
            state.withLock { state in
                defer { state.sleeper = nil }
                return state.sleeper
            }?.resume()
        }

        /// Waits out `window`, or less when a flush or the end comes, or
        /// when `enough` events wait (now, or by ``AuditLog/record(_:)``'s wake-up).
        func pause(_ window: Duration, enough: Int) async {
            var timer: Task<Void, Never>?
            await withCheckedContinuation { continuation in
                let hurry = state.withLock { state in
                    let hurry = !state.flushes.isEmpty || state.finishing || state.lines.ends.count >= enough
                    if !hurry { state.sleeper = continuation }
                    return hurry
                }
                if hurry {
                    continuation.resume()
                } else {
                    timer = Task {
                        try? await Task.sleep(for: window)
                        self.wakeSleeper()
                    }
                }
            }
            timer?.cancel()
        }
    }

    /// The current file's name; full ones are `audit.N.jsonl`.
    public static let currentName = "audit.jsonl"

    /// Starts the writer for the audit in `folder` (made if missing, readable by the server's user only).
    public init(folder: String, options: Options = Options(), logger: Logger) {
        self.folder = folder
        self.options = options
        _ = cfs_mkdirat(AT_FDCWD, folder, 0o700)
        let (signal, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wake = wake
        let pending = PendingEvents()
        self.pending = pending
        let file = AuditFile(folder: folder, options: options, logger: logger)
        writer = Task.detached {
            /// Writes what waits; returns whether someone waited in `flush()`.
            func writeWaiting(last: Bool = false) async -> Bool {
                let (taken, dropped, flushes) = pending.state.withLock { state in
                    // The next batch's room: about as much as this one's.
                    defer {
                        state = Pending(
                            lines: AuditFile.Lines(capacity: state.lines.ends.count), ended: last,
                            finishing: state.finishing)
                    }
                    return (state.lines, state.dropped, state.flushes)
                }
                defer { for flush in flushes { flush.resume() } }
                var lines = taken
                if dropped > 0 {
                    logger.error(
                        "the audit could not keep up: events were dropped", metadata: ["dropped": "\(dropped)"])
                    lines.append(
                        AuditEvent(
                            action: "audit-dropped", who: "-", address: "-", path: nil, outcome: "dropped",
                            detail: "\(dropped) events"))
                }
                guard !lines.ends.isEmpty else { return !flushes.isEmpty }
                let text = lines
                await runBlocking { file.append(text) }
                pending.batches.add(1, ordering: .relaxed)
                return !flushes.isEmpty
            }
            let window = options.batchWindow
            for await _ in signal {
                // After a write, the next waits out the window (unless a
                // reader is waiting for it): events arriving meanwhile are
                // one write, not a write and a wake-up each.
                if await !writeWaiting() { await pending.pause(window, enough: options.writtenAtOnce) }
            }
            _ = await writeWaiting(last: true)
        }
    }

    /// Records `event`, never waiting: dropped (and counted) when the buffer is full.
    public func record(_ event: borrowing AuditEvent) {
        record { $0.append(event) }
    }

    /// Records an event of these parts now, as ``record(_:)`` records an
    /// ``AuditEvent`` made of them, without making one (``AuditEvent/writeJSONLine(into:nanoseconds:action:who:address:path:outcome:detail:)``):
    /// every download is recorded this way, the small reads' among them.
    func record(action: String, who: String, address: String, path: String?, outcome: String, detail: String?) {
        let now = wallNanoseconds()
        record { lines in
            AuditEvent.writeJSONLine(
                into: &lines.json, nanoseconds: now, action: action, who: who, address: address, path: path,
                outcome: outcome, detail: detail)
            lines.endLine()
        }
    }

    /// Appends a line with `append`, under the lock; never waits.
    private func record(_ append: (inout AuditFile.Lines) -> Void) {
        let capacity = options.bufferCapacity
        let (first, halfFull) = pending.state.withLock { state in
            let first = state.isEmpty
            if state.lines.ends.count >= capacity {
                state.dropped += 1
            } else {
                append(&state.lines)
            }
            return (first, state.lines.ends.count == options.writtenAtOnce)
        }
        // Later ones find the writer woken already: it takes all that waits.
        if first { wake.yield() }
        // Half full: the batch is large enough, so the writer stops waiting
        // out its window. At tens of thousands of small downloads a second,
        // a buffer filled within one window and events were dropped.
        if halfFull { pending.wakeSleeper() }
    }

    /// Returns once every event recorded before the call is written (or
    /// at once when the writer has ended), without waiting out the batch window.
    public func flush() async {
        await withCheckedContinuation { continuation in
            let ended = pending.state.withLock { state in
                if !state.ended { state.flushes.append(continuation) }
                return state.ended
            }
            // Once the writer has ended, all it will ever write is written.
            if ended {
                continuation.resume()
            } else {
                wake.yield()
                pending.wakeSleeper()
            }
        }
    }

    /// Writes made so far, each of all the events that waited then.
    var batchesWritten: Int { pending.batches.load(ordering: .relaxed) }

    /// Events waiting for the writer, and those dropped since it last wrote.
    var waiting: (events: Int, dropped: Int) { pending.state.withLock { ($0.lines.ends.count, $0.dropped) } }

    /// Writes what is buffered and ends the writer.
    public func close() async {
        finish()
        await writer.value
    }

    /// Ends the writer without waiting (what is buffered is still written).
    public func finish() {
        pending.state.withLock { $0.finishing = true }
        wake.finish()
        pending.wakeSleeper()
    }
}

/// The files of the audit: appends, rotates. Used by the writer task alone.
struct AuditFile: Sendable {
    let folder: String
    let options: AuditLog.Options
    let logger: Logger

    /// JSON lines in one buffer, each ending in a newline.
    struct Lines: Sendable {
        var json: JSONBytes
        /// Where each line ends in `json` (just past its newline).
        var ends: [Int] = []

        init(capacity: Int) {
            json = JSONBytes(capacity: capacity * 160)
            ends.reserveCapacity(capacity)
        }

        mutating func append(_ event: borrowing AuditEvent) {
            event.writeJSONLine(into: &json)
            endLine()
        }

        /// Ends the line written last into ``json``.
        mutating func endLine() {
            json.raw("\n")
            ends.append(json.bytes.count)
        }
    }

    /// Appends `lines`, rotating first whenever the next one would pass the size.
    ///
    /// Several servers of one folder append to the same file (on shared
    /// storage). Each batch is written under an exclusive `flock` of the
    /// current file, and its size is read and the file rotated under that
    /// lock: lines of two servers never interleave (also where a write is
    /// cut short, or `O_APPEND` alone is not atomic, as on NFS), and two
    /// servers never both rotate for the same size.
    func append(_ lines: Lines) {
        let path = folder + "/" + AuditLog.currentName
        guard var fd = openLocked(path) else { return }
        defer { close(fd) }
        var size = Int64(max(0, lseek(fd, 0, SEEK_END)))
        let text = lines.json.bytes
        // The lines not written yet are text[start..<lineStart].
        var start = 0
        var lineStart = 0
        for end in lines.ends {
            let pending = Int64(lineStart - start)
            if size + pending + Int64(end - lineStart) > options.maxFileBytes, size + pending > 0 {
                guard write(text[start..<lineStart], to: fd, path: path) else { return }
                start = lineStart
                rotate()
                close(fd)
                guard let reopened = openLocked(path) else {
                    fd = -1
                    return
                }
                fd = reopened
                size = 0
            }
            lineStart = end
        }
        _ = write(text[start..<lineStart], to: fd, path: path)
    }

    private func write(_ bytes: ArraySlice<UInt8>, to fd: Int32, path: String) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                logger.error("cannot write the audit", metadata: ["path": "\(path)", "errno": "\(errno)"])
                return false
            }
            offset += written
        }
        return true
    }

    /// The current file, open for appending and locked; reopened when
    /// another server rotated it while this one waited for the lock.
    private func openLocked(_ path: String) -> Int32? {
        for _ in 0..<10 {
            guard let fd = openCurrent(path) else { return nil }
            while flock(fd, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    logger.error("cannot lock the audit", metadata: ["path": "\(path)", "errno": "\(errno)"])
                    return fd
                }
            }
            guard let open = try? FileStatus(descriptor: fd) else { return fd }
            let named = try? FileStatus(name: path, in: AT_FDCWD)
            if let named, named.device == open.device, named.inode == open.inode { return fd }
            // Rotated meanwhile: the name is another file now (or none yet).
            close(fd)
        }
        return openCurrent(path)
    }

    private func openCurrent(_ path: String) -> Int32? {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            logger.error("cannot open the audit", metadata: ["path": "\(path)", "errno": "\(errno)"])
            return nil
        }
        return fd
    }

    /// audit.jsonl becomes audit.1.jsonl, each older one moves up, the oldest beyond `keepFiles` goes.
    func rotate() {
        let keep = max(1, options.keepFiles)
        unlink(folder + "/audit.\(keep).jsonl")
        if keep > 1 {
            for index in stride(from: keep - 1, through: 1, by: -1) {
                rename(folder + "/audit.\(index).jsonl", folder + "/audit.\(index + 1).jsonl")
            }
        }
        rename(folder + "/" + AuditLog.currentName, folder + "/audit.1.jsonl")
    }
}
