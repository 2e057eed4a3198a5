import ChangeLog
import FileWatching
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Changing roles among the servers of one folder (``LeadershipMachine``
/// decides; these do): the leader's observer numbers the folder's changes
/// in the shared log, a follower's only answers listings.
extension ShareCore {
    /// The shared log, when the server may change roles.
    var followingLog: (any FollowingChangeLog)? { changeLog as? any FollowingChangeLog }

    /// Takes over the folder: becomes the log's writer, then starts an
    /// observer from the state the last leader saved on the shared storage,
    /// so what changed while no one watched is numbered first (what the log
    /// already holds, not again), and returns once that observer has
    /// reported it. The follower's observer is stopped after the swap.
    /// - Throws: ``ChangeLogError`` when the log cannot be taken over,
    ///   `FileWatchingError` when the observer cannot start.
    func lead() async throws {
        guard let log = followingLog, !isStopped else { return }
        try await log.beginWriting()
        let options = leaderObserverOptions
        let firstStart = options.stateFile.map { access($0, F_OK) != 0 } ?? true
        var known = firstStart ? ChangeFeed.Logged() : await loggedSinceStateWasSaved(options.stateFile)
        if !known.isEmpty, let stateFile = options.stateFile {
            // Where the saved state has the items those records name: an item
            // whose last changes the leader did not commit is brought to
            // where the observer has it once its first scan is done.
            let (ids, root, logger) = (known.ids, folder.rootPath, logger)
            let saved = try? await blocking {
                try FileObserver.savedItems(ids, root: root, stateFile: stateFile, options: options, logger: logger)
            }
            if let saved = saved ?? nil { known.expect(saved: saved) }
        }
        let (observer, token) = try ShareCore.leaderObserver(
            root: folder.rootPath, options: options, log: log, origins: origins, numbersFirstScan: !firstStart,
            alreadyLogged: known, logger: logger, printer: changePrinter)
        do {
            try observer.start()
        } catch {
            log.endWriting()
            throw error
        }
        // Its first scan (what changed while no one watched) is delivered and committed.
        await observer.sync()
        try? await log.flush()
        guard let old = swap(to: observer, observation: token) else {
            observer.stop()
            log.endWriting()
            return
        }
        old.stop()
        logger.notice(
            "this server leads the folder: it observes it and writes its change log",
            metadata: ["latest": "\(log.latest)", "compared": "\(known.count)"])
    }

    /// Stops leading at once: the log refuses appends (what is not committed
    /// is dropped; the next leader finds it again), the leader's observer
    /// stops without saving its state, and a follower's observer answers
    /// listings from now on. Does nothing for a follower.
    func follow() async {
        guard let log = followingLog else { return }
        log.endWriting()
        guard watching.withLock({ $0.observation != nil && !$0.stopped }) else { return }
        do {
            let observer = try FileObserver(root: folder.rootPath, options: followerObserverOptions, logger: logger)
            try observer.start()
            if let old = swap(to: observer, observation: nil) {
                old.stop()
            } else {
                observer.stop()
            }
        } catch {
            // The leader's observer is left running for listings; its
            // changes are refused by the log, and its state is not saved.
            logger.error("cannot start a follower's observer", metadata: ["error": "\(error)"])
        }
        logger.notice("this server follows: another leads the folder (or the database is gone)")
    }

    /// Returns once the server knows its role (it leads, or found another
    /// leading, or the database gone), 30 s at most.
    func waitUntilSettled() async {
        let deadline = ContinuousClock.now + .seconds(30)
        while !leadership.withLock({ $0.settled }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Puts `observer` in place; returns the one it replaces, or `nil` (and
    /// changes nothing) when the core was stopped meanwhile.
    private func swap(to observer: FileObserver, observation: ObservationToken?) -> FileObserver? {
        watching.withLock { watching in
            guard !watching.stopped else { return nil }
            defer {
                watching.observer = observer
                watching.observation = observation
            }
            return watching.observer
        }
    }

    /// The changes the log holds that the saved state may not hold: the
    /// records from a little before the state file was written on (a
    /// leader commits its changes before it writes the state that holds
    /// them, at most every two seconds).
    private func loggedSinceStateWasSaved(_ stateFile: String?) async -> ChangeFeed.Logged {
        var logged = ChangeFeed.Logged()
        guard let stateFile else { return logged }
        // Through the one layer over the system calls (a bare `stat` does
        // not resolve in a release build, where CDispatch also declares it).
        guard let status = try? FileStatus(name: stateFile, in: AT_FDCWD) else { return logged }
        let saved = status.modified
        let since = saved - 10_000_000_000
        // The newest records, walked back until older than the state.
        var cursor = changeLog.latest > 4096 ? changeLog.latest - 4096 : 0
        while true {
            guard case .records(let records, let next)? = try? await changeLog.read(after: cursor, limit: 1024),
                !records.isEmpty
            else { break }
            for record in records where record.time >= since {
                if let change = record.change { logged.add(change) }
            }
            cursor = next
        }
        return logged
    }
}

extension ShareCore {
    /// Every `interval`, while this server leads (a server alone on its
    /// folder always does): the resumable uploads whose time is over go,
    /// their state and their staged bytes — by the leader only, so one
    /// server does it once for all.
    func expireUploadsWhileLeading(every interval: Duration = .seconds(60)) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            await expireUploadsOnce()
        }
    }

    /// One round of ``expireUploadsWhileLeading(every:)``.
    func expireUploadsOnce() async {
        guard isLeader else { return }
        do {
            let uploads = self.uploads
            let count = try await uploads.expire() + blocking { uploads.sweep() }
            if count > 0 { logger.info("resumable uploads expired", metadata: ["count": "\(count)"]) }
        } catch {
            logger.debug("resumable uploads cannot be expired now", metadata: ["error": "\(error)"])
        }
    }
}
