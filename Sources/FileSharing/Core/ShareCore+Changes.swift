import ChangeLog
import DocumentTypes
import FileWatching
import Logging

/// The one way the server changes the folder: the origin is registered,
/// the work runs off the event loops, and the call returns once the observer
/// has delivered what the work caused (so the events carry the origin, and a
/// listing right after shows it).
extension ShareCore {
    /// Runs blocking file-system work off the cooperative pool and the event loops (`runBlocking`).
    func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await runBlocking(work)
    }

    /// Performs a change of `paths` on behalf of `origin`, once the
    /// client's conditions hold.
    ///
    /// The paths are held (``PathExclusion``) while the conditions are
    /// checked and the work runs, so no other change through the server
    /// comes between the two; one whose conditions fail changes nothing,
    /// and so logs nothing.
    /// - Parameters:
    ///   - conditions: What must hold of the items at these paths (each
    ///     under one of `paths`); a failure throws ``PreconditionFailure``.
    ///   - access: What the requester (``Requester/current``) must be
    ///     allowed at each path, checked while the paths are held: `nil`
    ///     for ``AccessOperation/change`` at every one of `paths`; `.add`
    ///     is a new file, or the replacement of the one there.
    func perform<T: Sendable>(
        _ paths: [SharePath], origin: ChangeOrigin, conditions: [SharePath: WritePreconditions] = [:],
        access: [SharePath: AccessOperation]? = nil, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let requester = Requester.current
        let access = access ?? Dictionary(paths.map { ($0, AccessOperation.change) }, uniquingKeysWith: { a, _ in a })
        let key = origins.begin(paths.map(\.itemPath), origin)
        defer { origins.finish(key) }
        // A follower's change is seen by the leader's observer: the origin
        // goes where the leader's commit finds it.
        let shared = isLeader ? nil : sharedDatabase?.origins
        let before = changeLog.latest
        var remote: Int64?
        if let shared {
            let names = paths.map(\.itemPath.description)
            do {
                // Bounded: a change on disk does not wait for a database that does not answer.
                remote = try await withTimeLimit(.seconds(2)) {
                    try await shared.register(paths: names, origin: origin)
                }
            } catch {
                logger.warning("the change's origin cannot be kept in the database", metadata: ["error": "\(error)"])
            }
        }
        let folder = self.folder
        let session = FolderHistory.editSession
        let result = try await exclusion.withPaths(paths) {
            try await blocking {
                try ShareCore.check(access, for: requester, in: folder)
                for (path, condition) in conditions { try condition.check(path, in: folder) }
                // What the work replaces or deletes is kept with its origin (once per editing session).
                return try FolderHistory.$origin.withValue(origin) {
                    try FolderHistory.$editSession.withValue(session) { try work() }
                }
            }
        }
        await observer.sync()
        await logged()
        if let shared, let remote {
            await loggedByLeader(origin, after: before)
            await shared.release(remote)
        }
        return result
    }

    /// Waits until the shared log holds a record of `origin` after `cursor`
    /// (the leader saw a follower's change and committed it), at most
    /// ``leaderLatency``: a client that asks `/api/changes` next then finds
    /// its own change.
    func loggedByLeader(_ origin: ChangeOrigin, after cursor: UInt64) async {
        let deadline = ContinuousClock.now + ShareCore.leaderLatency
        var cursor = cursor
        while ContinuousClock.now < deadline {
            if case .records(let records, let next)? = try? await changeLog.read(after: cursor, limit: 1000) {
                if records.contains(where: { $0.origin == origin }) { return }
                if next > cursor {
                    cursor = next
                    continue
                }
            }
            let log = changeLog
            let waited = cursor
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await log.waitForRecords(after: waited) }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// How long a follower's change waits at most for the leader to log it.
    static let leaderLatency: Duration = .seconds(3)

    /// Checks a client's conditions now, before the work of a change that
    /// `perform` checks them again for (an upload's body is not received
    /// in vain when they already fail).
    func check(_ conditions: WritePreconditions, at path: SharePath) async throws {
        guard !conditions.isEmpty else { return }
        let folder = self.folder
        try await blocking { try conditions.check(path, in: folder) }
    }

    /// Waits until what the observer delivered is durable in the change
    /// log, so a client that asks `/api/changes` next finds its own change.
    func logged() async {
        do {
            try await changeLog.flush()
        } catch {
            logger.error("the change log is behind", metadata: ["error": "\(error.message)"])
        }
    }

    /// Puts a staged file in place at `path` as a change on behalf of
    /// `origin`: checked against the upload policy under the name it will
    /// have, prepared (`preparing`, with its descriptor), flushed, and
    /// renamed into place. Returns where it went and whether it replaced a
    /// file.
    ///
    /// Where it goes is `path`, unless its name lies about its content and
    /// names are corrected: then it is the corrected name beside it, or the
    /// first of `notes 2.pdf`, `notes 3.pdf`… that nothing has taken (a file,
    /// a folder, a WebDAV lock): a corrected upload never replaces anything,
    /// as the client did not name what is there. Nor is it prepared: what
    /// `preparing` carries over (WebDAV's properties) belongs to `path`.
    /// - Parameters:
    ///   - creatingParents: Whether missing folders on the way are made (the JSON API) or an error (WebDAV).
    ///   - conditions: What must hold of the file at `path` when it is replaced.
    ///   - keepingBoth: Whether a file at `path` stays and this one goes beside it, as a corrected one does.
    func commit(
        _ file: StagedFile, to path: SharePath, origin: ChangeOrigin, creatingParents: Bool,
        conditions: WritePreconditions = .none, preparing: (@Sendable (Int32) throws -> Void)? = nil,
        keepingBoth: Bool = false
    ) async throws -> (path: SharePath, replaced: Bool) {
        let policy = uploadTypes
        let destination = try await blocking { try policy.check(stagedFile: file.descriptor, for: path) }
        // A corrected name, or a drop box's upload, never replaces a file: it goes beside it.
        if destination == path && !keepingBoth {
            let replaced = try await perform(
                [path], origin: origin, conditions: conditions.isEmpty ? [:] : [path: conditions],
                access: [path: .add]
            ) {
                try preparing?(file.descriptor)
                return try file.commit(to: path, replacing: .file, creatingParents: creatingParents)
            }
            return (path, replaced)
        }
        var taken: Set<String> = []
        while true {
            let folder = self.folder
            let clashes = taken
            // A name a WebDAV client locked (or holds something under) is taken too.
            let locked = try await locks.locks(coveringOrUnder: destination.parent)
            let name = try await blocking {
                UniqueName.make(for: destination.name) { candidate in
                    let sibling = destination.parent.child(candidate)
                    let held = locked.contains { $0.covers(sibling) || $0.root.isSame(asOrUnder: sibling) }
                    if clashes.contains(candidate) || held { return true }
                    // A missing folder on the way holds nothing yet.
                    return ((try? folder.existingKind(sibling)) ?? nil) != nil
                }
            }
            let candidate: SharePath
            do {
                candidate = try destination.parent.appending(name)
            } catch {
                throw UploadRefusal(.refused, "no free name for '\(destination)': \(error.message)")
            }
            do {
                // The client's conditions are about the name it sent, held meanwhile.
                try await perform(
                    candidate == path ? [path] : [candidate, path], origin: origin,
                    conditions: conditions.isEmpty ? [:] : [path: conditions],
                    access: [candidate: .add]
                ) {
                    _ = try file.commit(to: candidate, replacing: .nothing, creatingParents: creatingParents)
                }
                return (candidate, false)
            } catch let error as FolderError where error.code == .exists {
                // Taken between the look and the rename: the next free name.
                taken.insert(name)
            }
        }
    }

    /// Refuses a change of `paths` made otherwise than through WebDAV
    /// while a WebDAV client holds a lock on one of them (or under one):
    /// the page, the JSON API, tus and the history respect the locks. A
    /// change is never made as if no lock were held: when the locks cannot
    /// be read, it is refused too.
    /// - Throws: ``LockedByWebDAV``, or ``DAVLockStoreError`` when the
    ///   locks cannot be read.
    func refuseIfLocked(_ paths: [SharePath]) async throws {
        if let lock = try await lock(on: paths) { throw LockedByWebDAV(lock: lock) }
    }

    /// A WebDAV lock held on one of `paths` (or under one), if any.
    /// - Throws: ``DAVLockStoreError`` when the locks cannot be read.
    func lock(on paths: [SharePath]) async throws(DAVLockStoreError) -> DAVLock? {
        for path in paths {
            if let lock = try await locks.locks(coveringOrUnder: path).first { return lock }
        }
        return nil
    }
}

extension WritePreconditions {
    /// Throws ``PreconditionFailure`` unless the conditions hold for what
    /// is at `path` on disk now (blocking).
    func check(_ path: SharePath, in folder: SharedFolder) throws {
        guard !isEmpty else { return }
        if let failure = failure(current: try folder.metadataIfPresent(path), path: path) { throw failure }
    }
}

/// A change refused because a WebDAV client holds a lock on its path.
struct LockedByWebDAV: Error, Sendable, CustomStringConvertible {
    var lock: DAVLock

    /// For a person: which folder or file is locked, and for how long at most.
    var message: String {
        "'\(lock.root)' is locked by a WebDAV client for \(lock.timeout) seconds at most; try again later"
    }
    var description: String { message }
}
