import ChangeLog
import FileWatching
import Logging
import Synchronization

/// Numbers what the observer reports: every batch goes into the change log,
/// each change with the origin of the operation that caused it when the
/// server made it. The scan's own markers (`scan-started`, `scan-completed`)
/// say how one run began, not what changed, and are not numbered.
final class ChangeFeed: Sendable {
    let log: any ChangeLog
    private let origins: OriginRegistry
    private let logger: Logger
    private let clock: @Sendable () -> Int64
    private let printer: (@Sendable (String) -> Void)?
    /// Whether the changes before the first `scan-completed` are numbered.
    private let scanning: Atomic<Bool>

    /// - Parameters:
    ///   - printer: Called with each record's JSON line as it is numbered (the command prints them to stderr).
    ///   - numbersFirstScan: Whether what the observer reports before its
    ///     first `scan-completed` is numbered: yes when it reports what
    ///     changed since a saved state; no when it reports every item of a
    ///     folder seen for the first time.
    init(
        log: any ChangeLog, origins: OriginRegistry, logger: Logger, printer: (@Sendable (String) -> Void)?,
        numbersFirstScan: Bool = true, clock: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
    ) {
        self.log = log
        self.origins = origins
        self.logger = logger
        self.printer = printer
        self.scanning = Atomic(!numbersFirstScan)
        self.clock = clock
    }

    /// Appends a batch of the observer's changes (called on its delivery thread; returns at once).
    func record(_ batch: [Change]) {
        let now = clock()
        var entries: [ChangeLogEntry] = []
        entries.reserveCapacity(batch.count)
        var skipping = scanning.load(ordering: .relaxed)
        for change in batch {
            switch change {
            case .scanStarted: continue
            case .scanCompleted:
                if skipping {
                    skipping = false
                    scanning.store(false, ordering: .relaxed)
                }
            case _ where skipping: continue
            default: entries.append(ChangeLogEntry(change, time: now, origin: origins.origin(of: change)))
            }
        }
        do {
            let records = try log.append(entries)
            if let printer { for record in records { printer(record.jsonLine) } }
        } catch {
            // Only a closed log refuses: the server is stopping.
            logger.debug("change not logged", metadata: ["reason": "\(error.message)"])
        }
    }
}
