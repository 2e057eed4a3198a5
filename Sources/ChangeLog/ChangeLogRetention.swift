/// How much of a log is kept: records beyond either bound are dropped, a
/// whole segment file at a time, never the one being written.
///
/// The defaults keep the newest ten million records (about 2 GB of a busy
/// folder's changes, 115 a second for a whole day) and nothing older than 30
/// days.
public struct ChangeLogRetention: Sendable, Hashable {
    /// The number of newest records always kept.
    public var maxRecords: UInt64
    /// Records older than this (seconds) are dropped.
    public var maxAgeSeconds: Int64

    /// Creates a policy.
    public init(maxRecords: UInt64 = 10_000_000, maxAgeSeconds: Int64 = 30 * 86_400) {
        self.maxRecords = maxRecords
        self.maxAgeSeconds = maxAgeSeconds
    }
}
