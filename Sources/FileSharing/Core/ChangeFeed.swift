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
    /// Whether the first `scan-completed` has come.
    private let scanned = Atomic<Bool>(false)
    /// Changes the log already holds: not numbered again when the first
    /// scan reports them (see ``init(log:origins:logger:printer:numbersFirstScan:alreadyLogged:clock:)``).
    private let alreadyLogged: Logged

    /// What a log holds of the changes a first scan may report again.
    struct Logged: Sendable {
        /// The changes.
        var keys: Set<Key> = []
        /// The files it last said were being written (no `finished` after).
        var unfinished: Set<ItemID> = []

        /// Adds a record's change, in the log's order.
        mutating func add(_ change: Change) {
            keys.insert(Key(change))
            switch change {
            case .added(let item), .modified(let item), .duplicated(let item, _):
                if item.isWriting { unfinished.insert(item.id) } else { unfinished.remove(item.id) }
            case .finished(_, let id, _), .removed(_, let id, _): unfinished.remove(id)
            default: break
            }
        }

        /// What to number for a change of the first scan: nothing when the
        /// log holds it, a `finished` when the log holds it as still being
        /// written and it is complete now.
        func replacement(for change: Change) -> Change?? {
            guard keys.contains(Key(change)) else { return .none }
            switch change {
            case .added(let item), .modified(let item), .duplicated(let item, _):
                if !item.isWriting && unfinished.contains(item.id) {
                    return .some(.finished(path: item.path, id: item.id, size: item.size))
                }
            default: break
            }
            return .some(nil)
        }
    }

    /// What tells a change from another when a log is compared with what an
    /// observer reports: its type, its item and its paths.
    struct Key: Hashable, Sendable {
        var type: String
        var id: ItemID?
        var paths: [ItemPath]

        init(_ change: Change) {
            type = change.typeName
            id = change.id
            paths = change.itemPaths
        }
    }

    /// - Parameters:
    ///   - printer: Called with each record's JSON line as it is numbered (the command prints them to stderr).
    ///   - numbersFirstScan: Whether what the observer reports before its
    ///     first `scan-completed` is numbered: yes when it reports what
    ///     changed since a saved state; no when it reports every item of a
    ///     folder seen for the first time.
    ///   - alreadyLogged: What the log holds that the observer's saved state
    ///     may not: a server that took over from one that died after
    ///     committing changes but before saving its state is told them
    ///     again by its first scan, and numbers them once only.
    init(
        log: any ChangeLog, origins: OriginRegistry, logger: Logger, printer: (@Sendable (String) -> Void)?,
        numbersFirstScan: Bool = true, alreadyLogged: Logged = Logged(),
        clock: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
    ) {
        self.alreadyLogged = alreadyLogged
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
        var firstScan = !scanned.load(ordering: .relaxed)
        for change in batch {
            switch change {
            case .scanStarted: continue
            case .scanCompleted:
                if skipping {
                    skipping = false
                    scanning.store(false, ordering: .relaxed)
                }
                if firstScan {
                    firstScan = false
                    scanned.store(true, ordering: .relaxed)
                }
            case _ where skipping: continue
            case _ where firstScan && !alreadyLogged.keys.isEmpty:
                switch alreadyLogged.replacement(for: change) {
                case .none: entries.append(ChangeLogEntry(change, time: now, origin: origins.origin(of: change)))
                case .some(let replacement?): entries.append(ChangeLogEntry(replacement, time: now))
                case .some(nil): continue
                }
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
