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
/// lock, with the time from `clock`.
public final class MemorySessionStore: SessionStore {
    private let table: Mutex<SessionTable>
    private let clock: @Sendable () -> ContinuousClock.Instant

    /// Creates an empty store.
    public init(
        limits: SessionTable.Limits = SessionTable.Limits(),
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        table = Mutex(SessionTable(limits: limits))
        self.clock = clock
    }

    public var limits: SessionTable.Limits { table.withLock { $0.limits } }

    public func start(id: String, user: String, stamp: String) {
        let now = clock()
        table.withLock { $0.start(id: id, user: user, stamp: stamp, now: now) }
    }

    public func session(_ id: String) -> SessionRecord? {
        let now = clock()
        return table.withLock { $0.session(of: id, now: now) }
    }

    public func end(_ id: String) {
        table.withLock { $0.end(id) }
    }

    public func end(user: String, keeping: String?) {
        table.withLock { $0.end(user: user, keeping: keeping) }
    }

    /// The sessions kept.
    public var count: Int { table.withLock { $0.count } }
}
