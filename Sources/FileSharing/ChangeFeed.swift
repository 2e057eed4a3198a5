import ChangeLog
import FileWatching
import Logging

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

    /// - Parameter printer: Called with each record's JSON line as it is numbered (the command prints them to stderr).
    init(
        log: any ChangeLog, origins: OriginRegistry, logger: Logger, printer: (@Sendable (String) -> Void)?,
        clock: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
    ) {
        self.log = log
        self.origins = origins
        self.logger = logger
        self.printer = printer
        self.clock = clock
    }

    /// Appends a batch of the observer's changes (called on its delivery thread; returns at once).
    func record(_ batch: [Change]) {
        let now = clock()
        var entries: [ChangeLogEntry] = []
        entries.reserveCapacity(batch.count)
        for change in batch {
            switch change {
            case .scanStarted, .scanCompleted: continue
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
