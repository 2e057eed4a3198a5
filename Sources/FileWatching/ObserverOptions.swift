/// How a ``FileObserver`` watches.
public struct ObserverOptions: Sendable, Hashable {
    /// Whether names starting with `.` are reported (they are left out by default).
    public var includesHidden: Bool
    /// Globs of names (or, with a `/`, of root-relative paths) to leave out
    /// with everything under them.
    public var excludedNames: [String]
    /// How long a file's size and time must stay the same, after its last
    /// writer closed it, before it is reported as finished.
    public var settleTime: Duration
    /// The longest time changes are held back to be coalesced.
    public var latency: Duration
    /// Watch by scanning at this interval instead of by kernel events (for
    /// network file systems). `nil` uses kernel events, and polls only the
    /// subtrees the kernel cannot watch.
    public var pollingInterval: Duration?
    /// How often subtrees that cannot be watched by events are polled.
    public var degradedPollingInterval: Duration
    /// Whether every existing item is reported as `added` before `scan-completed`.
    public var reportsInitialItems: Bool
    /// Whether ids are kept in a `user.fileshare.id` extended attribute on each
    /// item (opt-in: it writes to the user's files). Such an id survives
    /// copies between file systems (`cp -a`, `rsync -X`, the Files app).
    public var storesIdentityAttribute: Bool
    /// Whether a new file with the same size and content as an existing one
    /// is reported as `duplicated` (a sampled hash, then a byte-by-byte
    /// comparison). With this or ``storesIdentityAttribute``, a new file is
    /// reported once it is complete (as `added` or `duplicated`, with
    /// `"writing": false`), not while it is written.
    public var detectsDuplicateContent: Bool
    /// Where the observer keeps its state between runs. On start, what
    /// changed while it was not running is reported first, before
    /// `scan-completed`; without a file yet, every item is reported as added.
    public var stateFile: String?
    /// Called before each write of the state file, on the thread that
    /// delivers the changes, after the callbacks of every change the state
    /// includes: a consumer that keeps the changes (a change log) makes them
    /// durable here, so that a crash never leaves a change in the saved
    /// state but not where it was kept.
    public var beforeSavingState: (@Sendable () -> Void)?
    /// Asked before each write of the state file, after
    /// ``beforeSavingState``: `false` skips the write. For a process that
    /// may stop being the one that keeps the state (another server took
    /// over the folder): a state written after it stopped would claim
    /// changes nobody recorded.
    public var mayWriteState: (@Sendable () -> Bool)?
    /// How long the first half of a rename read alone waits for its second
    /// (``MovePairing``). Not public: tests set it to zero, to show that the
    /// wait for renames still reporting pairs every half on its own.
    var movePairingWait: Duration = .milliseconds(50)

    /// Creates options; the defaults are those of `fileshare watch`.
    public init(
        includesHidden: Bool = false,
        excludedNames: [String] = [],
        settleTime: Duration = .seconds(1),
        latency: Duration = .milliseconds(50),
        pollingInterval: Duration? = nil,
        degradedPollingInterval: Duration = .seconds(2),
        reportsInitialItems: Bool = false,
        storesIdentityAttribute: Bool = false,
        stateFile: String? = nil,
        detectsDuplicateContent: Bool = false
    ) {
        self.includesHidden = includesHidden
        self.excludedNames = excludedNames
        self.settleTime = settleTime
        self.latency = latency
        self.pollingInterval = pollingInterval
        self.degradedPollingInterval = degradedPollingInterval
        self.reportsInitialItems = reportsInitialItems
        self.storesIdentityAttribute = storesIdentityAttribute
        self.stateFile = stateFile
        self.detectsDuplicateContent = detectsDuplicateContent
    }
}

extension Duration {
    /// Whole nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return product &+ attoseconds / 1_000_000_000
    }
}

extension ObserverOptions {
    /// Options are equal when they observe the same way: ``beforeSavingState``
    /// and ``mayWriteState`` (functions, with no identity to compare) are left out.
    public static func == (lhs: ObserverOptions, rhs: ObserverOptions) -> Bool {
        lhs.includesHidden == rhs.includesHidden && lhs.excludedNames == rhs.excludedNames
            && lhs.settleTime == rhs.settleTime && lhs.latency == rhs.latency
            && lhs.pollingInterval == rhs.pollingInterval && lhs.degradedPollingInterval == rhs.degradedPollingInterval
            && lhs.reportsInitialItems == rhs.reportsInitialItems
            && lhs.storesIdentityAttribute == rhs.storesIdentityAttribute
            && lhs.stateFile == rhs.stateFile && lhs.detectsDuplicateContent == rhs.detectsDuplicateContent
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(includesHidden)
        hasher.combine(excludedNames)
        hasher.combine(settleTime)
        hasher.combine(latency)
        hasher.combine(pollingInterval)
        hasher.combine(degradedPollingInterval)
        hasher.combine(reportsInitialItems)
        hasher.combine(storesIdentityAttribute)
        hasher.combine(stateFile)
        hasher.combine(detectsDuplicateContent)
    }
}
