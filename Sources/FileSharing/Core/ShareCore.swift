import DocumentTypes
import FileWatching
import Logging
import Synchronization

/// What the faces ask of the WebDAV locks: the page and the JSON API respect
/// them too (423), without owning them.
protocol LockLookup: Sendable {
    /// The locks on `path`, or on anything under it.
    func locks(coveringOrUnder path: SharePath) -> [DAVLock]
}

/// The shared folder and everything that decides about it, with no HTTP:
/// the folder on disk, its observer, the origins of the changes made
/// through the server, the relay of those changes, the staging area (and
/// the uploads that survive a restart), the upload policy, and a view of
/// the WebDAV locks. The faces parse and answer HTTP; the core performs,
/// always in one way (`perform`, `commit`).
///
/// Creating a core opens the folder and the observer but starts nothing:
/// ``start()`` does, and the server calls it when it runs.
final class ShareCore: Sendable {
    /// The folder on disk.
    let folder: SharedFolder
    /// The observer of the folder.
    let observer: FileObserver
    /// The server's operations in flight, so the changes they cause carry their origin.
    let origins = OriginRegistry()
    /// The observer's changes, fanned out to the event stream and the printer.
    let relay: EventRelay
    /// Uploads continued over several requests.
    let uploads: ResumableUploads
    /// What uploads are checked against; `nil` when every type is accepted.
    let uploadTypes: UploadTypePolicy?
    /// The largest upload accepted, or `nil` for no limit.
    let maxUploadBytes: Int64?
    /// The WebDAV locks, as the other faces see them.
    let locks: any LockLookup
    let logger: Logger
    private let observation: ObservationToken
    private let started = Atomic<Bool>(false)

    /// Opens the folder's observer; nothing runs yet.
    /// - Parameters:
    ///   - folder: The folder, opened.
    ///   - locks: The WebDAV face's locks, read for 423.
    ///   - changePrinter: Called with each change's JSON line.
    init(
        folder: SharedFolder, configuration: ShareConfiguration, locks: any LockLookup, logger: Logger,
        changePrinter: (@Sendable (String) -> Void)?
    ) throws(FileWatchingError) {
        self.logger = logger
        self.locks = locks
        self.folder = folder
        observer = try FileObserver(root: folder.rootPath, options: configuration.observerOptions, logger: logger)
        let relay = EventRelay(origins: origins, printer: changePrinter)
        self.relay = relay
        uploads = ResumableUploads(folder: folder)
        uploadTypes = UploadTypePolicy(configuration.acceptedTypes)
        maxUploadBytes = configuration.maxUploadBytes
        // Subscribed before the observer starts, so its first changes are relayed too.
        observation = observer.observe { batch in relay.deliver(batch) }
    }

    /// Starts observing the folder; calling it again does nothing.
    func start() throws {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try observer.start()
    }

    /// Ends the observer and every event stream.
    func stop() {
        relay.finishAll()
        observer.stop()
    }
}

extension ShareCore {
    /// A new subscriber's stream of change lines (JSON, or `:` comments to
    /// keep the connection alive), and how to end it.
    func subscribe() -> (lines: AsyncStream<String>, end: @Sendable () -> Void) {
        relay.subscribe()
    }
}
