import Accounts
public import ChangeLog
public import FileWatching
public import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization
import Versions

/// Shares a folder over HTTP: the web page at `/`, the JSON API at `/api/`
/// (`http-api.md`) and WebDAV at `/dav/`, with the folder watched beside it so every change (made
/// through the server or not) reaches `/api/events`.
///
/// The server only builds the router (the faces mounted over one
/// `ShareCore`) and runs the services; creating it starts nothing.
public final class ShareServer: Service {
    /// The configuration.
    public let configuration: ShareConfiguration
    let core: ShareCore
    let webDAV: WebDAVFace
    /// The log over HTTP, read by cursor for `/api/changes` and `/api/events`.
    let changeStream: ChangeStream
    let logger: Logger
    /// What `/metrics` reports.
    let metrics = ServerMetrics()
    /// Sign-ins against the users file, when there is one.
    let signIn: SignIn?
    /// The share links: in the private folder, or the shared database.
    let links: LinkStore
    /// The record of every access, in the private folder.
    public let audit: AuditLog
    /// Records each request once answered; one, so both ways a download is answered count it once.
    let auditMiddleware: AuditMiddleware
    /// Connections the kernel queues for the server to accept. Hummingbird's
    /// 256 overflowed when a few hundred clients connected at once on a
    /// loaded machine: the connections past it, and any other client's
    /// meanwhile, waited for their SYN to be sent again (1 s, then 3 s).
    /// nginx asks for 511; the kernel caps it at `net.core.somaxconn`.
    static let listenBacklog = 1024
    /// Small reads answered on the event loops (``SmallReads``).
    let smallReadTally = SmallReads.Tally()
    /// Of those, the ones answered on the bytes, ahead of the decoder (``SmallReadLane``).
    let smallReadAheadTally = SmallReads.Tally()
    private let boundPort = Mutex<Int?>(nil)

    /// Opens the folder (creating it if missing), its change log and its
    /// observer; nothing runs until ``run()`` (or ``start()``).
    /// - Throws: `FileWatchingError` for a folder that cannot be shared,
    ///   `AccountsError` for a users file that is missing or broken,
    ///   ``ConfigurationError`` for a users file or TLS key inside the shared folder,
    ///   `ChangeLogError` when the change log cannot be opened (`.busy`:
    ///   another server shares the folder).
    /// - Parameter changePrinter: Called with each change's JSON line (the command prints them to stderr).
    public init(configuration: ShareConfiguration, logger: Logger, changePrinter: (@Sendable (String) -> Void)? = nil)
        throws
    {
        self.configuration = configuration
        self.logger = logger
        // Checked and read before the folder is opened: a refusal changes nothing.
        try configuration.refusePrivateFilesInsideShare()
        let users = try configuration.usersFile.map { path in try LiveUsers(path: path, logger: logger) }
        let folder: SharedFolder
        do {
            folder = try SharedFolder(
                rootPath: configuration.root, stateFolder: configuration.stateFolder, history: configuration.history,
                sharedByServers: configuration.sharedDatabase != nil, logger: logger)
        } catch {
            throw FileWatchingError(code: .io, message: error.message, path: configuration.root)
        }
        let activity = ActivityFeed()
        // Through a database, every server of the folder sees the same locks.
        let lockStore: any DAVLockStore =
            configuration.sharedDatabase?.locks
            ?? FileLockStore(persistencePath: folder.privatePath + "/dav-locks.json")
        let state = WebDAVState(store: lockStore, activity: activity)
        // Without a database, sessions are kept in the private folder: a restart signs no one out.
        let privateFolder = folder.privatePath
        signIn = ShareServer.signIn(
            configuration, users: users,
            sessions: configuration.sharedDatabase?.sessions
                ?? MemorySessionStore(file: SessionsFile(path: privateFolder + "/sessions.json", logger: logger)),
            logger: logger)
        core = try ShareCore(
            folder: folder, configuration: configuration, locks: state, activity: activity, logger: logger,
            changePrinter: changePrinter)
        webDAV = WebDAVFace(core: core, state: state, logger: logger)
        changeStream = ChangeStream(log: core.changeLog)
        links = LinkStore(
            records: configuration.sharedDatabase?.links
                ?? ShareLinksFile(path: privateFolder + "/shares.json", logger: logger),
            visitors: configuration.sharedDatabase?.linkVisitors
                ?? MemorySessionStore(file: SessionsFile(path: privateFolder + "/link-sessions.json", logger: logger)),
            hasher: configuration.passwordHasher, limits: configuration.signInLimits)
        audit = AuditLog(folder: AuditReader.folder(forPrivateFolder: folder.privatePath), logger: logger)
        auditMiddleware = AuditMiddleware(audit: audit)
    }

    /// How people sign in: against the users file, or as the one user of
    /// `--user`/`--password` through the same sign-in page and sessions (the
    /// page never shows the browser's password dialog); `nil` when no
    /// credentials are asked, for a name a users file could not hold, or
    /// when servers share a database (their sessions are tied to a stamp of
    /// the password, which each server keys differently): then HTTP Basic
    /// alone, ``AuthMiddleware``.
    /// - Parameters:
    ///   - users: The users file, read already (before the folder is opened).
    ///   - sessions: Where the sessions are kept.
    static func signIn(
        _ configuration: ShareConfiguration, users: LiveUsers?, sessions: any SessionStore, logger: Logger
    ) -> SignIn? {
        if let users {
            return SignIn(
                check: PasswordCheck(users: users, hasher: configuration.passwordHasher),
                limits: configuration.signInLimits, sessions: sessions, logger: logger)
        }
        guard let credentials = configuration.credentials, configuration.sharedDatabase == nil else { return nil }
        let hasher = MemorySecretHasher()
        let user = UserDirectory.User(passwordHash: hasher.hash(credentials.password), isAdmin: true)
        guard let directory = try? UserDirectory(users: [credentials.user: user], groups: [:], grants: []) else {
            return nil
        }
        return SignIn(
            check: PasswordCheck(users: LiveUsers(fixed: directory, logger: logger), hasher: hasher),
            limits: configuration.signInLimits, sessions: sessions, logger: logger)
    }

    /// What answers small reads on the event loops, with the router's authentication.
    var smallReads: SmallReads? {
        guard configuration.smallReadsOnEventLoop else { return nil }
        let authentication: SmallReads.Authentication
        if configuration.usersFile == nil, let credentials = configuration.credentials {
            // The one user of --user: the lane checks HTTP Basic itself at
            // once; a request with the page's session goes to the router.
            authentication = .basic(AuthMiddleware(user: credentials.user, password: credentials.password))
        } else if let signIn {
            authentication = .users(signIn)
        } else {
            authentication = .none
        }
        return SmallReads(
            folder: core.folder, authentication: authentication, webDAV: webDAV,
            audit: auditMiddleware, metrics: metrics, serverName: ShareServer.serverName, tally: smallReadTally,
            answeredAhead: smallReadAheadTally)
    }

    /// The `Server` field of every answer.
    static let serverName = "fileshare"

    /// The observer of the shared folder; its changes are the server's events.
    public var observer: FileObserver { core.observer }

    /// The numbered changes of the shared folder.
    public var changeLog: any ChangeLog { core.changeLog }

    /// What clients are doing to items now, in order: WebDAV locks taken and
    /// released, uploads under way (``FolderActivity``). For code in the same
    /// process that presents those items, such as a `Documents` workspace:
    ///
    /// ```swift
    /// Task {
    ///     for await activity in server.activities() {
    ///         switch activity.kind {
    ///         case .locked(let below), .unlocked(let below):
    ///             let held = if case .locked = activity.kind { true } else { false }
    ///             await workspace.lockChanged(at: ItemPath(activity.path), coversBelow: below, held: held)
    ///         case .receiving(let offset, let length):
    ///             await workspace.progressChanged(at: ItemPath(activity.path), offset: offset, length: length)
    ///         case .received:
    ///             await workspace.progressChanged(at: ItemPath(activity.path), offset: nil, length: nil)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// Each call makes a stream of its own, from the activity after it on.
    /// A consumer that falls behind by more than `buffer` activities loses the
    /// oldest of them.
    public func activities(buffer: Int = 10_000) -> AsyncStream<FolderActivity> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: FolderActivity.self, bufferingPolicy: .bufferingNewest(buffer))
        let activity = core.activity
        let key = activity.add { continuation.yield($0) }
        continuation.onTermination = { _ in activity.remove(key) }
        return stream
    }

    /// Stops observing and closes the change log, so another server may open the folder.
    func stop() {
        core.stop()
        audit.finish()
    }

    /// The shared folder's absolute path.
    public var root: String { core.folder.rootPath }

    /// How many versions and trash items are kept in force now.
    public var history: HistoryOptions {
        HistoryOptions(versions: core.folder.history.versions.retention, trash: core.folder.history.trash.retention)
    }

    /// Keeps versions and trash items as `options` say from now on, and
    /// removes at once what they no longer keep.
    public func applyHistory(_ options: HistoryOptions) async {
        core.folder.history.versions.setRetention(options.versions)
        core.folder.history.trash.setRetention(options.trash)
        await core.trimHistory()
    }

    /// Reads the users file again now if it changed (it is looked at once a
    /// second anyway): its users and their rights apply from the next request.
    public func reloadUsers() {
        signIn?.check.users.reloadIfChanged()
    }

    /// The port the server listens on, once it runs.
    public var port: Int? { boundPort.withLock { $0 } }

    /// The page's address, once the server runs.
    public var url: String? {
        guard let port else { return nil }
        let scheme = configuration.tls == nil ? "http" : "https"
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(scheme)://\(host):\(port)/"
    }

    /// Starts observing the folder (``run()`` does it too; calling it again does nothing).
    /// - Throws: ``FileWatchingError`` when the observer cannot start.
    public func start() throws {
        try core.start()
    }

    /// The router: the faces mounted over the core, behind authentication and read-only mode.
    func makeRouter() -> Router<ShareContext> {
        let router = Router(context: ShareContext.self)
        if configuration.tls != nil { router.add(middleware: StrictTransportMiddleware()) }
        let snapshot = metricsSnapshot
        router.add(middleware: MetricsMiddleware(metrics: metrics, snapshot: snapshot))
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: auditMiddleware)
        router.add(middleware: RequestGuardMiddleware(loopbackHostsOnly: configuration.answersLoopbackOnly))
        let api = APIFace(core: core, readOnly: configuration.readOnly)
        // Before authentication: a link needs no account.
        router.add(
            middleware: LinkFace(core: core, links: links, api: api, signIn: signIn, secure: configuration.tls != nil))
        if let signIn {
            let share = core.folder.rootPath.split(separator: "/").last.map(String.init) ?? "/"
            router.add(middleware: UsersAuthMiddleware(signIn: signIn, secure: configuration.tls != nil, share: share))
        } else if let credentials = configuration.credentials {
            router.add(middleware: AuthMiddleware(user: credentials.user, password: credentials.password))
        } else {
            router.add(middleware: OpenShareMiddleware())
        }
        if configuration.readOnly { router.add(middleware: ReadOnlyMiddleware()) }
        router.add(middleware: webDAV)
        router.add(middleware: RouteShapeMiddleware())
        router.addRoutes(PageFace().routes())
        router.addRoutes(api.routes(), atPath: "/api")
        router.addRoutes(SharesAPIFace(core: core, links: links, audit: audit).routes(), atPath: "/api")
        router.addRoutes(AuditFace(audit: audit).routes(), atPath: "/api")
        router.addRoutes(HistoryFace(api: api).routes(), atPath: "/api")
        router.addRoutes(EventStreamFace(core: core, stream: changeStream).routes(), atPath: "/api")
        router.addRoutes(TusFace(core: core).routes(), atPath: "/api/tus")
        router.addRoutes(MetricsFace(metrics: metrics, snapshot: snapshot).routes())
        return router
    }

    /// The values `/metrics` reads when asked, beside those counted as they happen.
    private var metricsSnapshot: @Sendable () -> [(String, Double)] {
        { [core, webDAV, changeStream] in
            let log = core.changeLog
            let lag = core.followingLog?.lag ?? ChangeLogLag(records: 0, seconds: 0)
            let machine = core.leadership.withLock { $0 }
            let latest = log.latest
            let oldest = log.oldest
            let thumbnails = core.thumbnailFlights
            return [
                ("fileshare_event_streams", Double(changeStream.openStreams)),
                ("fileshare_change_log_latest_seq", Double(latest)),
                ("fileshare_change_log_oldest_seq", Double(oldest)),
                ("fileshare_change_log_records", Double(latest >= oldest ? latest - oldest + 1 : 0)),
                ("fileshare_webdav_locks", Double(webDAV.state.lockCount)),
                ("fileshare_observer_items", Double(core.observer.itemCount)),
                ("fileshare_leader", core.isLeader ? 1 : 0),
                ("fileshare_change_log_lag_records", Double(lag.records)),
                ("fileshare_change_log_lag_seconds", lag.seconds),
                ("fileshare_takeovers", Double(machine.takeovers)),
                ("fileshare_last_takeover_seconds", machine.lastTakeover.map(ShareServer.seconds) ?? 0),
                ("fileshare_thumbnails_started", Double(thumbnails.startedCount)),
                ("fileshare_thumbnails_running", Double(thumbnails.count)),
                ("fileshare_thumbnail_failures_remembered", Double(thumbnails.failureCount)),
            ]
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The Hummingbird application, for tests through the router.
    public func application(onListening: (@Sendable (String) async -> Void)? = nil) throws -> some ApplicationProtocol {
        let limits = configuration.limits
        let metrics = self.metrics
        // Hummingbird's idle timeout, restarted by every part read or
        // written, bounds a silent body; the header and keep-alive bounds are
        // deadlines of our own (ConnectionDeadlineHandler).
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                ConnectionDeadlineHandler(limits: limits), ExpectContinueHandler(),
                TrafficCounter.Installer(metrics: metrics),
            ],
            idleTimeout: TimeAmount(limits.bodyIdleTimeout))
        // Each connection's requests run on its event loop (`EventLoopChildChannel`).
        let server: HTTPServerBuilder
        let smallReads = self.smallReads
        // Hummingbird's idle bound must see a request now and then (`SmallReadLane`).
        let routeAtLeastEvery = TimeAmount.nanoseconds(TimeAmount(limits.bodyIdleTimeout).nanoseconds / 2)
        if let tls = configuration.tls {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate)
            let key = try NIOSSLPrivateKey(file: tls.key, format: .pem)
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            server = HTTPServerBuilder { responder in
                EventLoopChildChannel(
                    base: try TLSChannel(
                        HTTP1Channel(responder: responder, configuration: http1), tlsConfiguration: configuration),
                    smallReads: smallReads, routeAtLeastEvery: routeAtLeastEvery)
            }
        } else {
            server = HTTPServerBuilder { responder in
                EventLoopChildChannel(
                    base: HTTP1Channel(responder: responder, configuration: http1), smallReads: smallReads,
                    routeAtLeastEvery: routeAtLeastEvery)
            }
        }
        return Application(
            router: makeRouter(),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: ShareServer.serverName,
                backlog: ShareServer.listenBacklog),
            onServerRunning: { [weak self, logger = self.logger] channel in
                // First in the pipeline, before NIO's accept handlers see the error.
                try? await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(
                        AcceptPauseHandler(pause: limits.acceptPause, logger: logger), position: .first)
                }.get()
                guard let self else { return }
                self.boundPort.withLock { $0 = channel.localAddress?.port }
                if let onListening, let url = self.url { await onListening(url) }
            },
            logger: logger
        )
    }

    /// Serves until graceful shutdown; throws when the shared folder is removed.
    public func run() async throws {
        try await run(onListening: nil)
    }

    /// Serves until graceful shutdown, telling `onListening` the page's address once it listens.
    public func run(onListening: (@Sendable (String) async -> Void)?) async throws {
        // Through a database, announced once the role is known (this server
        // leads, with its observer caught up, or another does).
        var announce: (@Sendable (String) async -> Void)? = nil
        if let onListening {
            let core = self.core
            announce = { @Sendable url in
                await core.waitUntilSettled()
                await onListening(url)
            }
        }
        let app = try application(onListening: announce)
        try core.start()
        defer {
            webDAV.materializeAllPlaceholders()
            core.stop()
            audit.finish()
        }
        // Asked to end in the reverse of this order: requests first (they
        // finish), then the server's own work, then the observer, and
        // leadership (which lets go of the folder's lock) last. The server's
        // own work, outside any request, may do everything; requests start as
        // nobody whoever runs the server: only their authentication, or a
        // link, says who they are (`Requester`).
        let core = self.core
        let webDAV = self.webDAV
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let shared = configuration.sharedDatabase, let lock = shared.lock {
            // The takeover (the log's replay) and what runs while leading (the Inbox).
            let driver = LeadershipDriver(core: core, lock: lock, whileLeading: shared.whileLeading, logger: logger)
            services.append(.init(service: LastingWork("leadership") { await driver.run() }))
        }
        services += [
            // The folder removed or moved away ends the server with the observer's error.
            .init(service: FolderPresence(core: core), successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: LastingWork("change log trim") { await core.trimChangeLog() }),
            .init(service: LastingWork("WebDAV maintenance") { await webDAV.maintain() }),
            .init(service: LastingWork("upload expiry") { await core.expireUploadsWhileLeading() }),
            .init(
                service: ActingService(base: app, requester: .nobody),
                successTerminationBehavior: .gracefullyShutdownGroup
            ),
        ]
        // The first to end (a graceful shutdown, or the folder gone) ends the rest.
        try await ServiceGroup(configuration: .init(services: services, logger: logger)).run()
        // The observer writes its final state on its delivery thread: let it
        // finish before the process may end, so the next start reads the state
        // that goes with the change log.
        core.stop()
        try? await core.observer.waitUntilStopped()
        // What the audit holds is written before the process may end.
        await audit.close()
    }
}
