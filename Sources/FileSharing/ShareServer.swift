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
    let logger: Logger
    /// What `/metrics` reports.
    let metrics = ServerMetrics()
    /// Sign-ins against the users file, when there is one.
    let signIn: SignIn?
    private let boundPort = Mutex<Int?>(nil)

    /// Opens the folder (creating it if missing), its change log and its
    /// observer; nothing runs until ``run()`` (or ``start()``).
    /// - Throws: `FileWatchingError` for a folder that cannot be shared,
    ///   `AccountsError` for a users file that is missing or broken,
    ///   `ChangeLogError` when the change log cannot be opened (`.busy`:
    ///   another server shares the folder).
    /// - Parameter changePrinter: Called with each change's JSON line (the command prints them to stderr).
    public init(configuration: ShareConfiguration, logger: Logger, changePrinter: (@Sendable (String) -> Void)? = nil)
        throws
    {
        self.configuration = configuration
        self.logger = logger
        // Read before the folder is opened: a broken users file changes nothing.
        signIn = try configuration.usersFile.map { path in
            let users = try LiveUsers(path: path, logger: logger)
            return SignIn(
                check: PasswordCheck(users: users, hasher: configuration.passwordHasher),
                limits: configuration.signInLimits, logger: logger)
        }
        let folder: SharedFolder
        do {
            folder = try SharedFolder(rootPath: configuration.root, history: configuration.history, logger: logger)
        } catch {
            throw FileWatchingError(code: .io, message: error.message, path: configuration.root)
        }
        let state = WebDAVState(persistencePath: folder.rootPath + "/" + SharedFolder.privateFolder + "/dav-locks.json")
        core = try ShareCore(
            folder: folder, configuration: configuration, locks: state, logger: logger, changePrinter: changePrinter)
        webDAV = WebDAVFace(core: core, state: state, logger: logger)
    }

    /// The observer of the shared folder; its changes are the server's events.
    public var observer: FileObserver { core.observer }

    /// The numbered changes of the shared folder.
    public var changeLog: any ChangeLog { core.changeLog }

    /// Stops observing and closes the change log, so another server may open the folder.
    func stop() { core.stop() }

    /// The shared folder's absolute path.
    public var root: String { core.folder.rootPath }

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
        let snapshot = metricsSnapshot
        router.add(middleware: MetricsMiddleware(metrics: metrics, snapshot: snapshot))
        router.add(middleware: ErrorMiddleware())
        if let signIn {
            router.add(middleware: UsersAuthMiddleware(signIn: signIn, secure: configuration.tls != nil))
        } else if let credentials = configuration.credentials {
            router.add(middleware: AuthMiddleware(user: credentials.user, password: credentials.password))
        }
        if configuration.readOnly { router.add(middleware: ReadOnlyMiddleware()) }
        router.add(middleware: webDAV)
        router.add(middleware: RouteShapeMiddleware())
        router.addRoutes(PageFace().routes())
        let api = APIFace(core: core, readOnly: configuration.readOnly)
        router.addRoutes(api.routes(), atPath: "/api")
        router.addRoutes(HistoryFace(api: api).routes(), atPath: "/api")
        router.addRoutes(EventStreamFace(core: core).routes(), atPath: "/api")
        router.addRoutes(TusFace(core: core).routes(), atPath: "/api/tus")
        router.addRoutes(MetricsFace(metrics: metrics, snapshot: snapshot).routes())
        return router
    }

    /// The values `/metrics` reads when asked, beside those counted as they happen.
    private var metricsSnapshot: @Sendable () -> [(String, Double)] {
        { [core, webDAV] in
            let log = core.changeLog
            let latest = log.latest
            let oldest = log.oldest
            return [
                ("fileshare_event_streams", Double(core.changeStream.openStreams)),
                ("fileshare_change_log_latest_seq", Double(latest)),
                ("fileshare_change_log_oldest_seq", Double(oldest)),
                ("fileshare_change_log_records", Double(latest >= oldest ? latest - oldest + 1 : 0)),
                ("fileshare_webdav_locks", Double(webDAV.state.readingLocks { table, _ in table.locks.count })),
                ("fileshare_observer_items", Double(core.observer.itemCount)),
                // One server on its folder leads it; several servers (through a database) will say which.
                ("fileshare_leader", 1),
            ]
        }
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
        if let tls = configuration.tls {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate)
            let key = try NIOSSLPrivateKey(file: tls.key, format: .pem)
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            server = HTTPServerBuilder { responder in
                EventLoopChildChannel(
                    base: try TLSChannel(
                        HTTP1Channel(responder: responder, configuration: http1), tlsConfiguration: configuration))
            }
        } else {
            server = HTTPServerBuilder { responder in
                EventLoopChildChannel(base: HTTP1Channel(responder: responder, configuration: http1))
            }
        }
        return Application(
            router: makeRouter(),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "fileshare"),
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
        let app = try application(onListening: onListening)
        try core.start()
        defer {
            webDAV.materializeAllPlaceholders()
            core.stop()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            group.addTask { await self.core.trimChangeLog() }
            group.addTask { await self.webDAV.maintain() }
            group.addTask {
                // The folder removed or moved away ends the server.
                try await self.core.observer.waitUntilStopped()
            }
            // The first to end (a graceful shutdown, or the folder gone) ends the rest.
            defer {
                core.stop()
                group.cancelAll()
            }
            try await group.next()
        }
        // The observer writes its final state on its delivery thread: let it
        // finish before the process may end, so the next start reads the state
        // that goes with the change log.
        core.stop()
        try? await core.observer.waitUntilStopped()
    }
}
