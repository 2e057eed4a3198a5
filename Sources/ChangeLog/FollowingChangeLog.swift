/// How far a server that reads a shared log is behind it.
public struct ChangeLogLag: Sendable, Hashable {
    /// The records committed that this server has not read yet (as of its last look).
    public var records: UInt64
    /// How long ago this server last had every committed record.
    public var seconds: Double

    /// Creates a value.
    public init(records: UInt64, seconds: Double) {
        self.records = records
        self.seconds = seconds
    }
}

/// A change log several servers of one folder share: one of them writes
/// it (the leader, which runs the observer), the others follow what it
/// commits, and which one writes can change while they run.
public protocol FollowingChangeLog: ChangeLog {
    /// Whether this process writes the log now.
    var isWriting: Bool { get }

    /// Makes this process the writer: a writer before it is refused from
    /// now on, and what is appended next is numbered after every record
    /// committed before.
    /// - Throws: ``ChangeLogError`` when the shared store cannot be reached.
    func beginWriting() async throws(ChangeLogError)

    /// Stops writing at once: appends are refused, and what is not
    /// committed yet is dropped (the next writer finds those changes again).
    func endWriting()

    /// How far this process is behind what was committed (none while it writes).
    var lag: ChangeLogLag { get }
}
