public import Accounts
public import ChangeLog
public import FileWatching
import Synchronization

extension ShareConfiguration {
    /// The shared database several servers of one folder use: its change
    /// log, the folder's lock that makes one server the leader, the stores
    /// the servers share, and what `/api/info` says of it. Each is a
    /// protocol of this library; the SharedState library implements them in
    /// PostgreSQL, and whoever runs the server (the `fileshare` command)
    /// opens the database and gives them here: this library knows no database.
    public struct SharedDatabase: Sendable {
        /// The folder's change log in the database.
        public var changeLog: any ChangeLog
        /// The database's URL without credentials.
        public var description: String
        /// The folder's lock: the server that holds it leads. `nil`: this
        /// server leads from the start (the log must be open for writing).
        public var lock: (any FolderLock)?
        /// The origins of this server's changes while it follows, for the
        /// leader to give their records.
        public var origins: (any SharedOrigins)?
        /// Run while this server leads (with the leader's observer), cancelled when it stops leading.
        public var whileLeading: (@Sendable (FileObserver) async -> Void)?
        /// The page's sessions (with a users file), shared by the servers;
        /// `nil`: each server keeps its own.
        public var sessions: (any SessionStore)?
        /// The share links, shared by the servers; `nil`: the private folder's file.
        public var links: (any ShareLinkStore)?
        /// The visitors who gave a share link's password; `nil`: each server keeps its own.
        public var linkVisitors: (any SessionStore)?
        /// The WebDAV locks, shared by the servers; `nil`: the private folder's file.
        package var locks: (any DAVLockStore)?
        /// The state of resumable uploads, shared by the servers (an upload
        /// goes on on any of them); `nil`: each server keeps its own.
        package var uploads: (any SharedUploadState)?

        /// Creates the description of a shared database.
        public init(
            changeLog: any ChangeLog, description: String, lock: (any FolderLock)? = nil,
            origins: (any SharedOrigins)? = nil, whileLeading: (@Sendable (FileObserver) async -> Void)? = nil,
            sessions: (any SessionStore)? = nil, links: (any ShareLinkStore)? = nil,
            linkVisitors: (any SessionStore)? = nil
        ) {
            self.changeLog = changeLog
            self.description = description
            self.lock = lock
            self.origins = origins
            self.whileLeading = whileLeading
            self.sessions = sessions
            self.links = links
            self.linkVisitors = linkVisitors
        }
    }
}

/// What happens to a server's hold on its folder's lock.
public enum FolderLockEvent: Sendable, Hashable {
    /// This server holds the lock now.
    case gained
    /// This server let go of the lock (its connection ended).
    case lost
    /// Another server holds the lock.
    case heldElsewhere
    /// The database that keeps the lock cannot be reached.
    case unreachable
}

/// The lock that makes one of the servers of a folder its leader (a
/// session-level advisory lock in PostgreSQL: released when its holder dies).
public protocol FolderLock: Sendable {
    /// How long after the lock is free this server takes it at the latest.
    var retryInterval: Duration { get }

    /// Tries to take the lock and holds it until cancelled (which lets go of
    /// it), reporting each change of the hold.
    func hold(reporting report: @escaping @Sendable (FolderLockEvent) -> Void) async
}

/// The origins of the changes a follower makes, kept where the leader's
/// commits find them.
public protocol SharedOrigins: Sendable {
    /// Registers a change under way on `paths`; returns a key for ``release(_:)``.
    func register(paths: [String], origin: ChangeOrigin) async throws -> Int64
    /// Removes a registration.
    func release(_ key: Int64) async
}

extension ShareCore {
    /// `/api/info`'s `"database"` and `"leader"` members, with their leading
    /// comma: no database and the lead for a server on its own.
    var databaseInfo: String {
        guard let shared = sharedDatabase else { return ",\"database\":null,\"leader\":true" }
        return ",\"database\":\(JSONText.quoted(shared.description)),\"leader\":\(isLeader)"
    }

    /// Whether this server leads its folder now.
    var isLeader: Bool { leadership.withLock { $0.isLeader } }
}
