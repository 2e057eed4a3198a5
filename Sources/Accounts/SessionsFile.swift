import FileWatching
import Foundation
public import Logging

/// Where one server keeps its sessions across restarts: a JSON file in the
/// folder's private state (`.fileshare/sessions.json`), written whole and
/// atomically, readable by the server's user only.
///
/// It holds what the database keeps (``PostgresSessionStore``'s rules): for
/// each session only SHA-256 of its id (``SessionStamp/hash(ofID:)``: a
/// copy of the file opens no session), the user, the stamp of the password
/// it was signed in with, and when it started and was last used, by the
/// wall clock (a restart resets the monotonic one).
public struct SessionsFile: Sendable {
    /// The file.
    public let path: String
    private let logger: Logger
    private let wallClock: @Sendable () -> Int64

    /// A file at `path`.
    /// - Parameter wallClock: Milliseconds since 1970 (injected in tests).
    public init(
        path: String, logger: Logger, wallClock: @escaping @Sendable () -> Int64 = SessionsFile.systemClock
    ) {
        self.path = path
        self.logger = logger
        self.wallClock = wallClock
    }

    /// Milliseconds since 1970, by the system's clock.
    public static let systemClock: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

    private struct Stored: Codable {
        struct Session: Codable {
            var idHash: String
            var user: String
            var stamp: String
            /// Milliseconds since 1970.
            var started: Int64
            var used: Int64
        }
        var version = 1
        var sessions: [Session]
    }

    /// The sessions written, with their times on the monotonic clock as
    /// they were at `now` (none when there is no file; a damaged one is
    /// logged and opens none).
    func read(now: ContinuousClock.Instant) -> [SessionTable.Entry] {
        let stored: Stored
        do {
            guard let bytes = try AtomicFile.read(path) else { return [] }
            stored = try JSONDecoder().decode(Stored.self, from: Data(bytes))
        } catch {
            logger.error(
                "cannot read the saved sessions; everyone signs in again",
                metadata: ["path": "\(path)", "error": "\(error)"])
            return []
        }
        let wall = wallClock()
        return stored.sessions.compactMap { session in
            // A hash is 64 hexadecimal digits: anything else was never written here.
            guard session.idHash.count == 64, session.idHash.allSatisfy(\.isHexDigit) else { return nil }
            return SessionTable.Entry(
                id: session.idHash, user: session.user, stamp: session.stamp,
                started: now.advanced(by: .milliseconds(session.started - wall)),
                used: now.advanced(by: .milliseconds(session.used - wall)))
        }
    }

    /// Writes `entries` (their ids already hashed), their times taken from
    /// the monotonic clock at `now` to the wall clock.
    func write(_ entries: [SessionTable.Entry], now: ContinuousClock.Instant) {
        let wall = wallClock()
        func milliseconds(_ instant: ContinuousClock.Instant) -> Int64 {
            let (seconds, attoseconds) = (now - instant).components
            return wall - (seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
        let stored = Stored(
            sessions: entries.sorted { $0.id < $1.id }.map { entry in
                Stored.Session(
                    idHash: entry.id, user: entry.user, stamp: entry.stamp, started: milliseconds(entry.started),
                    used: milliseconds(entry.used))
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try AtomicFile.write(Array(try encoder.encode(stored)), to: path, permissions: 0o600)
        } catch {
            logger.error("cannot save the sessions", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
