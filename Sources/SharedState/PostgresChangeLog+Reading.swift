public import ChangeLog
import Logging
import Synchronization

extension PostgresChangeLog {
    enum ReadPlan {
        case done(ChangeLogPage)
        case database(cursor: UInt64)
    }

    public func read(after cursor: UInt64?, limit: Int) async throws(ChangeLogError) -> ChangeLogPage {
        let limit = max(1, limit)
        let cutOff = options.pollInterval * 5
        let plan = state.withLock { state -> ReadPlan in
            // A reader that has not heard from the database for a while asks
            // it: what it holds may be stale, and "nothing new" a wrong answer.
            if !state.writing && ContinuousClock.now - state.caughtUpAt > cutOff {
                return .database(cursor: cursor ?? min(state.oldest, state.latest + 1) - 1)
            }
            let oldest = min(state.oldest, state.latest + 1)
            let cursor = cursor ?? oldest - 1
            // A known oldest is never newer than the real one: older is expired for sure.
            if cursor + 1 < oldest { return .done(.expired(oldest: oldest, latest: state.latest)) }
            if cursor > state.latest {
                // A reader may not know the newest yet; the writer does.
                return state.writing
                    ? .done(.expired(oldest: oldest, latest: state.latest)) : .database(cursor: cursor)
            }
            if cursor == state.latest { return .done(.records([], next: cursor)) }
            if let first = state.recent.first, first.seq <= cursor + 1 {
                let start = Int(cursor + 1 - first.seq)
                let end = min(state.recent.count, start + limit)
                let records = Array(state.recent[start..<end])
                return .done(.records(records, next: records.last!.seq))
            }
            return .database(cursor: cursor)
        }
        switch plan {
        case .done(let page): return page
        case .database(let cursor):
            let (records, bounds) = try await Queries.records(folder: folder, after: cursor, limit: limit, in: database)
            state.withLock { $0.oldest = bounds.oldest }
            if cursor > bounds.latest || cursor + 1 < bounds.oldest {
                return .expired(oldest: bounds.oldest, latest: bounds.latest)
            }
            // Retention removed what follows the cursor meanwhile.
            if let first = records.first, first.seq != cursor + 1 {
                return .expired(oldest: bounds.oldest, latest: bounds.latest)
            }
            return .records(records, next: records.last?.seq ?? cursor)
        }
    }

    public func trim() async throws(ChangeLogError) {
        guard isWriting else { return }
        let retention = options.retention
        let oldestKept = options.now() - retention.maxAgeSeconds * 1_000_000_000
        let bounds = try await Queries.trim(
            folder: folder, keepingNewest: retention.maxRecords, youngerThan: oldestKept, in: database)
        let dropped = state.withLock { state in
            defer { state.oldest = bounds.oldest }
            return bounds.oldest > state.oldest
        }
        if dropped {
            logger.info("change log trimmed", metadata: ["folder": "\(folder)", "oldest": "\(bounds.oldest)"])
        }
    }
}
