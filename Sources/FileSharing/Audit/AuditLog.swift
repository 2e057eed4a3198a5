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
/// Recording never waits for the disk: events go into a bounded buffer
/// that a writer task empties in batches, off the request path. When the
/// buffer is full (the disk far slower than the requests), the event is
/// dropped, counted, and the count logged once the writer catches up:
/// a request is never held back for the audit.
public final class AuditLog: Sendable {
    /// How large and how many.
    public struct Options: Sendable {
        /// A file is rotated once it reaches this size.
        public var maxFileBytes: Int64
        /// Full files kept besides the current one.
        public var keepFiles: Int
        /// Events waiting for the writer at most.
        public var bufferCapacity: Int

        public init(maxFileBytes: Int64 = 8 << 20, keepFiles: Int = 10, bufferCapacity: Int = 4096) {
            self.maxFileBytes = maxFileBytes
            self.keepFiles = keepFiles
            self.bufferCapacity = bufferCapacity
        }
    }

    /// The folder of the files.
    public let folder: String
    public let options: Options
    private let pending: PendingEvents
    /// Wakes the writer; holds one wake-up at most (the writer takes all that waits).
    private let wake: AsyncStream<Void>.Continuation
    private let writer: Task<Void, Never>

    struct Pending {
        var events: [AuditEvent] = []
        var dropped = 0
    }

    final class PendingEvents: Sendable {
        let state = Mutex(Pending())
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
            func writeWaiting() async {
                let (events, dropped) = pending.state.withLock { state in
                    defer { state = Pending() }
                    return (state.events, state.dropped)
                }
                var lines = events.map { $0.jsonLine + "\n" }
                if dropped > 0 {
                    logger.error(
                        "the audit could not keep up: events were dropped", metadata: ["dropped": "\(dropped)"])
                    let note = AuditEvent(
                        action: "audit-dropped", who: "-", address: "-", path: nil, outcome: "dropped",
                        detail: "\(dropped) events")
                    lines.append(note.jsonLine + "\n")
                }
                guard !lines.isEmpty else { return }
                let text = lines
                await runBlocking { file.append(text) }
            }
            for await _ in signal { await writeWaiting() }
            await writeWaiting()
        }
    }

    /// Records `event`, never waiting: dropped (and counted) when the buffer is full.
    public func record(_ event: AuditEvent) {
        let capacity = options.bufferCapacity
        pending.state.withLock { state in
            if state.events.count >= capacity {
                state.dropped += 1
            } else {
                state.events.append(event)
            }
        }
        wake.yield()
    }

    /// Events waiting for the writer, and those dropped since it last wrote.
    var waiting: (events: Int, dropped: Int) { pending.state.withLock { ($0.events.count, $0.dropped) } }

    /// Writes what is buffered and ends the writer.
    public func close() async {
        wake.finish()
        await writer.value
    }

    /// Ends the writer without waiting (what is buffered is still written).
    public func finish() { wake.finish() }
}

/// The files of the audit: appends, rotates. Used by the writer task alone.
struct AuditFile: Sendable {
    let folder: String
    let options: AuditLog.Options
    let logger: Logger

    /// Appends `lines` (each ending in a newline), rotating first whenever the next one would pass the size.
    func append(_ lines: [String]) {
        let path = folder + "/" + AuditLog.currentName
        guard var fd = openCurrent(path) else { return }
        defer { close(fd) }
        var size = Int64(max(0, lseek(fd, 0, SEEK_END)))
        var chunk: [UInt8] = []
        for line in lines {
            let bytes = Array(line.utf8)
            if size + Int64(chunk.count + bytes.count) > options.maxFileBytes, size + Int64(chunk.count) > 0 {
                guard write(chunk, to: fd, path: path) else { return }
                chunk.removeAll(keepingCapacity: true)
                close(fd)
                rotate()
                guard let reopened = openCurrent(path) else {
                    fd = -1
                    return
                }
                fd = reopened
                size = 0
            }
            chunk += bytes
        }
        _ = write(chunk, to: fd, path: path)
    }

    private func write(_ bytes: [UInt8], to fd: Int32, path: String) -> Bool {
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
