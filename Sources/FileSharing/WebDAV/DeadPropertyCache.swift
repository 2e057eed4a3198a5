#if os(Linux)
    import ChangeLog
    import FileWatching
    import Synchronization

    /// The dead properties last read of each item, kept while the item's
    /// status change time stays the same, so a `PROPFIND` of a large folder
    /// asks the disk for one status per item instead of a status and an
    /// extended attribute (the attribute was a third of its time).
    ///
    /// Why the change time tells: setting or removing an extended attribute
    /// sets the inode's change time, whoever does it (another server on the
    /// folder, a shell, a backup tool), on Linux's file systems (ext4, XFS,
    /// Btrfs, tmpfs). Two changes within one tick of a coarse clock can
    /// leave the same time, so an item changed less than ``settledAfter``
    /// before it was read is not kept: anything that changes it later gets a
    /// later time. (Linux 6.13 and later give a fine-grained time to a change
    /// made after the time was read; older ones may not.) A new file given an
    /// old inode number gets its own change time too.
    ///
    /// Bounded: past ``capacity`` items the cache starts again empty (a
    /// server listing more than that reads their attributes as before).
    final class DeadPropertyCache: Sendable {
        /// An item on a device.
        struct Key: Hashable, Sendable {
            var device: UInt64
            var inode: UInt64
        }

        struct Kept: Sendable {
            /// The change time the properties were read at (nanoseconds since the epoch).
            var changed: Int64
            var properties: DeadProperties.Entries
        }

        /// How long after its last change an item's properties may be kept
        /// (nanoseconds): longer than any file system's clock tick.
        let settledAfter: Int64
        let capacity: Int
        private let clock: @Sendable () -> Int64
        private let kept = Mutex<[Key: Kept]>([:])

        /// - Parameters:
        ///   - now: The real-time clock change times are on, in nanoseconds
        ///     since the epoch (injected by tests).
        init(
            capacity: Int = 65_536, settledAfter: Int64 = 2_000_000_000,
            now: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
        ) {
            self.capacity = capacity
            self.settledAfter = settledAfter
            self.clock = now
        }

        /// What is kept for each status (`nil`: read it), looked up at once.
        func properties(of statuses: [FileStatus]) -> [DeadProperties.Entries?] {
            kept.withLock { kept in statuses.map { Self.current(in: kept, for: $0) } }
        }

        /// What is kept for one status (`nil`: read it).
        func properties(of status: FileStatus) -> DeadProperties.Entries? {
            kept.withLock { Self.current(in: $0, for: status) }
        }

        /// The properties kept of the item with `status`, if its change time is still theirs.
        private static func current(in kept: [Key: Kept], for status: FileStatus) -> DeadProperties.Entries? {
            guard let entry = kept[Key(device: status.device, inode: status.inode)], entry.changed == status.changed
            else { return nil }
            return entry.properties
        }

        /// Keeps what was read of these items (their status read before their
        /// properties), those that had settled when they were read.
        func keep(_ read: [(status: FileStatus, properties: DeadProperties.Entries)]) {
            guard !read.isEmpty else { return }
            let now = clock()
            let settled = read.filter { now - $0.status.changed >= settledAfter }
            guard !settled.isEmpty else { return }
            kept.withLock { kept in
                if kept.count + settled.count > capacity { kept.removeAll(keepingCapacity: true) }
                for (status, properties) in settled.prefix(capacity) {
                    kept[Key(device: status.device, inode: status.inode)] = Kept(
                        changed: status.changed, properties: properties)
                }
            }
        }

        /// How many items are kept (for tests).
        var count: Int { kept.withLock { $0.count } }
    }
#endif
