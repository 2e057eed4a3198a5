/// What resumable uploads under way may hold of a server: how long one no
/// request writes to is kept, and how many there may be.
public struct PendingUploadLimits: Sendable, Equatable {
    /// How long an upload is kept after the last request that wrote to it
    /// (or its start): a day, as tus servers commonly keep one.
    public var lifetime: Duration
    /// How many one user (or one client address, not signed in) may have under way.
    public var perOwner: Int
    /// How many the folder holds under way, from everyone.
    public var total: Int

    /// Creates limits; each count is at least 1.
    public init(lifetime: Duration, perOwner: Int, total: Int) {
        self.lifetime = lifetime
        self.perOwner = max(1, perOwner)
        self.total = max(1, total)
    }

    /// A day, 20 per user, 1,000 in all.
    public static let standard = PendingUploadLimits(lifetime: .seconds(24 * 3600), perOwner: 20, total: 1000)

    /// ``lifetime`` in nanoseconds.
    var lifetimeNanoseconds: Int64 {
        lifetime.components.seconds * 1_000_000_000 + lifetime.components.attoseconds / 1_000_000_000
    }

    /// ``lifetime`` for a person ("24 hours").
    var lifetimeText: String {
        let seconds = lifetime.components.seconds
        if seconds >= 3600 && seconds % 3600 == 0 { return "\(seconds / 3600) hours" }
        if seconds >= 60 && seconds % 60 == 0 { return "\(seconds / 60) minutes" }
        return "\(seconds) seconds"
    }
}

/// A new resumable upload refused because too many are under way. Knows
/// no HTTP: the faces answer 429 for ``Code/owner`` (the client can end one
/// of its own) and 503 for ``Code/folder`` (it can only wait).
struct PendingUploadLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which limit was reached.
    enum Code: Sendable, Equatable {
        /// The requester's own (``PendingUploadLimits/perOwner``).
        case owner
        /// The folder's (``PendingUploadLimits/total``).
        case folder
    }

    var code: Code
    var limits: PendingUploadLimits

    /// For a person: which limit, and what to do.
    var message: String {
        switch code {
        case .owner:
            "you have \(limits.perOwner) uploads under way, the most kept for one user: finish or cancel one "
                + "(DELETE it), or wait until one ends \(limits.lifetimeText) after its last chunk"
        case .folder:
            "the server keeps \(limits.total) uploads under way, its most: try again once some have finished"
        }
    }

    var description: String { message }
}

/// The resumable uploads under way in one server, without I/O: who started
/// each (for the limits), which a request writes now, and which have
/// expired. ``ResumableUploads`` holds it under a lock and does the I/O.
struct PendingUploads: Sendable {
    /// The staged files of one upload, as a listing of the staging folder finds them.
    struct Staged: Sendable, Equatable {
        var token: String
        /// The newest change of its files, in nanoseconds since 1970: the
        /// last request that wrote to it (or its start).
        var lastWritten: Int64
        /// Whether both its files (the bytes and the sidecar) are there.
        var complete: Bool
    }

    let limits: PendingUploadLimits
    /// Who started each upload this server counts (all of the folder's,
    /// when it is alone on it).
    private(set) var owners: [String: String] = [:]
    private var counts: [String: Int] = [:]
    /// The uploads a request writes (or starts, or removes) now.
    private(set) var busy: Set<String> = []

    init(limits: PendingUploadLimits) {
        self.limits = limits
    }

    /// Who owns a new upload: the user, or, for a client not signed in, its
    /// address (in brackets, which no user name has).
    static func owner(user: String?, address: String) -> String {
        user ?? "[\(address)]"
    }

    /// How many uploads under way `owner` has.
    func count(of owner: String) -> Int { counts[owner] ?? 0 }

    /// How many uploads are under way.
    var total: Int { owners.count }

    /// Admits a new upload of `owner`, busy until ``release(_:)`` (its files are being made).
    /// - Throws: ``PendingUploadLimitError`` when the owner or the folder has as many as allowed.
    mutating func admit(_ token: String, owner: String) throws(PendingUploadLimitError) {
        guard owners.count < limits.total else { throw PendingUploadLimitError(code: .folder, limits: limits) }
        guard count(of: owner) < limits.perOwner else {
            throw PendingUploadLimitError(code: .owner, limits: limits)
        }
        add(token, owner: owner)
        busy.insert(token)
    }

    /// Counts an upload found at start (no limit: it is already there).
    mutating func add(_ token: String, owner: String) {
        guard owners.updateValue(owner, forKey: token) == nil else { return }
        counts[owner, default: 0] += 1
    }

    /// Claims `token` for one request; `false` while another has it.
    mutating func claim(_ token: String) -> Bool {
        busy.insert(token).inserted
    }

    /// Ends a request's claim.
    mutating func release(_ token: String) {
        busy.remove(token)
    }

    /// Stops counting an upload (finished, cancelled or expired).
    mutating func forget(_ token: String) {
        guard let owner = owners.removeValue(forKey: token) else { return }
        let left = (counts[owner] ?? 1) - 1
        counts[owner] = left > 0 ? left : nil
    }

    /// The uploads in `staged` whose time is over at `now` (nanoseconds
    /// since 1970), or whose files are not both there, and that no request
    /// holds: claimed for their removal (``release(_:)`` each once removed)
    /// and no longer counted.
    /// - Parameter margin: Added to every age: with other servers on the
    ///   folder, an upload one of them is starting has one file for a
    ///   moment, and their clocks may differ from this one's.
    mutating func expire(_ staged: [Staged], now: Int64, margin: Duration = .zero) -> [String] {
        let margin = margin.components.seconds * 1_000_000_000 + margin.components.attoseconds / 1_000_000_000
        var expired: [String] = []
        for upload in staged where !busy.contains(upload.token) {
            let age = now - upload.lastWritten
            guard upload.complete ? age >= limits.lifetimeNanoseconds + margin : age >= margin else { continue }
            busy.insert(upload.token)
            forget(upload.token)
            expired.append(upload.token)
        }
        return expired
    }

    /// When an upload last written at `lastWritten` expires, in nanoseconds since 1970.
    func expiry(lastWritten: Int64) -> Int64 {
        lastWritten + limits.lifetimeNanoseconds
    }
}
