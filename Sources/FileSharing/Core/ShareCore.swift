import ChangeLog
import DocumentTypes
import FileWatching
import Logging
import Previews
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The observer a core uses now.
struct Watching: Sendable {
    var observer: FileObserver
    /// Its changes into the log (a leader's), or `nil` (a follower's).
    var observation: ObservationToken?
    var stopped = false
}

/// What the faces ask of the WebDAV locks: the page and the JSON API respect
/// them too (423), without owning them.
protocol LockLookup: Sendable {
    /// The locks on `path`, or on anything under it.
    /// - Throws: ``DAVLockStoreError`` when the locks cannot be read.
    func locks(coveringOrUnder path: SharePath) async throws(DAVLockStoreError) -> [DAVLock]
}

/// The shared folder and everything that decides about it, with no HTTP:
/// the folder on disk, its observer, the origins of the changes made
/// through the server, the change log they are numbered in, the staging area (and
/// the uploads that survive a restart), the upload policy, and a view of
/// the WebDAV locks. The faces parse and answer HTTP; the core performs,
/// always in one way (`perform`, `commit`).
///
/// Creating a core opens the folder and the observer but starts nothing:
/// ``start()`` does, and the server calls it when it runs.
final class ShareCore: Sendable {
    /// The folder on disk.
    let folder: SharedFolder
    /// The observer of the folder (the leader's, or a follower's that only
    /// answers listings); replaced when the role changes.
    var observer: FileObserver { watching.withLock { $0.observer } }
    /// The server's operations in flight, so the changes they cause carry their origin.
    let origins = OriginRegistry()
    /// The paths changes work on, held so a client's conditions are checked and met in one step.
    let exclusion = PathExclusion()
    /// The numbered changes of the folder: in its private folder, or in the shared database.
    let changeLog: any ChangeLog
    /// The shared database, when the log is there.
    let sharedDatabase: ShareConfiguration.SharedDatabase?
    /// The observer now, its subscription, and whether it writes the log.
    let watching: Mutex<Watching>
    /// The role among the servers of a folder shared through a database
    /// (a server on its own leads from the start).
    let leadership = Mutex(LeadershipMachine(now: .now))
    /// How the observer of a leader watches (its state file included).
    let leaderObserverOptions: ObserverOptions
    /// How a follower's observer watches: no state of its own, nothing numbered.
    let followerObserverOptions: ObserverOptions
    let changePrinter: (@Sendable (String) -> Void)?
    /// Uploads continued over several requests.
    let uploads: ResumableUploads
    /// What uploads are checked against.
    let uploadTypes: UploadTypePolicy
    /// The largest upload accepted, or `nil` for no limit.
    let maxUploadBytes: Int64?
    /// The WebDAV locks, as the other faces see them.
    let locks: any LockLookup
    /// Locks and uploads under way, for presenters in the same process.
    let activity: ActivityFeed
    /// Thumbnails made by programs (PDF, video, audio), and where they are kept.
    let thumbnailer: ExternalThumbnailer?
    /// Thumbnails of images, comics and books, decoded in the process.
    let imageThumbnailer: ImageThumbnailer?
    let thumbnails: ThumbnailCache?
    /// The thumbnails made ahead for listed folders; `nil` when none are.
    let thumbnailsAhead: ThumbnailsAhead?
    /// The thumbnails being made now, so one file is never decoded twice at once.
    let thumbnailFlights = ThumbnailFlights()
    let logger: Logger
    private let started = Atomic<Bool>(false)

    /// Opens the folder's change log and observer; nothing runs yet.
    /// - Parameters:
    ///   - folder: The folder, opened.
    ///   - locks: The WebDAV face's locks, read for 423.
    ///   - changePrinter: Called with each change's JSON line.
    init(
        folder: SharedFolder, configuration: ShareConfiguration, locks: any LockLookup,
        activity: ActivityFeed = ActivityFeed(), logger: Logger, changePrinter: (@Sendable (String) -> Void)?
    ) throws {
        self.logger = logger
        self.locks = locks
        self.activity = activity
        self.folder = folder
        sharedDatabase = configuration.sharedDatabase
        if let shared = configuration.sharedDatabase {
            changeLog = shared.changeLog
        } else {
            changeLog = try FileChangeLog(
                folder: FileChangeLog.folder(forPrivateFolder: folder.privatePath), options: configuration.changeLog,
                logger: logger)
        }
        self.changePrinter = changePrinter
        var observerOptions = configuration.observerOptions
        var firstStart = false
        followerObserverOptions = {
            var options = configuration.observerOptions
            options.stateFile = nil
            options.beforeSavingState = nil
            return options
        }()
        if observerOptions.stateFile == nil {
            observerOptions.stateFile = folder.privatePath + "/observer-state"
            firstStart = access(observerOptions.stateFile!, F_OK) != 0
            // The state never runs ahead of the log: a crash between the two
            // would lose the changes in between from both.
            let log = changeLog
            observerOptions.beforeSavingState = { log.flushNow() }
            // A leader that was replaced leaves the state to the next one.
            if let following = log as? any FollowingChangeLog {
                observerOptions.mayWriteState = { following.isWriting }
            }
        }
        leaderObserverOptions = observerOptions
        // Through a database, a server follows until it gains the lead.
        let follows = (changeLog as? any FollowingChangeLog).map { !$0.isWriting } ?? false
        do {
            if follows {
                let observer = try FileObserver(root: folder.rootPath, options: followerObserverOptions, logger: logger)
                watching = Mutex(Watching(observer: observer, observation: nil))
            } else {
                let (observer, token) = try ShareCore.leaderObserver(
                    root: folder.rootPath, options: observerOptions, log: changeLog, origins: origins,
                    numbersFirstScan: !firstStart, alreadyLogged: ChangeFeed.Logged(), logger: logger,
                    printer: changePrinter)
                watching = Mutex(Watching(observer: observer, observation: token))
            }
        } catch {
            changeLog.close()
            throw error
        }
        // Through a database, an upload may go on on any server of the folder.
        uploads = ResumableUploads(
            folder: folder, shared: configuration.sharedDatabase?.uploads, limits: configuration.pendingUploads)
        uploadTypes = UploadTypePolicy(configuration.acceptedTypes, misleadingNames: configuration.misleadingNames)
        maxUploadBytes = configuration.maxUploadBytes
        // Made thumbnails are kept in the private folder; programs write their scratch files there too.
        let thumbnailFolder = folder.privatePath + "/thumbnails"
        thumbnailer = configuration.thumbnailer.map {
            ExternalThumbnailer(
                programs: $0.programs, limits: $0.limits, size: $0.size, scratchFolder: thumbnailFolder, logger: logger)
        }
        imageThumbnailer = configuration.imageThumbnailer.map {
            ImageThumbnailer(size: $0.size, concurrent: $0.concurrent, timeLimit: $0.timeLimit, logger: logger)
        }
        if let missing = imageThumbnailer?.missingLibraries { logger.warning("\(missing)") }
        thumbnails =
            configuration.thumbnailer == nil && configuration.imageThumbnailer == nil
            ? nil : ThumbnailCache(folder: thumbnailFolder)
        thumbnailsAhead =
            thumbnails == nil || configuration.thumbnailsAhead <= 0
            ? nil : ThumbnailsAhead(capacity: configuration.thumbnailsAhead, logger: logger)
        // Versions and trash entries are named by the ids the change feed gives.
        folder.history.identify { [weak self] path in self?.observer.item(at: path.itemPath)?.id }
        if !follows {
            // On its own (or writing the shared log from the start), a server leads.
            leadership.withLock { machine in
                let now = ContinuousClock.now
                _ = machine.handle(.lockGained, at: now)
                _ = machine.handle(.takeoverFinished, at: now)
            }
        }
    }

    /// An observer whose changes are numbered in `log`: from the saved
    /// state (what changed while no one watched first), subscribed before
    /// it starts so its first changes are numbered too.
    /// - Parameters:
    ///   - numbersFirstScan: `false` on the first start, which has nothing
    ///     that changed while it was stopped: the folder as it is then is
    ///     where the log begins (clients list it), not an `added` record for
    ///     every item already there.
    ///   - alreadyLogged: Where the log's newest records left the items,
    ///     which the saved state may not hold (a leader that died between
    ///     the two): the first scan's changes are numbered from there.
    static func leaderObserver(
        root: String, options: ObserverOptions, log: any ChangeLog, origins: OriginRegistry,
        numbersFirstScan: Bool, alreadyLogged: ChangeFeed.Logged, logger: Logger,
        printer: (@Sendable (String) -> Void)?
    ) throws -> (FileObserver, ObservationToken) {
        let observer = try FileObserver(root: root, options: options, logger: logger)
        let feed = ChangeFeed(
            log: log, origins: origins, logger: logger, printer: printer, numbersFirstScan: numbersFirstScan,
            alreadyLogged: alreadyLogged, lookUp: { [weak observer] id in observer?.item(id: id)?.size },
            adoptID: { [weak observer] logged, given in observer?.adoptID(logged, for: given) })
        return (observer, observer.observe { batch in feed.record(batch) })
    }

    /// Starts observing the folder; calling it again does nothing.
    func start() throws {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try observer.start()
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { watching.withLock { $0.stopped } }

    /// Ends the observer, then closes the change log (after writing what
    /// it holds; another server may then open the folder); event streams end.
    func stop() {
        let observer = watching.withLock { watching in
            watching.stopped = true
            return watching.observer
        }
        thumbnailsAhead?.stop()
        observer.stop()
        changeLog.close()
    }

    /// Applies the change log's retention now and every hour, until
    /// cancelled, and that of the versions and the trash.
    func trimChangeLog(every interval: Duration = .seconds(3600)) async {
        while !Task.isCancelled {
            do {
                try await changeLog.trim()
            } catch {
                logger.error("cannot trim the change log", metadata: ["error": "\(error.message)"])
            }
            await trimHistory()
            try? await Task.sleep(for: interval)
        }
    }
}
