import ChangeLog
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

    /// Performs a change of `paths` on behalf of `origin`.
    func perform<T: Sendable>(_ paths: [SharePath], origin: ChangeOrigin, _ work: @escaping @Sendable () throws -> T)
        async throws -> T
    {
        let key = origins.begin(paths.map(\.itemPath), origin)
        defer { origins.finish(key) }
        let result = try await blocking(work)
        await observer.sync()
        await logged()
        return result
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
    /// renamed into place. Returns whether it replaced a file.
    /// - Parameters:
    ///   - creatingParents: Whether missing folders on the way are made (the JSON API) or an error (WebDAV).
    func commit(
        _ file: StagedFile, to path: SharePath, origin: ChangeOrigin, creatingParents: Bool,
        preparing: (@Sendable (Int32) throws -> Void)? = nil
    ) async throws -> Bool {
        try await perform([path], origin: origin) {
            try self.uploadTypes?.check(stagedFile: file.descriptor, for: path)
            try preparing?(file.descriptor)
            return try file.commit(to: path, replacing: .file, creatingParents: creatingParents)
        }
    }

    /// A WebDAV lock held on one of `paths` (or under one), if any.
    func lock(on paths: [SharePath]) -> DAVLock? {
        for path in paths {
            if let lock = locks.locks(coveringOrUnder: path).first { return lock }
        }
        return nil
    }
}
