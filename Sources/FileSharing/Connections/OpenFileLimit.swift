import CFileshareShim
public import FileWatching

/// The process's limits on open file descriptors (`RLIMIT_NOFILE`).
///
/// Every connection holds a descriptor. Many systems start services with a
/// soft limit of 1,024 (and a hard limit far above it), which a thousand idle
/// clients exhaust; the server raises the soft limit to the hard one at start,
/// as nginx's `worker_rlimit_nofile` lets an operator do.
public struct OpenFileLimit: Sendable, Hashable, CustomStringConvertible {
    /// The limit in force: opening a descriptor beyond it fails with `EMFILE`.
    public var soft: UInt64
    /// The ceiling an unprivileged process may raise ``soft`` to.
    public var hard: UInt64

    /// Creates a value from its two limits.
    public init(soft: UInt64, hard: UInt64) {
        self.soft = soft
        self.hard = hard
    }

    /// `soft N, hard M`, with `unlimited` for `RLIM_INFINITY`.
    public var description: String {
        "soft \(OpenFileLimit.text(soft)), hard \(OpenFileLimit.text(hard))"
    }

    private static func text(_ value: UInt64) -> String {
        value == UInt64.max ? "unlimited" : "\(value)"
    }

    /// The process's limits now.
    /// - Throws: ``Errno`` when the system refuses to say.
    public static func current() throws(Errno) -> OpenFileLimit {
        var soft: UInt64 = 0
        var hard: UInt64 = 0
        try valueOrErrno(cfs_get_open_file_limit(&soft, &hard))
        return OpenFileLimit(soft: soft, hard: hard)
    }

    /// Raises the soft limit to the hard one (nothing when they are equal).
    /// - Returns: The limits before and after.
    /// - Throws: ``Errno`` when the limits cannot be read or set.
    @discardableResult
    public static func raiseSoftToHard() throws(Errno) -> (before: OpenFileLimit, after: OpenFileLimit) {
        let before = try current()
        guard before.soft < before.hard else { return (before, before) }
        try valueOrErrno(cfs_set_open_file_soft_limit(before.hard))
        return (before, try current())
    }
}
