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
    private let boundPort = Mutex<Int?>(nil)

    /// Opens the folder (creating it if missing), its change log and its
    /// observer; nothing runs until ``run()`` (or ``start()``).
    /// - Throws: `FileWatchingError` for a folder that cannot be shared,
    ///   `ChangeLogError` when the change log cannot be opened (`.busy`:
    ///   another server shares the folder).
    /// - Parameter changePrinter: Called with each change's JSON line (the command prints them to stderr).
    public init(configuration: ShareConfiguration, logger: Logger, changePrinter: (@Sendable (String) -> Void)? = nil)
        throws
    {
        self.configuration = configuration
        self.logger = logger
        let folder: SharedFolder
        do {
            folder = try SharedFolder(rootPath: configuration.root)
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
        router.add(middleware: ErrorMiddleware())
        if let credentials = configuration.credentials {
            router.add(middleware: AuthMiddleware(user: credentials.user, password: credentials.password))
        }
        if configuration.readOnly { router.add(middleware: ReadOnlyMiddleware()) }
        router.add(middleware: webDAV)
        router.add(middleware: RouteShapeMiddleware())
        router.addRoutes(PageFace().routes())
        router.addRoutes(APIFace(core: core, readOnly: configuration.readOnly).routes(), atPath: "/api")
        router.addRoutes(EventStreamFace(core: core).routes(), atPath: "/api")
        router.addRoutes(TusFace(core: core).routes(), atPath: "/api/tus")
        return router
    }

    /// The Hummingbird application, for tests through the router.
    public func application(onListening: (@Sendable (String) async -> Void)? = nil) throws -> some ApplicationProtocol {
        let limits = configuration.limits
        // Hummingbird's idle timeout, restarted by every part read or
        // written, bounds a silent body; the header and keep-alive bounds are
        // deadlines of our own (ConnectionDeadlineHandler).
        let http1 = HTTPServerBuilder.http1(
            configuration: .init(
                additionalChannelHandlers: [ConnectionDeadlineHandler(limits: limits), ExpectContinueHandler()],
                idleTimeout: TimeAmount(limits.bodyIdleTimeout)))
        var server = http1
        if let tls = configuration.tls {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate)
            let key = try NIOSSLPrivateKey(file: tls.key, format: .pem)
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            server = try HTTPServerBuilder.tls(http1, tlsConfiguration: configuration)
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
