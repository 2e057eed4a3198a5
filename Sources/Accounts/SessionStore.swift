import Crypto
import Synchronization

/// Who a session is: its user and the ``SessionStamp`` of the user's
/// password at sign-in.
public struct SessionRecord: Sendable, Hashable {
    /// The user (or, for a share link's visitor, the link's id).
    public var user: String
    /// The user's ``SessionStamp`` when the session started.
    public var stamp: String

    /// Creates a record.
    public init(user: String, stamp: String) {
        self.user = user
        self.stamp = stamp
    }
}

/// What ties a session to the password it was signed in with: SHA-256 of
/// the user's password hash, hexadecimal. When the password changes, the
/// stamp does, and every session started with the old one ends at its next
/// use, on whichever server sees it (each reads the same users file).
public enum SessionStamp {
    /// The stamp of a password hash.
    public static func of(passwordHash: String) -> String {
        hex(SHA256.hash(data: Array(passwordHash.utf8)))
    }

    /// SHA-256 of a session id, hexadecimal: what a shared store keeps
    /// instead of the id (a copy of the store opens no session).
    public static func hash(ofID id: String) -> String {
        hex(SHA256.hash(data: Array(id.utf8)))
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// Where sessions are kept: in this process (``MemorySessionStore``), or
/// in a database several servers share, so that a session started on one
/// is honoured, and ended, on all at once.
///
/// Ids are made by the caller (``SessionTable/newID()``, 256 random bits);
/// a store decides when a session has ended (``SessionTable/Limits``) by
/// its own clock, the database's for a shared one.
public protocol SessionStore: Sendable {
    /// How long sessions last.
    var limits: SessionTable.Limits { get }

    /// Starts session `id` for `user`, signed in with the password of `stamp`.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func start(id: String, user: String, stamp: String) async throws(AccountsError)

    /// Who session `id` is, and notes its use; `nil` when there is none or it ended.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be
    ///   reached (never `nil` for that: a session is not ended by an outage).
    func session(_ id: String) async throws(AccountsError) -> SessionRecord?

    /// Ends session `id` (sign-out).
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func end(_ id: String) async throws(AccountsError)

    /// Ends every session of `user`, or every one but those of stamp `keeping`.
    /// - Throws: ``AccountsError`` `.unavailable` when the store cannot be reached.
    func end(user: String, keeping: String?) async throws(AccountsError)
}

/// The sessions of one server, in its memory: a ``SessionTable`` behind a
/// lock, with the time from `clock`; with a ``SessionsFile``, also kept
/// there across restarts.
///
/// With a file, the table holds only the hash of each id (as the file and
/// the database do), and the file is written at every start and end of a
/// session, and at a use when the last write is older than
/// ``touchInterval`` (so a restart keeps the idle lifetime to within that).
/// Writes are serialised, and one never replaces a newer one.
public final class MemorySessionStore: SessionStore {
    private struct State {
        var table: SessionTable
        /// Counts the changes, so that an older snapshot is never written over a newer one.
        var generation = 0
        var lastWrite: ContinuousClock.Instant
    }

    private let state: Mutex<State>
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let file: SessionsFile?
    /// The generation last written to ``file``.
    private let written = Mutex<Int>(0)
    /// How often a use alone is written, at most.
    public let touchInterval: Duration

    /// Creates a store, empty, or with the live sessions `file` holds.
    public init(
        limits: SessionTable.Limits = SessionTable.Limits(), file: SessionsFile? = nil,
        touchInterval: Duration = .seconds(30),
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        let now = clock()
        var table = SessionTable(limits: limits)
        for entry in file?.read(now: now) ?? [] { table.restore(entry, now: now) }
        // The first use after a start is written: the file's last one may be old.
        state = Mutex(State(table: table, lastWrite: now.advanced(by: .zero - touchInterval)))
        self.clock = clock
        self.file = file
        self.touchInterval = touchInterval
    }

    public var limits: SessionTable.Limits { state.withLock { $0.table.limits } }

    /// The key of session `id` in the table: the id, or its hash when it is written down.
    private func key(_ id: String) -> String {
        file == nil ? id : SessionStamp.hash(ofID: id)
    }

    public func start(id: String, user: String, stamp: String) {
        let key = key(id)
        change { table, now in table.start(id: key, user: user, stamp: stamp, now: now) }
    }

    public func session(_ id: String) -> SessionRecord? {
        let key = key(id)
        let now = clock()
        let (record, snapshot) = state.withLock { state -> (SessionRecord?, (Int, [SessionTable.Entry])?) in
            let record = state.table.session(of: key, now: now)
            guard file != nil, record != nil, now - state.lastWrite >= touchInterval else { return (record, nil) }
            state.generation += 1
            state.lastWrite = now
            return (record, (state.generation, state.table.entries(now: now)))
        }
        if let (generation, entries) = snapshot { write(entries, generation: generation, now: now) }
        return record
    }

    public func end(_ id: String) {
        let key = key(id)
        change { table, _ in table.end(key) }
    }

    public func end(user: String, keeping: String?) {
        change { table, _ in table.end(user: user, keeping: keeping) }
    }

    /// The sessions kept.
    public var count: Int { state.withLock { $0.table.count } }

    /// Changes the table and writes it.
    private func change(_ body: (inout SessionTable, ContinuousClock.Instant) -> Void) {
        let now = clock()
        let snapshot = state.withLock { state -> (Int, [SessionTable.Entry])? in
            body(&state.table, now)
            guard file != nil else { return nil }
            state.generation += 1
            state.lastWrite = now
            return (state.generation, state.table.entries(now: now))
        }
        if let (generation, entries) = snapshot { write(entries, generation: generation, now: now) }
    }

    private func write(_ entries: [SessionTable.Entry], generation: Int, now: ContinuousClock.Instant) {
        guard let file else { return }
        written.withLock { written in
            guard generation > written else { return }
            file.write(entries, now: now)
            written = generation
        }
    }
}
