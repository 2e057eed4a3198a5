public import ChangeLog
import Logging
import Synchronization

extension PostgresChangeLog: FollowingChangeLog {
    public var isWriting: Bool { state.withLock { $0.writing } }

    /// Makes this process the log's writer: moves the folder's writer epoch
    /// on (so a writer that lost the lead without noticing is refused from
    /// now on), reads every record committed before, and numbers what is
    /// appended next after them.
    /// - Throws: ``ChangeLogError`` `.unavailable` when the database cannot
    ///   be reached, `.closed`.
    public func beginWriting() async throws(ChangeLogError) {
        if isClosed { throw ChangeLogError(code: .closed, message: "the change log is closed") }
        let (epoch, newest) = try await Queries.takeOver(folder: folder, in: database)
        // Everything the previous writer committed, read before numbering on from it.
        while latest < newest {
            let before = latest
            let (records, bounds) = try await Queries.records(
                folder: folder, after: before, limit: options.batchLimit, in: database)
            state.withLock { state in
                state.oldest = bounds.oldest
                if let first = records.first, first.seq != state.latest + 1 { state.recent.removeAll() }
            }
            if records.isEmpty {
                // Retention removed what follows: the kept records start later.
                state.withLock { state in
                    state.recent.removeAll()
                    state.latest = newest
                }
            } else {
                publish(records)
            }
        }
        state.withLock { state in
            state.writing = true
            state.epoch = epoch
            state.nextSeq = state.latest + 1
            state.failure = nil
            state.databaseLatest = state.latest
            state.caughtUpAt = .now
        }
        logger.notice(
            "this server writes the change log",
            metadata: ["folder": "\(folder)", "epoch": "\(epoch)", "from": "\(newest)"])
    }

    /// Stops writing at once: what is appended from now on is refused, and
    /// what is not committed yet never will be by this process (the next
    /// writer's observer finds those changes again in the folder).
    public func endWriting() {
        let waiters = state.withLock { state in
            state.writing = false
            state.epoch = nil
            state.pending.removeAll()
            state.nextSeq = state.latest + 1
            defer { state.flushWaiters.removeAll() }
            return state.flushWaiters.values.map(\.continuation)
        }
        let error = ChangeLogError(code: .readOnly, message: "this server no longer writes the change log")
        for waiter in waiters { waiter.resume(returning: error) }
        startFollowing()
        Task { await refresh() }
    }

    public var lag: ChangeLogLag {
        state.withLock { state in
            if state.writing { return ChangeLogLag(records: 0, seconds: 0) }
            let records = state.databaseLatest > state.latest ? state.databaseLatest - state.latest : 0
            let elapsed = ContinuousClock.now - state.caughtUpAt
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return ChangeLogLag(records: records, seconds: seconds)
        }
    }
}
