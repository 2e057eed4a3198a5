import Accounts
import ChangeLog
import FileWatching

/// What one person is told of a change: the change as it is, rewritten, or
/// nothing. Pure: a change and a policy in, a change out.
///
/// An item is told about where ``AccessPolicy/isListed(_:)`` holds (where
/// the person's listing would show it). A move or rename from a place they
/// cannot see into one they can is an `added` (the item appears for
/// them), the other way round a `removed`; a copy of a hidden item is an
/// `added`. Errors without a path, which may name anything, are told to
/// admins only; the scan's start and end concern the whole share and go to everyone.
enum ChangeVisibility {
    /// The change as `policy` lets it be seen, or `nil`.
    /// - Parameter size: The size of the file at a path now (the `added` made of a move carries it), if known.
    static func filter(_ change: Change, for policy: AccessPolicy, size: (ItemPath) -> Int64? = { _ in nil })
        -> Change?
    {
        if policy.isAdmin { return change }
        func shown(_ path: ItemPath) -> Bool {
            policy.isListed(path.description.split(separator: "/").map(String.init))
        }
        switch change {
        case .scanStarted, .scanCompleted, .rootRemoved:
            return change
        case .added(let item), .modified(let item):
            return shown(item.path) ? change : nil
        case .finished(let path, _, _), .removed(let path, _, _), .rescanned(let path, _), .degraded(let path, _, _):
            return shown(path) ? change : nil
        case .error(_, let path):
            guard let path else { return nil }
            return shown(path) ? change : nil
        case .duplicated(let item, let source):
            guard shown(item.path) else { return nil }
            return shown(source) ? change : .added(item)
        case .renamed(let from, let to, let id, let kind), .moved(let from, let to, let id, let kind):
            switch (shown(from), shown(to)) {
            case (true, true): return change
            case (false, false): return nil
            case (true, false): return .removed(path: from, id: id, kind: kind)
            case (false, true):
                let bytes = kind == .directory ? 0 : (size(to) ?? 0)
                return .added(ChangedItem(path: to, id: id, kind: kind, size: bytes, isWriting: false))
            }
        }
    }

    /// The record as `policy` lets it be seen (the same number, time and
    /// origin), or `nil`.
    static func filter(_ record: ChangeRecord, for policy: AccessPolicy, size: (ItemPath) -> Int64? = { _ in nil })
        -> ChangeRecord?
    {
        if policy.isAdmin { return record }
        // A record that is not a change (a marker of the log's own) concerns nobody's paths.
        guard let change = record.change else { return nil }
        guard let seen = filter(change, for: policy, size: size) else { return nil }
        if seen == change { return record }
        return ChangeRecord(
            seq: record.seq, entry: ChangeLogEntry(seen, time: record.time, origin: record.origin))
    }
}

extension ChangeVisibility {
    /// What one reader of the log may be told: the requester's policy, and
    /// where the size of a file that moved into view comes from.
    struct Scope: Sendable {
        var policy: AccessPolicy
        var size: @Sendable (ItemPath) -> Int64?

        func filter(_ records: [ChangeRecord]) -> [ChangeRecord] {
            if policy.isAdmin { return records }
            return records.compactMap { ChangeVisibility.filter($0, for: policy, size: size) }
        }
    }
}
