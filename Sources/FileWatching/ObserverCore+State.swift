/// Starting from a saved state: the previous run's tree is restored, and the
/// initial scan becomes a rescan that reports what changed while the observer
/// was not running, pairing renamed and moved items by identity so they keep
/// their ids.
extension ObserverCore {
    /// How the initial scan starts.
    enum Start {
        /// From nothing: the consumer knows the root's content at scan time
        /// (items reported only with `reportsInitialItems`).
        case fresh
        /// From a saved state, restored into the tree.
        case restored
        /// From an empty previous view (no state yet, or an unusable one,
        /// said in `message`): every item is reported as added.
        case empty(message: String?)
    }

    /// Replaces the tree with a saved one; files that were being written are
    /// watched again until they are finished.
    mutating func restore(_ saved: Tree) {
        tree = saved
        start = .restored
        tree.walk(from: Tree.rootIndex) { index in
            if tree.has(index, flag: Tree.Flag.writing) { restoredWriting.append(index) }
        }
        if tree.lacksGenerations { adoptGenerations() }
    }

    /// Gives the items of a state saved without handle fingerprints the
    /// fingerprint of the disk's item at their path when it is the same
    /// inode by everything else (what identity meant when it was saved), so
    /// that the rescan pairs them as it would have then.
    private mutating func adoptGenerations() {
        var all: [Tree.Index] = []
        tree.walk(from: Tree.rootIndex) { if $0 != Tree.rootIndex { all.append($0) } }
        for index in all {
            guard case .success(var onDisk) = fileSystem.metadata(at: tree.path(of: index)) else { continue }
            let generation = onDisk.identity.generation
            onDisk.identity.generation = 0
            guard onDisk.identity == tree.identity(of: index), generation != 0 else { continue }
            var metadata = tree.metadata(of: index)
            metadata.identity.generation = generation
            tree.set(index, metadata: metadata)
        }
        tree.lacksGenerations = false
    }

    /// The initial scan against a restored tree.
    mutating func scanFromRestoredTree() {
        for index in restoredWriting where tree.isLive(index) {
            let metadata = tree.metadata(of: index)
            writes.activity(
                on: index, at: now.monotonic, closed: true, size: metadata.size, modified: metadata.modified)
        }
        restoredWriting.removeAll()
        rescan(from: Tree.rootIndex, reason: nil)
    }

    /// The tree as a state file, or `nil` while changes are still held back
    /// (a state must match exactly what the consumer was told).
    func encodedState(rootIdentity: FileIdentity) -> [UInt8]? {
        guard pending.isEmpty, isScanned else { return nil }
        return StateFile.encode(tree, root: rootDescription, rootIdentity: rootIdentity)
    }
}
