import CFileshareShim
import ChangeLog
import FileWatching
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Uploads that survive an interrupted connection (and a server restart):
/// a staged file holds the bytes received so far, and a small sidecar the
/// target path, the length and the client's conditions on the file it
/// replaces.
///
/// One request at a time writes to an upload (``claim(_:)``): a second one
/// that came while the first passed its offset check would write at the
/// same offset, and both would finish the upload. With several servers on
/// one folder the state is in the database too (``SharedUploadState``), and
/// a claim holds across servers: an upload may go on on any of them.
///
/// What uploads under way may hold is bounded (``PendingUploadLimits``): an
/// upload no request wrote to for its lifetime goes, at start and while the
/// server runs (``expire()``), and a user (or a client address) may have
/// only so many under way, as may the folder. An upload's last write is its
/// staged file's change time, so the bounds hold across restarts; with a
/// database they are its, for all servers.
final class ResumableUploads: Sendable {
    /// The chunk size the page uses.
    static let chunkBytes = 8 * 1024 * 1024
    /// What the names of their staged files start with (kept when the staging folder is cleaned).
    static let prefix = "resumable-"
    /// How much older than their lifetime staged files must be for a server
    /// sharing the folder to remove them without the database's word: an
    /// upload another server starts has one file for a moment, and the
    /// servers' clocks may differ.
    static let sharedMargin = Duration.seconds(3600)
    private let folder: SharedFolder
    /// Who started the uploads under way, and which a request writes to now.
    private let state: Mutex<PendingUploads>
    /// The state every server of the folder sees, when it shares a database.
    let shared: (any SharedUploadState)?
    /// The limits on uploads under way.
    let limits: PendingUploadLimits
    /// The time now, in nanoseconds since 1970 (injected in tests).
    private let clock: @Sendable () -> Int64

    /// An upload opened to be continued.
    struct Open: Sendable {
        /// The staged file, kept until the upload ends.
        var file: StagedFile
        var path: SharePath
        var length: Int64
        var offset: Int64
        /// What must hold of the file at `path` when the upload puts it in place.
        var conditions: WritePreconditions
        /// The last write to it (or its start), in nanoseconds since 1970.
        var lastWritten: Int64
    }

    /// Takes over the uploads staged in `folder`: those whose time is over,
    /// and the halves of uploads a crash cut, are removed now.
    init(
        folder: SharedFolder, shared: (any SharedUploadState)? = nil, limits: PendingUploadLimits = .standard,
        clock: @escaping @Sendable () -> Int64 = FileChangeLog.wallClock
    ) {
        self.folder = folder
        self.shared = shared
        self.limits = limits
        self.clock = clock
        state = Mutex(PendingUploads(limits: limits))
        _ = sweep()
        guard shared == nil else { return }
        // Alone on the folder, this server counts every upload under way.
        for upload in staged() {
            let owner = sidecar(upload.token)?.owner ?? ""
            state.withLock { $0.add(upload.token, owner: owner) }
        }
    }

    /// Whether `token` has the form of one (so it names nothing else in the staging folder).
    static func isValid(_ token: String) -> Bool {
        token.utf8.count == 32 && token.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Starts an upload of `length` bytes to `path` for `owner`; returns its token.
    /// - Parameters:
    ///   - conditions: Checked when the last chunk puts the file in place.
    ///   - owner: Who starts it (``PendingUploads/owner(user:address:)``).
    /// - Throws: ``PendingUploadLimitError`` when the owner or the folder has
    ///   as many uploads under way as allowed (counted here only when no
    ///   database is shared: there, ``begin(path:length:conditions:owner:core:)`` asks it).
    func start(path: SharePath, length: Int64, conditions: WritePreconditions = .none, owner: String) throws
        -> String
    {
        var random = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in String(random.next(), radix: 16).leftPadded(16) }.joined()
        if shared == nil {
            try state.withLock { pending throws(PendingUploadLimitError) in try pending.admit(token, owner: owner) }
        }
        defer { release(token) }
        do throws(FolderError) {
            _ = try StagedFile.create(in: folder, named: ResumableUploads.prefix + token, keepsOnExit: true)
            let sidecar = try StagedFile.create(
                in: folder, named: ResumableUploads.prefix + token + ".info", keepsOnExit: true)
            let info = Array(
                UploadSidecar(length: length, conditions: conditions, owner: owner, path: path).text.utf8)
            let result = info.withUnsafeBytes { cfs_pwrite_all(sidecar.descriptor, $0.baseAddress, $0.count, 0) }
            try SharedFolder.check(result, path, doing: .write)
        } catch {
            discard(token)
            throw error
        }
        return token
    }

    /// The upload of `token`, or `nil` when there is none.
    func open(_ token: String) throws(FolderError) -> Open? {
        guard let sidecar = sidecar(token),
            let file = StagedFile.reopen(in: folder, named: ResumableUploads.prefix + token)
        else { return nil }
        let status = try SharedFolder.metadata(fd: file.descriptor, path: sidecar.path)
        return Open(
            file: file, path: sidecar.path, length: sidecar.length, offset: status.size,
            conditions: sidecar.conditions, lastWritten: status.modified)
    }

    /// What the sidecar of `token` says; `nil` when there is none (or it is damaged).
    private func sidecar(_ token: String) -> UploadSidecar? {
        guard let sidecar = StagedFile.reopen(in: folder, named: ResumableUploads.prefix + token + ".info") else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { cfs_pread(sidecar.descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return UploadSidecar(String(decoding: bytes[..<count], as: UTF8.self))
    }

    /// Starts an upload as ``start(path:length:conditions:owner:)`` does (on
    /// the thread pool of `core`), and records it where every server sees it.
    /// - Throws: ``PendingUploadLimitError`` when the owner or the folder has
    ///   as many uploads under way as allowed; ``UploadStateError`` when it
    ///   cannot be recorded (nothing is left then).
    func begin(
        path: SharePath, length: Int64, conditions: WritePreconditions = .none, owner: String, core: ShareCore
    ) async throws -> String {
        let token = try await core.blocking {
            try self.start(path: path, length: length, conditions: conditions, owner: owner)
        }
        guard let shared else { return token }
        let refusal: PendingUploadLimitError?
        do {
            refusal = try await shared.register(
                SharedUpload(token: token, path: path, length: length, conditions: conditions.lines, owner: owner),
                limits: limits)
        } catch {
            discard(token)
            throw error
        }
        if let refusal {
            discard(token)
            throw refusal
        }
        return token
    }

    /// Claims `token` for one request's writing; `false` when another
    /// request (on any server) writes to it now.
    /// - Throws: ``UploadStateError`` when the shared state cannot be asked.
    func claim(_ token: String) async throws(UploadStateError) -> Bool {
        guard state.withLock({ $0.claim(token) }) else { return false }
        guard let shared else { return true }
        do {
            // `.unknown`: an upload begun before the folder's servers shared a
            // database; its staged files decide whether it exists.
            if try await shared.claim(token) != .busy { return true }
        } catch {
            release(token)
            throw error
        }
        release(token)
        return false
    }

    /// Ends a request's claim on `token`, the upload at `offset` (`nil`: it ended).
    func release(_ token: String, offset: Int64?) async {
        release(token)
        if let shared, let offset { await shared.release(token, offset: offset) }
    }

    /// Forgets the shared state of an upload that ended.
    func forget(_ token: String) async {
        await shared?.remove(token)
    }

    /// Removes the uploads whose time is over in the database (the leader
    /// does, once for all servers), with their staged bytes; ``sweep()``
    /// does without a database.
    /// - Returns: How many.
    @discardableResult
    func expire() async throws(UploadStateError) -> Int {
        guard let shared else { return 0 }
        let tokens = try await shared.expire()
        for token in tokens { discard(token) }
        return tokens.count
    }

    /// Removes the staged uploads whose time is over, or of which a crash
    /// left one file, that no request writes to. With a database, only once
    /// older than that by ``sharedMargin``: those are the files the database
    /// no longer knows (a server stopped between forgetting an upload and
    /// removing its files). Makes blocking system calls.
    /// - Returns: How many.
    @discardableResult
    func sweep() -> Int {
        let staged = staged()
        let now = clock()
        let margin = shared == nil ? Duration.zero : ResumableUploads.sharedMargin
        let expired = state.withLock { $0.expire(staged, now: now, margin: margin) }
        for token in expired {
            discard(token)
            release(token)
        }
        return expired.count
    }

    /// The uploads staged in the folder, with their last write.
    private func staged() -> [PendingUploads.Staged] {
        guard let names = try? SharedFolder.entries(fd: folder.stagingFD, path: .root) else { return [] }
        var found: [String: (lastWritten: Int64, files: Int)] = [:]
        for name in names where name.hasPrefix(ResumableUploads.prefix) {
            var token = name.dropFirst(ResumableUploads.prefix.count)
            if token.hasSuffix(".info") { token = token.dropLast(".info".count) }
            guard ResumableUploads.isValid(String(token)),
                let status = try? folder.stagingMetadata(named: name)
            else { continue }
            let known = found[String(token)] ?? (0, 0)
            found[String(token)] = (max(known.lastWritten, status.modified), known.files + 1)
        }
        return found.map {
            PendingUploads.Staged(token: $0.key, lastWritten: $0.value.lastWritten, complete: $0.value.files == 2)
        }
    }

    /// When an upload last written at `lastWritten` (nanoseconds since 1970) expires.
    func expiry(lastWritten: Int64) -> Int64 {
        state.withLock { $0.expiry(lastWritten: lastWritten) }
    }

    /// The time now, in nanoseconds since 1970, as the limits count it.
    var now: Int64 { clock() }

    /// Marks `token` as written to now: its lifetime starts again. Makes a
    /// blocking system call.
    func touch(_ token: String) {
        _ = utimensat(folder.stagingFD, ResumableUploads.prefix + token, nil, AT_SYMLINK_NOFOLLOW)
    }

    /// Whether a request is writing to `token` now.
    func isBeingWritten(_ token: String) -> Bool {
        state.withLock { $0.busy.contains(token) }
    }

    /// Ends a request's claim on `token` in this process.
    func release(_ token: String) {
        state.withLock { $0.release(token) }
    }

    /// Ends an upload whose file was put in place: its sidecar goes.
    func finished(_ token: String) {
        state.withLock { $0.forget(token) }
        folder.discardStaged(named: ResumableUploads.prefix + token + ".info")
    }

    /// Whether an upload of `token` exists.
    func exists(_ token: String) -> Bool {
        folder.stagingFileSize(named: ResumableUploads.prefix + token + ".info") != nil
    }

    /// Ends an upload and removes what it staged, whether or not it exists.
    func discard(_ token: String) {
        state.withLock { $0.forget(token) }
        folder.discardStaged(named: ResumableUploads.prefix + token)
        folder.discardStaged(named: ResumableUploads.prefix + token + ".info")
    }
}
