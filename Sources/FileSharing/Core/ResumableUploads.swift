import CFileshareShim
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
final class ResumableUploads: Sendable {
    /// The chunk size the page uses.
    static let chunkBytes = 8 * 1024 * 1024
    /// What the names of their staged files start with (kept when the staging folder is cleaned).
    static let prefix = "resumable-"
    private let folder: SharedFolder
    /// The tokens a request is writing to now.
    private let busy = Mutex<Set<String>>([])
    /// The state every server of the folder sees, when it shares a database.
    let shared: (any SharedUploadState)?

    /// An upload opened to be continued.
    struct Open: Sendable {
        /// The staged file, kept until the upload ends.
        var file: StagedFile
        var path: SharePath
        var length: Int64
        var offset: Int64
        /// What must hold of the file at `path` when the upload puts it in place.
        var conditions: WritePreconditions
    }

    init(folder: SharedFolder, shared: (any SharedUploadState)? = nil) {
        self.folder = folder
        self.shared = shared
    }

    /// Whether `token` has the form of one (so it names nothing else in the staging folder).
    static func isValid(_ token: String) -> Bool {
        token.utf8.count == 32 && token.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Starts an upload of `length` bytes to `path`; returns its token.
    /// - Parameter conditions: Checked when the last chunk puts the file in place.
    func start(path: SharePath, length: Int64, conditions: WritePreconditions = .none) throws(FolderError) -> String {
        var random = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in String(random.next(), radix: 16).leftPadded(16) }.joined()
        _ = try StagedFile.create(in: folder, named: ResumableUploads.prefix + token, keepsOnExit: true)
        do throws(FolderError) {
            let sidecar = try StagedFile.create(
                in: folder, named: ResumableUploads.prefix + token + ".info", keepsOnExit: true)
            // The length (and how many lines of conditions follow) first, the path last: it may hold anything.
            let lines = conditions.lines
            let head = lines.isEmpty ? "\(length)" : "\(length) \(lines.count)"
            let info = Array(([head] + lines + [path.description]).joined(separator: "\n").utf8)
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
        guard let sidecar = StagedFile.reopen(in: folder, named: ResumableUploads.prefix + token + ".info") else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { cfs_pread(sidecar.descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        let head = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let numbers = head[0].split(separator: " ")
        guard head.count == 2, let lengthText = numbers.first, let length = Int64(lengthText),
            let conditionCount = numbers.count > 1 ? Int(numbers[1]) : 0, conditionCount >= 0
        else { return nil }
        let rest = head[1].split(separator: "\n", maxSplits: conditionCount, omittingEmptySubsequences: false)
        guard rest.count == conditionCount + 1, let conditions = WritePreconditions(lines: rest.dropLast()),
            let path = try? SharePath(plain: String(rest[conditionCount])),
            let file = StagedFile.reopen(in: folder, named: ResumableUploads.prefix + token)
        else { return nil }
        return Open(file: file, path: path, length: length, offset: try file.size(), conditions: conditions)
    }

    /// Starts an upload as ``start(path:length:conditions:)`` does (on the
    /// thread pool of `core`), and records it where every server sees it.
    /// - Throws: ``UploadStateError`` when it cannot be recorded (nothing is left then).
    func begin(path: SharePath, length: Int64, conditions: WritePreconditions = .none, user: String?, core: ShareCore)
        async throws -> String
    {
        let token = try await core.blocking { try self.start(path: path, length: length, conditions: conditions) }
        guard let shared else { return token }
        do {
            try await shared.register(
                SharedUpload(token: token, path: path, length: length, conditions: conditions.lines, user: user))
        } catch {
            discard(token)
            throw error
        }
        return token
    }

    /// Claims `token` for one request's writing; `false` when another
    /// request (on any server) writes to it now.
    /// - Throws: ``UploadStateError`` when the shared state cannot be asked.
    func claim(_ token: String) async throws(UploadStateError) -> Bool {
        guard busy.withLock({ $0.insert(token).inserted }) else { return false }
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

    /// Removes the uploads whose time is over (the leader does, once for all servers).
    /// - Returns: How many.
    @discardableResult
    func expire() async throws(UploadStateError) -> Int {
        guard let shared else { return 0 }
        let tokens = try await shared.expire()
        for token in tokens { discard(token) }
        return tokens.count
    }

    /// Whether a request is writing to `token` now.
    func isBeingWritten(_ token: String) -> Bool {
        busy.withLock { $0.contains(token) }
    }

    /// Ends a request's claim on `token` in this process.
    func release(_ token: String) {
        _ = busy.withLock { $0.remove(token) }
    }

    /// Ends an upload whose file was put in place: its sidecar goes.
    func finished(_ token: String) {
        folder.discardStaged(named: ResumableUploads.prefix + token + ".info")
    }

    /// Whether an upload of `token` exists.
    func exists(_ token: String) -> Bool {
        folder.stagingFileSize(named: ResumableUploads.prefix + token + ".info") != nil
    }

    /// Ends an upload and removes what it staged, whether or not it exists.
    func discard(_ token: String) {
        folder.discardStaged(named: ResumableUploads.prefix + token)
        folder.discardStaged(named: ResumableUploads.prefix + token + ".info")
    }
}
