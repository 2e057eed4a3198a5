/// Clock ticks: `finished` for files whose writers are done, polls of the
/// subtrees that cannot be watched.
extension ObserverCore {
    mutating func tick(at time: Timestamp) {
        now = time
        guard !isRootRemoved else { return }
        rescanDisplaced()
        if !polledRoots.isEmpty && time.monotonic >= nextPoll {
            poll()
        }
        for index in writes.due(at: time.monotonic) { checkFinished(index) }
    }

    /// Rescans every polled subtree now (also what `sync()` does when polling).
    mutating func poll() {
        let interval = (options.pollingInterval ?? options.degradedPollingInterval).nanoseconds
        nextPoll = now.monotonic + interval
        for root in polledRoots.sorted() where tree.isLive(root) { rescan(from: root, reason: nil) }
    }

    /// A file whose settle time has passed: finished if it is unchanged and no
    /// process has it open for writing.
    mutating func checkFinished(_ index: Tree.Index) {
        guard tree.isLive(index), tree[index].kind == .file, let state = writes.state(of: index) else {
            writes.forget(index)
            return
        }
        let path = tree.path(of: index)
        guard case .success(let metadata) = fileSystem.metadata(at: path),
            metadata.identity == tree.identity(of: index)
        else {
            // Gone or replaced at its path: the events or the rescan that
            // say where it went are still to come (a poll has no events).
            // Checked again until then; forgotten once the tree lets it go.
            // Forgetting it now would leave a file moved on before it was
            // complete unreported for good.
            writes.recheck(index, at: now.monotonic)
            return
        }
        if metadata.size != state.size || metadata.modified != state.modified {
            tree.set(index, metadata: metadata)
            writes.activity(
                on: index, at: now.monotonic, closed: state.closed, size: metadata.size,
                modified: metadata.modified)
            return
        }
        switch fileSystem.hasNoWriters(at: path) {
        case false:
            // Someone still holds it open for writing, however long they pause.
            writes.recheck(index, at: now.monotonic)
            return
        case nil where !state.closed:
            // No lease to ask: wait for the kernel's close.
            writes.recheck(index, at: now.monotonic)
            return
        default:
            break
        }
        writes.forget(index)
        tree.set(index, metadata: metadata)
        tree.set(index, flag: Tree.Flag.writing, false)
        if tree.has(index, flag: Tree.Flag.unreported) {
            // Complete at last: reported now, as added or as a duplicate.
            reportComplete(index)
            return
        }
        emit(.finished(path: path, id: tree.id(of: index), size: metadata.size))
        indexBySize(index)
    }
}
