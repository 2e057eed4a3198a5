public import Accounts
public import ChangeLog
public import DocumentTypes
public import FileWatching
public import Previews

/// How `fileshare serve` shares a folder.
public struct ShareConfiguration: Sendable {
    /// HTTP Basic credentials.
    public struct Credentials: Sendable, Hashable {
        public var user: String
        public var password: String
        public init(user: String, password: String) {
            self.user = user
            self.password = password
        }
    }

    /// The folder (created if missing).
    public var root: String
    /// Where the server keeps its own files (sessions, links, the change
    /// log, thumbnails, the observer's state, the audit) when not in the
    /// hidden `.fileshare` folder inside ``root`` (`nil`: there). Only a
    /// ``readOnly`` share keeps them elsewhere — a folder the server cannot
    /// write: a mount, another user's library — since uploads, versions
    /// and the trash must be on the shared folder's own file system.
    public var stateFolder: String?
    /// The address to listen on (loopback by default).
    public var host: String
    /// The port (0 picks a free one).
    public var port: Int
    /// Credentials every request must carry, or `nil` for none.
    public var credentials: Credentials?
    /// The users file (`--users`): when set, people sign in as its users and
    /// the core applies their rights; ``credentials`` are not used.
    public var usersFile: String?
    /// How failed sign-ins are slowed (with a users file).
    public var signInLimits = SignInThrottle.Limits()
    /// Checks passwords against the users file's hashes (bcrypt).
    public var passwordHasher: any PasswordHasher = BcryptHasher()
    /// Whether no change through the server is allowed (403).
    public var readOnly: Bool
    /// Whether a GET or HEAD of a small cached file is answered on the
    /// connection's event loop (`SmallReads`), not through the router. The
    /// answer is the same either way (tests compare them); off, every
    /// request takes the router's way.
    public var smallReadsOnEventLoop = true
    /// The largest upload accepted (413 above it), or `nil` for no limit.
    public var maxUploadBytes: Int64?
    /// PEM certificate chain and private key files, for HTTPS.
    public var tls: (certificate: String, key: String)?
    /// The types uploads may be, or `nil` for every type. Every way a file
    /// enters through the server is checked (the page and the JSON API,
    /// resumable uploads, WebDAV `PUT`); a refused upload answers 415 with
    /// the reason and leaves nothing behind. Renames, moves and copies of
    /// what is already in the folder are not checked again.
    public var acceptedTypes: AcceptedTypes?
    /// What becomes of an upload whose name lies about its content (a PDF
    /// put at `notes.txt`), whatever types are accepted: refused with 415
    /// and a reason naming both types (the default), or put in place under
    /// the corrected name (`notes.pdf`, or `notes 2.pdf` when that is taken:
    /// it never replaces a file), which the response reports.
    public var misleadingNames: MisleadingNames
    /// How the folder is observed. Without a state file of its own, the
    /// server keeps the observer's state in its private folder, so that
    /// what changed while it was stopped enters the change log when it starts.
    public var observerOptions: ObserverOptions
    /// How the change log (`.fileshare/changes/`) is kept.
    public var changeLog: FileChangeLog.Options
    /// How many versions of replaced files (`.fileshare/versions/`) and
    /// deleted items (`.fileshare/trash/`) are kept.
    public var history = HistoryOptions()
    /// The shared database's change log, used instead of the one in
    /// `.fileshare/changes/` (`nil`: that one).
    public var sharedDatabase: SharedDatabase?
    /// How long clients may take: to send a request header, between
    /// requests, within a body (slow clients are closed, live ones are not).
    public var limits: ConnectionLimits
    /// Makes thumbnails of PDFs, videos and audio covers with the programs
    /// this machine has (found when the configuration is made); `nil`: none.
    public var thumbnailer: ExternalThumbnailer? = ExternalThumbnailer()
    /// Makes thumbnails of images, comics and books with the image
    /// libraries this machine has (loaded at run time); `nil`: none, and
    /// every image gets its icon.
    public var imageThumbnailer: ImageThumbnailer? = ImageThumbnailer()
    /// How many files may wait to have their thumbnails made ahead of time,
    /// in the background, when their folder is listed (by the page, the
    /// API or a WebDAV PROPFIND); past it a listing's files are left out
    /// and made when asked for. `0`: none is made ahead.
    public var thumbnailsAhead = 4096
    /// What resumable and tus uploads under way may hold: how long one
    /// is kept after its last chunk, how many per user and in all.
    public var pendingUploads = PendingUploadLimits.standard

    /// Whether the share asks no credentials (neither ``credentials`` nor
    /// ``usersFile``): then it answers only requests that name a loopback
    /// host (``HostCheck``).
    var answersLoopbackOnly: Bool { credentials == nil && usersFile == nil }

    /// Creates a configuration; the defaults are those of `fileshare serve`.
    public init(
        root: String, host: String = "127.0.0.1", port: Int = 8080, credentials: Credentials? = nil,
        readOnly: Bool = false, maxUploadBytes: Int64? = nil, tls: (certificate: String, key: String)? = nil,
        acceptedTypes: AcceptedTypes? = nil, misleadingNames: MisleadingNames = .refuse,
        observerOptions: ObserverOptions = ObserverOptions(),
        changeLog: FileChangeLog.Options = FileChangeLog.Options(),
        limits: ConnectionLimits = ConnectionLimits()
    ) {
        self.root = root
        self.host = host
        self.port = port
        self.credentials = credentials
        self.readOnly = readOnly
        self.maxUploadBytes = maxUploadBytes
        self.tls = tls
        self.acceptedTypes = acceptedTypes
        self.misleadingNames = misleadingNames
        self.observerOptions = observerOptions
        self.changeLog = changeLog
        self.limits = limits
    }
}
