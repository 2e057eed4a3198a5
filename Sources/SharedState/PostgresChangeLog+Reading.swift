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
        let plan = state.withLock { state -> ReadPlan in
            let oldest = min(state.oldest, state.latest + 1)
            let cursor = cursor ?? oldest - 1
            // A known oldest is never newer than the real one: older is expired for sure.
            if cursor + 1 < oldest { return .done(.expired(oldest: oldest, latest: state.latest)) }
            if cursor > state.latest {
                // A reader may not know the newest yet; the writer does.
                return mode == .writing
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
        guard mode == .writing else { return }
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
