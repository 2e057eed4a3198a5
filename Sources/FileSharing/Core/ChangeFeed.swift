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
    /// Where the log's newest records left the items: the first scan's
    /// changes are rebased on it (see ``init(log:origins:logger:printer:numbersFirstScan:alreadyLogged:lookUp:clock:)``).
    private let alreadyLogged: Mutex<Logged>
    /// An item's size as the observer knows it now, by id.
    private let lookUp: @Sendable (ItemID) -> Int64?
    /// Tells the observer to give an item (by the id it gave) the log's id.
    private let adoptID: @Sendable (_ logged: ItemID, _ given: ItemID) -> Void
    /// The first scan's changes, numbered once it is done.
    private let firstScanChanges = Mutex<[Change]>([])
    /// Ids the observer gave that are the log's (see ``Logged/settle(_:lookUp:)``):
    /// its changes queued before it was told are numbered with the log's
    /// (see ``translated(_:_:)``).
    private let ids = Mutex<[ItemID: ItemID]>([:])

    /// - Parameters:
    ///   - printer: Called with each record's JSON line as it is numbered (the command prints them to stderr).
    ///   - numbersFirstScan: Whether what the observer reports before its
    ///     first `scan-completed` is numbered: yes when it reports what
    ///     changed since a saved state; no when it reports every item of a
    ///     folder seen for the first time.
    ///   - alreadyLogged: Where the log's newest records left the items,
    ///     which the observer's saved state may not hold: a server that
    ///     took over from one that died after committing changes but before
    ///     saving its state is told them again by its first scan, from the
    ///     state's view; each is numbered once, from where the log left
    ///     the item.
    ///   - lookUp: An item's size by id (for an item the log has gone and
    ///     the first scan finds back).
    ///   - adoptID: Gives the observer's item with the second id the first
    ///     (a document saved anew that keeps the log's id).
    init(
        log: any ChangeLog, origins: OriginRegistry, logger: Logger, printer: (@Sendable (String) -> Void)?,
        numbersFirstScan: Bool = true, alreadyLogged: Logged = Logged(),
        lookUp: @escaping @Sendable (ItemID) -> Int64? = { _ in nil },
        adoptID: @escaping @Sendable (_ logged: ItemID, _ given: ItemID) -> Void = { _, _ in },
        clock: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
    ) {
        self.alreadyLogged = Mutex(alreadyLogged)
        self.lookUp = lookUp
        self.adoptID = adoptID
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
        let renamed = ids.withLock { $0 }
        for change in batch {
            switch change {
            case .scanStarted: continue
            case .scanCompleted:
                if firstScan {
                    entries += settleFirstScan(at: now)
                    firstScan = false
                    scanned.store(true, ordering: .relaxed)
                }
                if skipping {
                    skipping = false
                    scanning.store(false, ordering: .relaxed)
                }
            case _ where skipping: continue
            case _ where firstScan: firstScanChanges.withLock { $0.append(change) }
            default:
                let change = translated(change, renamed)
                entries.append(ChangeLogEntry(change, time: now, origin: origins.origin(of: change)))
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

    /// `change` with the log's id for an item the observer reported under
    /// the id it gave, before it was told the log's (see
    /// ``settleFirstScan(at:)``): while it has no item with the id it gave.
    /// (Once it has one again, that is another item, or the same one back
    /// under the id its identity gives, as rule 5 of events.md allows.)
    private func translated(_ change: Change, _ renamed: [ItemID: ItemID]) -> Change {
        guard !renamed.isEmpty, let id = change.id, renamed[id] != nil, lookUp(id) == nil else { return change }
        return change.replacingIDs(renamed)
    }

    /// The entries for the first scan's changes, rebased on what the log
    /// holds; the observer is told the ids it gave that are the log's.
    private func settleFirstScan(at now: Int64) -> [ChangeLogEntry] {
        let scan = firstScanChanges.withLock { changes in
            defer { changes.removeAll() }
            return changes
        }
        let lookUp = lookUp
        let (steps, renamed) = alreadyLogged.withLock { logged in
            logged.isEmpty ? (scan, [:]) : logged.settle(scan, lookUp: lookUp)
        }
        if !renamed.isEmpty {
            ids.withLock { $0.merge(renamed) { $1 } }
            for (given, logged) in renamed { adoptID(logged, given) }
        }
        return steps.map { ChangeLogEntry($0, time: now, origin: origins.origin(of: $0)) }
    }

}
