import FileWatching
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The users file as the server sees it while it runs: read when the server
/// starts, and read again when it changes, without a restart.
///
/// A change is noticed by the file's identity (device, inode, size,
/// modification and change times), looked at no more often than
/// ``checkInterval`` (one `stat`, so asking on every request costs nothing
/// worth measuring). `fileshare users` writes the file atomically (a new
/// inode renamed into place), so a reader never sees half a file from it;
/// a file that cannot be read or is broken (written by hand, half copied)
/// keeps the last good directory in force, and the reason is logged once
/// per version of the file.
///
/// Every change empties the ``CredentialCache``: a password changed or a
/// user removed takes effect at the next request.
public final class LiveUsers: Sendable {
    /// The users file.
    public let path: String
    /// How often the file's identity is looked at, at most.
    public let checkInterval: Duration
    /// The verified passwords, emptied with each change of the file.
    public let credentials: CredentialCache
    private let logger: Logger
    private let state: Mutex<State>
    /// Whether the directory was given rather than read (``init(fixed:logger:)``): nothing to read again.
    private let isFixed: Bool

    struct State {
        var directory: UserDirectory
        /// The identity of the version read (or found broken) last.
        var identity: Identity?
        var checked: ContinuousClock.Instant
    }

    /// What tells one version of the file from another.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64
    }

    /// Reads the users file.
    /// - Throws: ``AccountsError`` when it is missing, unreadable or broken:
    ///   a server does not start without its users.
    public init(
        path: String, checkInterval: Duration = .seconds(1), credentials: CredentialCache = CredentialCache(),
        logger: Logger
    ) throws(AccountsError) {
        self.path = path
        self.checkInterval = checkInterval
        self.credentials = credentials
        self.logger = logger
        let identity = LiveUsers.identity(of: path)
        guard let directory = try UsersFile.read(path) else {
            throw AccountsError(
                .notFound, "there is no users file at \(path); make one with 'fileshare users add NAME --users \(path)'"
            )
        }
        state = Mutex(State(directory: directory, identity: identity, checked: .now))
        isFixed = false
    }

    /// A directory that is no file and never changes: the one user of
    /// `fileshare serve --user NAME --password PASSWORD`, signed in the same
    /// way as the users of a file.
    public init(fixed directory: UserDirectory, credentials: CredentialCache = CredentialCache(), logger: Logger) {
        path = ""
        checkInterval = .seconds(1)
        self.credentials = credentials
        self.logger = logger
        state = Mutex(State(directory: directory, identity: nil, checked: .now))
        isFixed = true
    }

    /// The directory in force, read again first when the file changed.
    public func current(now: ContinuousClock.Instant = .now) -> UserDirectory {
        refresh(now: now)
        return state.withLock { $0.directory }
    }

    /// Reads the file again if it is time to look and it changed: what
    /// ``current(now:)`` does first, for a caller that needs only the
    /// consequences (``UserCredentials/generation``), not the directory.
    public func refresh(now: ContinuousClock.Instant = .now) {
        let due = state.withLock { state -> Bool in
            guard now - state.checked >= checkInterval else { return false }
            state.checked = now
            return true
        }
        if due { reloadIfChanged() }
    }

    /// Reads the file again if its identity changed since it was last read.
    public func reloadIfChanged() {
        if isFixed { return }
        let identity = LiveUsers.identity(of: path)
        guard identity != state.withLock({ $0.identity }) else { return }
        let result: Result<UserDirectory?, AccountsError>
        do {
            result = .success(try UsersFile.read(path))
        } catch {
            result = .failure(error)
        }
        let changed = state.withLock { state -> Bool in
            state.identity = identity
            guard case .success(let directory?) = result, directory != state.directory else { return false }
            state.directory = directory
            return true
        }
        switch result {
        case .success(.some):
            if changed {
                credentials.removeAll()
                logger.notice("the users file changed; its users and rights apply now", metadata: ["file": "\(path)"])
            }
        case .success(.none):
            logger.error(
                "the users file is gone; the last users read stay in force until it is back",
                metadata: ["file": "\(path)"])
        case .failure(let error):
            logger.error(
                "the users file cannot be used; the last users read stay in force",
                metadata: ["file": "\(path)", "error": "\(error.message)"])
        }
    }

    static func identity(of path: String) -> Identity? {
        guard let status = try? FileStatus(name: path, in: AT_FDCWD) else { return nil }
        return Identity(
            device: status.device, inode: status.inode, size: status.size, modified: status.modified,
            changed: status.changed)
    }
}
