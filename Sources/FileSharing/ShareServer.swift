public import ChangeLog
public import DocumentTypes
public import FileWatching
public import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

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
    /// The address to listen on (loopback by default).
    public var host: String
    /// The port (0 picks a free one).
    public var port: Int
    /// Credentials every request must carry, or `nil` for none.
    public var credentials: Credentials?
    /// Whether no change through the server is allowed (403).
    public var readOnly: Bool
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
    /// How the folder is observed. Without a state file of its own, the
    /// server keeps the observer's state in its private folder, so that
    /// what changed while it was stopped enters the change log when it starts.
    public var observerOptions: ObserverOptions
    /// How the change log (`.fileshare/changes/`) is kept.
    public var changeLog: FileChangeLog.Options

    /// Creates a configuration; the defaults are those of `fileshare serve`.
    public init(
        root: String, host: String = "127.0.0.1", port: Int = 8080, credentials: Credentials? = nil,
        readOnly: Bool = false, maxUploadBytes: Int64? = nil, tls: (certificate: String, key: String)? = nil,
        acceptedTypes: AcceptedTypes? = nil, observerOptions: ObserverOptions = ObserverOptions(),
        changeLog: FileChangeLog.Options = FileChangeLog.Options()
    ) {
        self.root = root
        self.host = host
        self.port = port
        self.credentials = credentials
        self.readOnly = readOnly
        self.maxUploadBytes = maxUploadBytes
        self.tls = tls
        self.acceptedTypes = acceptedTypes
        self.observerOptions = observerOptions
        self.changeLog = changeLog
    }
}

/// Shares a folder over HTTP: the web page at `/`, the JSON API at `/api/`
/// (`http-api.md`) and WebDAV at `/dav/`, with the folder watched beside it so every change (made
/// through the server or not) reaches `/api/events`.
public final class ShareServer: Service {
    /// The configuration.
    public let configuration: ShareConfiguration
    /// The observer of the shared folder.
    public let observer: FileObserver
    let folder: SharedFolder
    /// The numbered changes of the folder.
    public let changeLog: FileChangeLog
    let feed: ChangeFeed
    let changeStream: ChangeStream
    let origins = OriginRegistry()
    let uploads: ResumableUploads
    /// What uploads are checked against; `nil` when every type is accepted.
    let uploadTypes: UploadTypePolicy?
    let dav: WebDAVState
    let logger: Logger
    private let observation: ObservationToken
    private let boundPort = Mutex<Int?>(nil)

    /// Opens the folder (creating it if missing) and its change log, and starts observing it.
    /// - Throws: `FileWatchingError` for a folder that cannot be shared,
    ///   `ChangeLogError` when the change log cannot be opened (`.busy`:
    ///   another server shares the folder).
    /// - Parameter changePrinter: Called with each change's JSON line (the command prints them to stderr).
    public init(configuration: ShareConfiguration, logger: Logger, changePrinter: (@Sendable (String) -> Void)? = nil)
        throws
    {
        self.configuration = configuration
        self.logger = logger
        do {
            folder = try SharedFolder(rootPath: configuration.root)
        } catch {
            throw FileWatchingError(code: .io, message: error.message, path: configuration.root)
        }
        changeLog = try FileChangeLog(
            folder: FileChangeLog.folder(forSharedFolder: folder.rootPath), options: configuration.changeLog, logger: logger)
        var observerOptions = configuration.observerOptions
        if observerOptions.stateFile == nil {
            let stateFile = folder.rootPath + "/" + SharedFolder.privateFolder + "/observer-state"
            observerOptions.stateFile = stateFile
            // The first start has nothing that changed while it was stopped:
            // the folder as it is now is where the log begins (clients list
            // it), not thousands of `added` records.
            if access(stateFile, F_OK) != 0 {
                _ = try FileObserver.changesSinceSavedState(
                    root: folder.rootPath, stateFile: stateFile, options: observerOptions, logger: logger)
            }
        }
        observer = try FileObserver(root: folder.rootPath, options: observerOptions, logger: logger)
        let feed = ChangeFeed(log: changeLog, origins: origins, logger: logger, printer: changePrinter)
        self.feed = feed
        changeStream = ChangeStream(log: changeLog)
        uploads = ResumableUploads(folder: folder)
        dav = WebDAVState(persistencePath: folder.rootPath + "/" + SharedFolder.privateFolder + "/dav-locks.json")
        uploadTypes = UploadTypePolicy(configuration.acceptedTypes)
        observation = observer.observe { batch in feed.record(batch) }
        try observer.start()
    }

    /// The shared folder's absolute path.
    public var root: String { folder.rootPath }

    /// The port the server listens on, once it runs.
    public var port: Int? { boundPort.withLock { $0 } }

    /// The page's address, once the server runs.
    public var url: String? {
        guard let port else { return nil }
        let scheme = configuration.tls == nil ? "http" : "https"
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(scheme)://\(host):\(port)/"
    }

    /// The Hummingbird application, for tests through the router.
    public func application(onListening: (@Sendable (String) async -> Void)? = nil) throws -> some ApplicationProtocol {
        let http1 = HTTPServerBuilder.http1(configuration: .init(
            additionalChannelHandlers: [ExpectContinueHandler()], idleTimeout: .minutes(5)))
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
            onServerRunning: { [weak self] channel in
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
        defer {
            materializeAllPlaceholders()
            stop()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            group.addTask { await self.trimChangeLog() }
            group.addTask { await self.maintainWebDAV() }
            group.addTask {
                // The folder removed or moved away ends the server.
                try await self.observer.waitUntilStopped()
            }
            // The first to end (a graceful shutdown, or the folder gone) ends the rest.
            defer {
                stop()
                group.cancelAll()
            }
            try await group.next()
        }
    }
}

extension ShareServer {
    /// Stops observing and closes the change log (after writing what it
    /// holds), so that another server may open the folder. Event streams end.
    func stop() {
        observer.stop()
        changeLog.close()
    }

    /// Applies the change log's retention now and every hour, until cancelled.
    func trimChangeLog(every interval: Duration = .seconds(3600)) async {
        while !Task.isCancelled {
            do {
                try await changeLog.trim()
            } catch {
                logger.error("cannot trim the change log", metadata: ["error": "\(error.message)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
