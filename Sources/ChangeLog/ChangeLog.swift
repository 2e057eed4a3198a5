/// What a read of a change log finds after a cursor.
public enum ChangeLogPage: Sendable {
    /// The records after the cursor, in order (possibly none yet), and the
    /// cursor to ask with next.
    case records([ChangeRecord], next: UInt64)
    /// The cursor is older than what the log keeps (or from another log):
    /// the reader must list the folder again, then go on from `latest`.
    case expired(oldest: UInt64, latest: UInt64)
}

/// A numbered, durable log of a folder's changes: the one place the server
/// appends what its observer reports, and from which event streams, the
/// changes API and the command line read by cursor.
///
/// A cursor is the `seq` of the last record a reader has (0 before the
/// first). Records are numbered 1, 2, 3… per log, one more each, never
/// reused; a record is readable only once it is durable, so a number a
/// reader has seen is never handed out again after a crash.
///
/// The on-disk ``FileChangeLog`` is the default; several servers of one
/// folder share one in PostgreSQL (`PostgresChangeLog` of the SharedState
/// library).
public protocol ChangeLog: AnyObject, Sendable {
    /// Numbers `entries` and queues them to be made durable; returns the
    /// records as numbered. Returns at once: the records become readable,
    /// and waiting readers are woken, once they are durable (see ``flush()``).
    /// - Throws: ``ChangeLogError`` when the log is closed or read-only.
    @discardableResult
    func append(_ entries: [ChangeLogEntry]) throws(ChangeLogError) -> [ChangeRecord]

    /// Up to `limit` records after `cursor` (`nil`: from the oldest kept).
    /// - Throws: ``ChangeLogError`` when the log's files cannot be read.
    func read(after cursor: UInt64?, limit: Int) async throws(ChangeLogError) -> ChangeLogPage

    /// Returns once a record after `cursor` is readable, the log is closed,
    /// or the task is cancelled.
    func waitForRecords(after cursor: UInt64) async

    /// Waits until everything appended before the call is durable and readable.
    /// - Throws: ``ChangeLogError`` when writing failed meanwhile (the log
    ///   goes on trying; the records stay queued).
    func flush() async throws(ChangeLogError)

    /// Waits on the calling thread until everything appended before the
    /// call is durable (or writing it failed): for a thread that may block,
    /// such as the observer's delivery thread before it saves its state;
    /// never from a task.
    func flushNow()

    /// Drops what the retention policy no longer keeps.
    func trim() async throws(ChangeLogError)

    /// The newest readable record's number (0 when there is none).
    var latest: UInt64 { get }

    /// The oldest kept record's number (`latest + 1` when none is kept).
    var oldest: UInt64 { get }

    /// Whether ``close()`` was called: no record will come any more.
    var isClosed: Bool { get }

    /// Ends appending and wakes every waiting reader; queued records are made durable first.
    func close()
}
