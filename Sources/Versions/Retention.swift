public import FileWatching

/// How many versions are kept, for how long, and in how many bytes: the
/// defaults keep 20 versions of each file for 30 days, 1 GiB in all.
///
/// Two kinds of versions are never removed by it: conflict versions (an
/// edit that lost a race stays until someone resolves it) and the version
/// just kept (the last replacement can always be undone, even when it alone
/// is over the budget).
public struct VersionRetention: Sendable, Hashable {
    /// The most versions kept of one item.
    public var maximumCount: Int
    /// The longest a version is kept, in nanoseconds (`nil`: no limit).
    public var maximumAge: Int64?
    /// The most bytes all versions of all items take (`nil`: no limit).
    public var maximumBytes: Int64?

    /// Creates a policy.
    public init(
        maximumCount: Int = 20, maximumAge: Int64? = 30 * 86_400 * 1_000_000_000, maximumBytes: Int64? = 1 << 30
    ) {
        self.maximumCount = maximumCount
        self.maximumAge = maximumAge
        self.maximumBytes = maximumBytes
    }

    /// The versions to remove, of `versions` (every version of every item),
    /// at `now`, never `protected` (the one just kept).
    public func expired(_ versions: [VersionRecord], now: Int64, protected: (id: ItemID, version: String)? = nil)
        -> [VersionRecord]
    {
        func isProtected(_ record: VersionRecord) -> Bool {
            record.conflict || (record.id == protected?.id && record.version == protected?.version)
        }
        var expired: Set<VersionRecord> = []
        // Per item, newest first: past the count.
        for (_, records) in Dictionary(grouping: versions, by: \.id) {
            let ordinary = records.filter { !$0.conflict }.sorted(by: VersionRecord.newestFirst)
            for record in ordinary.dropFirst(max(0, maximumCount)) where !isProtected(record) {
                expired.insert(record)
            }
        }
        if let maximumAge {
            for record in versions where now - record.saved > maximumAge && !isProtected(record) {
                expired.insert(record)
            }
        }
        if let maximumBytes {
            var total = versions.reduce(Int64(0)) { $0 + (expired.contains($1) ? 0 : $1.size) }
            for record in versions.sorted(by: VersionRecord.newestFirst).reversed() where total > maximumBytes {
                guard !expired.contains(record), !isProtected(record) else { continue }
                expired.insert(record)
                total -= record.size
            }
        }
        return versions.filter { expired.contains($0) }
    }
}

/// How long deleted items stay in the trash, and in how many bytes: by
/// default 30 days, 1 GiB in all. The item just deleted is never removed by
/// it (a delete can always be undone at once, even of a folder over the budget).
public struct TrashRetention: Sendable, Hashable {
    /// The longest an item stays, in nanoseconds (`nil`: no limit).
    public var maximumAge: Int64?
    /// The most bytes the items in the trash take (`nil`: no limit).
    public var maximumBytes: Int64?

    /// Creates a policy.
    public init(maximumAge: Int64? = 30 * 86_400 * 1_000_000_000, maximumBytes: Int64? = 1 << 30) {
        self.maximumAge = maximumAge
        self.maximumBytes = maximumBytes
    }

    /// The entries to remove, of `items` (the whole trash), at `now`, never `protected`.
    public func expired(_ items: [TrashRecord], now: Int64, protected: String? = nil) -> [TrashRecord] {
        var expired: Set<String> = []
        if let maximumAge {
            for item in items where now - item.deleted > maximumAge && item.trashId != protected {
                expired.insert(item.trashId)
            }
        }
        if let maximumBytes {
            var total = items.reduce(Int64(0)) { $0 + (expired.contains($1.trashId) ? 0 : $1.size) }
            let oldestFirst = items.sorted {
                $0.deleted != $1.deleted ? $0.deleted < $1.deleted : $0.trashId < $1.trashId
            }
            for item in oldestFirst where total > maximumBytes {
                guard !expired.contains(item.trashId), item.trashId != protected else { continue }
                expired.insert(item.trashId)
                total -= item.size
            }
        }
        return items.filter { expired.contains($0.trashId) }
    }
}
