import Accounts
import ArgumentParser
import ChangeLog
import DocumentTypes
import FileSharing
import FileWatching
import Inbox
import Logging
import Previews
import ServiceLifecycle
import SharedState
import Synchronization
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve [DIR]`: shares DIR over HTTP, as `cli.md` and `http-api.md` say.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Share DIR over HTTP: a web page at /, a JSON API at /api/, WebDAV at /dav/.",
        discussion: """
            Listens on 127.0.0.1:8080 by default. Every request needs credentials: give them with \
            FILESHARE_USER and FILESHARE_PASSWORD (or --user and --password); the page signs in with \
            its form, scripts and WebDAV clients send HTTP Basic. Without them a random password is \
            made and printed to stderr once the server listens. With --users FILE, people sign in as \
            the users of FILE ('fileshare users') and see and change only what they are granted; FILE is \
            read again when it changes. With --print-changes, changes to DIR are printed to stderr \
            as JSON lines. With --accept or --types, uploads of other types are refused (415); with \
            --inbox, what arrives in DIR/Inbox is taken in as 'fileshare inbox' does. Stops cleanly on \
            SIGINT or SIGTERM.
            """
    )

    @Argument(help: "The folder to share (created if missing; ./Documents unless given here or in the configuration).")
    var directory: String?

    @Option(
        help: ArgumentHelp(
            "A configuration file (YAML or JSON; FILESHARE_CONFIG): every setting below, and those with no flag. The environment, then flags, override it.",
            valueName: "FILE"))
    var config: String?

    @Flag(
        name: .customLong("check-config"),
        help: "Print the settings that would apply and where each came from, then exit (2 when one is wrong).")
    var checkConfig = false

    @Option(help: "The port (0 picks a free one; 8080 unless set).")
    var port: Int?

    @Option(help: ArgumentHelp("The address to listen on (127.0.0.1 unless set).", valueName: "ADDRESS"))
    var bind: String?

    @Option(help: "The one user's name (FILESHARE_USER), for the page's sign-in and HTTP Basic.")
    var user: String?

    @Option(help: "The one user's password (FILESHARE_PASSWORD; the environment keeps it out of the process list).")
    var password: String?

    @Option(
        help: ArgumentHelp(
            "The users file ('fileshare users'): sign-in as its users, with their rights.", valueName: "FILE"))
    var users: String?

    @Flag(name: .customLong("no-auth"), help: "No credentials (only when bound to a loopback address).")
    var noAuth = false

    @Flag(help: "Log only warnings and errors on stderr (no notices).")
    var quiet = false

    @Flag(
        name: .customLong("print-changes"),
        help: "Print each change of DIR (and each Inbox event) to stderr as a JSON line.")
    var printChanges = false

    @Option(
        name: .customLong("tls-cert"), help: ArgumentHelp("A PEM certificate chain, to serve HTTPS.", valueName: "FILE")
    )
    var tlsCertificate: String?

    @Option(
        name: .customLong("tls-key"), help: ArgumentHelp("The PEM private key of the certificate.", valueName: "FILE"))
    var tlsKey: String?

    @Flag(name: .customLong("read-only"), help: "Allow no change through the server (403).")
    var readOnly = false

    @Option(
        name: .customLong("state-folder"),
        help: ArgumentHelp(
            "Where to keep the server's state when DIR is shared read-only (FILESHARE_STATE_FOLDER); by default inside DIR, or, when DIR cannot be written, in ~/.local/state/fileshare.",
            valueName: "DIR"))
    var stateFolder: String?

    @Flag(
        name: .customLong("inbox"),
        help:
            "Also take in the documents that arrive in DIR/Inbox (as 'fileshare inbox' does; the types of --accept/--types apply), with its events on stderr."
    )
    var takesInInbox = false

    @Option(
        name: .customLong("max-upload"),
        help: ArgumentHelp("The largest upload accepted, in bytes (suffixes K, M, G).", valueName: "SIZE"))
    var maxUpload: String?

    @Option(
        name: .customLong("accept"),
        help: ArgumentHelp(
            "The only types uploads may be: type identifiers or file name extensions, comma-separated (public.image,com.adobe.pdf,epub); every kind of them is accepted.",
            valueName: "ID[,ID...]"))
    var accept: String?

    @Option(
        name: .customLong("types"),
        help: ArgumentHelp(
            "A document types file (JSON, YAML or TOML): its accepted types apply, and its declared types can be named by --accept.",
            valueName: "FILE"))
    var typesFile: String?

    @Option(
        name: .customLong("header-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "The most time from a request's first byte to the end of its header; past it: 408 and close (60 unless set).",
            valueName: "SECONDS"))
    var headerTimeout: String?

    @Option(
        name: .customLong("keep-alive-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "How long a connection may stay open with no request under way (75 unless set).", valueName: "SECONDS"))
    var keepAliveTimeout: String?

    @Option(
        name: .customLong("body-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "How long a request body may go without a byte (a slow but live upload goes on; 300 unless set).",
            valueName: "SECONDS"))
    var bodyTimeout: String?

    @Option(
        name: .customLong("database"),
        help: ArgumentHelp(
            "Keep the change log, WebDAV locks, resumable uploads, sessions and share links in this PostgreSQL database (FILESHARE_DATABASE), shared by every server of DIR; migrated at start.",
            valueName: "URL"))
    var database: String?

    @Flag(
        help: ArgumentHelp(
            "Put an upload whose name lies about its content (a PDF sent as notes.txt) in place under the corrected name (notes.pdf, never replacing a file) rather than refusing it (415); with --inbox, take such documents in so too."
        ))
    var fixExtensions = false

    /// The flags given, by the key of their setting, as text: the first layer.
    var givenFlags: [String: String] {
        var given: [String: String?] = [
            "folder": directory, "port": port.map(String.init), "bind": bind, "user": user, "password": password,
            "users": users, "tls-cert": tlsCertificate, "tls-key": tlsKey, "max-upload": maxUpload,
            "accept": accept, "types": typesFile, "header-timeout": headerTimeout,
            "keep-alive-timeout": keepAliveTimeout, "body-timeout": bodyTimeout, "database": database,
            "state-folder": stateFolder,
        ]
        // A switch given turns its setting on; not given, it leaves it to the other layers.
        for (key, on) in [
            ("no-auth", noAuth), ("read-only", readOnly), ("inbox", takesInInbox), ("fix-extensions", fixExtensions),
            ("quiet", quiet), ("print-changes", printChanges),
        ] where on {
            given[key] = "true"
        }
        return given.compactMapValues { $0 }
    }

    /// Bytes from a size such as `500M` (see ``ServeSetting/parseSize(_:)``).
    static func parseSize(_ text: String) -> Int64? { ServeSetting.parseSize(text) }

    static func isLoopback(_ address: String) -> Bool {
        address == "localhost" || address == "::1" || address.hasPrefix("127.")
    }

    /// The connection limits `settings` give.
    static func limits(_ settings: ServeSettings) -> ConnectionLimits {
        ConnectionLimits(
            requestHeaderTimeout: .milliseconds(settings.headerTimeout.nanoseconds / 1_000_000),
            keepAliveTimeout: .milliseconds(settings.keepAliveTimeout.nanoseconds / 1_000_000),
            bodyIdleTimeout: .milliseconds(settings.bodyTimeout.nanoseconds / 1_000_000))
    }

    func run() async throws {
        let environment = ProcessInfoLite.environment
        let loader = ServeConfigurationLoader(
            flags: givenFlags, environment: environment,
            filePath: config ?? environment["FILESHARE_CONFIG"].flatMap { $0.isEmpty ? nil : $0 })
        let loaded: LoadedConfiguration
        do {
            loaded = try await loader.load()
        } catch {
            for problem in error.problems { CommandOutput.writeError("fileshare: \(problem)\n") }
            Glibc.exit(2)
        }
        let settings = loaded.settings
        let tls = Serve.checkedTLS(settings)
        let acceptedTypes: AcceptedTypes?
        do {
            acceptedTypes = try TypeOptions.acceptedTypes(typesFile: settings.types, accept: settings.accept)
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        if checkConfig {
            CommandOutput.write(ServeConfigurationLoader.report(loaded.resolved))
            return
        }
        // Trapped before the server starts: an untrapped SIGHUP ends the process.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let logger = CommandOutput.startLogging("fileshare.serve", level: settings.quiet ? .warning : .notice)
        if let path = loader.filePath { logger.notice("read the configuration from \(path)") }
        var credentials: ShareConfiguration.Credentials? = nil
        // A password made here is printed only once the server listens: a start that fails shows none.
        var madePassword: String?
        if settings.users == nil && !settings.noAuth {
            if let user = settings.user, let password = settings.password {
                credentials = .init(user: user, password: password)
            } else {
                let made = Serve.randomPassword()
                credentials = .init(user: "fileshare", password: made)
                madePassword = made
            }
        }
        let folder: ServeFolder
        do {
            folder = try ServeFolder.prepare(settings.folder, readOnly: settings.readOnly, state: settings.stateFolder)
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        let directory = folder.path
        /// Ends the command, first taking back what a start that failed made.
        func failStart(_ message: String, code: Int32) -> Never {
            folder.undo()
            CommandOutput.fail(message, code: code)
        }
        var configuration = ShareConfiguration(
            root: directory, host: settings.bind, port: settings.port, credentials: credentials,
            readOnly: settings.readOnly, maxUploadBytes: settings.maxUpload, tls: tls, acceptedTypes: acceptedTypes,
            misleadingNames: settings.fixExtensions ? .correct : .refuse,
            changeLog: FileChangeLog.Options(retention: settings.changeRetention), limits: Serve.limits(settings))
        configuration.usersFile = settings.users
        configuration.stateFolder = folder.stateFolder
        if let state = folder.stateFolder {
            logger.notice("keeping the server's state in \(state), outside the folder shared read-only")
        }
        configuration.history = settings.history
        configuration.pendingUploads = settings.pendingUploads
        configuration.signInLimits = settings.signInLimits
        configuration.thumbnailsAhead = settings.thumbnailsAhead
        configuration.thumbnailer = ExternalThumbnailer(
            limits: ExternalThumbnailer.Limits(
                time: settings.thumbnailTimeLimit, concurrent: settings.thumbnailsConcurrent),
            size: settings.thumbnailSize)
        configuration.imageThumbnailer = ImageThumbnailer(
            size: settings.thumbnailSize, concurrent: settings.thumbnailsConcurrent,
            timeLimit: settings.thumbnailTimeLimit)
        Serve.raiseOpenFileLimit(logger: logger)
        /// Serves until stopped, with the shared database's log and stores when there is one.
        func serve(shared: SharedChangeLog?) async throws {
            let takesInInbox = settings.inbox
            let fixExtensions = settings.fixExtensions
            let printChanges = settings.printChanges
            if let shared {
                // Only the leader takes in the Inbox, with its observer, while it leads.
                let inbox: (@Sendable (FileObserver) async -> Void)? =
                    takesInInbox
                    ? { @Sendable observer in
                        await Serve.runInbox(
                            observer: observer, acceptedTypes: acceptedTypes,
                            fixExtensions: fixExtensions, printChanges: printChanges, logger: logger)
                    } : nil
                configuration.sharedDatabase = shared.configuration(
                    whileLeading: inbox, uploadLifetime: configuration.pendingUploads.lifetime)
            }
            let changePrinter: (@Sendable (String) -> Void)?
            if settings.printChanges {
                changePrinter = { line in CommandOutput.writeError(line + "\n") }
            } else {
                changePrinter = nil
            }
            let server: ShareServer
            do {
                server = try ShareServer(configuration: configuration, logger: logger, changePrinter: changePrinter)
            } catch let error as FileWatchingError {
                failStart(error.message, code: 2)
            } catch let error as ChangeLogError {
                // Another server on the folder, or a log that cannot be written: a failure at run time.
                // Nothing is taken back: the private state may be that other server's.
                CommandOutput.fail(error.message, code: 1)
            } catch let error as AccountsError {
                failStart(error.message, code: 2)
            } catch let error as ConfigurationError {
                failStart(error.message, code: 2)
            }
            let announced = ShareAnnouncement(
                root: server.root, madePassword: madePassword, madeFolder: folder.made ? directory : nil)
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
                .init(
                    service: ListeningServer(server: server, announcement: announced),
                    successTerminationBehavior: .gracefullyShutdownGroup),
                .init(
                    service: ConfigurationReloader(
                        loader: loader, loaded: loaded, server: server, signals: hangups, logger: logger),
                    successTerminationBehavior: .ignore),
            ]
            if takesInInbox && shared == nil {
                do {
                    let processor = try InboxProcessor(
                        root: server.root,
                        options: InboxOptions(
                            acceptedTypes: acceptedTypes ?? .all(), misleadingNames: fixExtensions ? .correct : .refuse),
                        logger: logger,
                        observer: server.observer,
                        report: { event in if printChanges { CommandOutput.writeError(event.jsonLine + "\n") } },
                        handler: { _ in })
                    services.append(.init(service: processor))
                } catch {
                    failStart(error.message, code: 2)
                }
            }
            let group = ServiceGroup(
                configuration: .init(
                    services: services,
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            do {
                try await group.run()
                await shared?.close()
            } catch let error as FileWatchingError where error.code == .rootRemoved {
                CommandOutput.fail(error.message, code: 1)
            } catch {
                // Failed before it listened: the start leaves nothing behind.
                if !announced.hasAnnounced { folder.undo() }
                let text = "\(error)"
                if text.contains("Address already in use") || text.contains("EADDRINUSE") {
                    CommandOutput.fail(
                        "port \(settings.port) on \(settings.bind) is taken; choose another with --port (0 picks a free one)",
                        code: 1)
                }
                if text.contains("Cannot assign requested address") || text.contains("EADDRNOTAVAIL") {
                    CommandOutput.fail("cannot listen on \(settings.bind): this machine has no such address", code: 1)
                }
                CommandOutput.fail("the server stopped: \(text)", code: 1)
            }
        }
        guard let text = settings.database else {
            try await serve(shared: nil)
            return
        }
        // The database's pool runs as a service around the server (started
        // before it, stopped after it): it serves the migration at the start
        // and the log's last commit at the end.
        let database = await SharedChangeLog.openDatabase(text, logger: logger)
        try await database.whileRunning {
            try await serve(shared: await SharedChangeLog.start(database, sharedFolder: directory, logger: logger))
        }
    }

    /// The TLS files of `settings`, each readable; exits 2 naming one that is not.
    static func checkedTLS(_ settings: ServeSettings) -> (certificate: String, key: String)? {
        guard let certificate = settings.tlsCertificate, let key = settings.tlsKey else { return nil }
        for file in [certificate, key] where access(file, R_OK) != 0 {
            CommandOutput.fail("cannot read \(file); give a readable PEM file", code: 2)
        }
        return (certificate, key)
    }

    /// Takes in the Inbox with `observer` until cancelled (a leader's, through a database).
    static func runInbox(
        observer: FileObserver, acceptedTypes: AcceptedTypes?, fixExtensions: Bool, printChanges: Bool,
        logger: Logger
    ) async {
        do {
            let processor = try InboxProcessor(
                root: observer.root,
                options: InboxOptions(
                    acceptedTypes: acceptedTypes ?? .all(), misleadingNames: fixExtensions ? .correct : .refuse),
                logger: logger,
                observer: observer,
                report: { event in if printChanges { CommandOutput.writeError(event.jsonLine + "\n") } },
                handler: { _ in })
            try await processor.run()
        } catch {
            logger.error("the Inbox stopped", metadata: ["error": "\(error)"])
        }
    }

    /// Each connection takes a descriptor: raise the soft limit (often 1,024
    /// for services) to the hard one, quietly; only a limit too low for
    /// many connections is worth a line.
    static func raiseOpenFileLimit(logger: Logger) {
        do {
            let (_, after) = try OpenFileLimit.raiseSoftToHard()
            // A few descriptors go to the listener, the change log and the
            // observer; the rest are connections.
            if after.soft < 4096 {
                logger.warning(
                    "at most about \(after.soft) connections at once: raise the hard limit (ulimit -Hn, systemd LimitNOFILE=) for more"
                )
            }
        } catch {
            logger.warning("cannot raise the open file limit: \(error)")
        }
    }

    static func randomPassword() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

}

/// Prints the first stdout line once the server listens, and on stderr
/// what the start made: the folder, a password (only now, when it is sure
/// to be of use).
final class ShareAnnouncement: Sendable {
    let root: String
    let madePassword: String?
    let madeFolder: String?
    private let done = Mutex(false)

    init(root: String, madePassword: String?, madeFolder: String?) {
        self.root = root
        self.madePassword = madePassword
        self.madeFolder = madeFolder
    }

    /// Whether the server has listened.
    var hasAnnounced: Bool { done.withLock { $0 } }

    func announce(_ url: String) {
        done.withLock { $0 = true }
        if let madeFolder { CommandOutput.writeError("fileshare: created the folder \(madeFolder)\n") }
        if let madePassword {
            CommandOutput.writeError(
                "fileshare: sign in as user 'fileshare' with password '\(madePassword)' (choose your own with --user and --password)\n"
            )
        }
        CommandOutput.write("Serving \(root) at \(url)\n")
    }
}

/// The server as a service that announces its address.
struct ListeningServer: Service {
    let server: ShareServer
    let announcement: ShareAnnouncement

    func run() async throws {
        // The server's own group hears the graceful shutdown and ends its services in order.
        try await server.run { url in announcement.announce(url) }
    }
}

/// The process environment, without Foundation.
enum ProcessInfoLite {
    static var environment: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
