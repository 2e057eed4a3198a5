import CFileshareShim
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Uploads that survive an interrupted connection (and a server restart):
/// a staged file holds the bytes received so far, and a small sidecar the
/// target path and length.
final class ResumableUploads: Sendable {
    /// The chunk size the page uses.
    static let chunkBytes = 8 * 1024 * 1024
    /// What the names of their staged files start with (kept when the staging folder is cleaned).
    static let prefix = "resumable-"
    private let folder: SharedFolder
    /// The uploads a request is writing now.
    private let writing = Mutex<Set<String>>([])

    /// An upload opened to be continued.
    struct Open: Sendable {
        /// The staged file, kept until the upload ends.
        var file: StagedFile
        var path: SharePath
        var length: Int64
        var offset: Int64
    }

    init(folder: SharedFolder) { self.folder = folder }

    /// Whether `token` has the form of one (so it names nothing else in the staging folder).
    static func isValid(_ token: String) -> Bool {
        token.utf8.count == 32 && token.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Starts an upload of `length` bytes to `path`; returns its token.
    func start(path: SharePath, length: Int64) throws(FolderError) -> String {
        var random = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in String(random.next(), radix: 16).leftPadded(16) }.joined()
        _ = try StagedFile.create(in: folder, named: ResumableUploads.prefix + token, keepsOnExit: true)
        do throws(FolderError) {
            let sidecar = try StagedFile.create(
                in: folder, named: ResumableUploads.prefix + token + ".info", keepsOnExit: true)
            let info = Array("\(length)\n\(path.description)".utf8)
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
        guard let newline = text.firstIndex(of: "\n"), let length = Int64(text[..<newline]),
            let path = try? SharePath(plain: String(text[text.index(after: newline)...])),
            let file = StagedFile.reopen(in: folder, named: ResumableUploads.prefix + token)
        else { return nil }
        return Open(file: file, path: path, length: length, offset: try file.size())
    }

    /// Marks `token` as being written by one request; `false` when another is writing it.
    func claim(_ token: String) -> Bool {
        writing.withLock { $0.insert(token).inserted }
    }

    /// Whether a request is writing `token` now.
    func isBeingWritten(_ token: String) -> Bool {
        writing.withLock { $0.contains(token) }
    }

    /// Ends the claim of ``claim(_:)``.
    func release(_ token: String) {
        _ = writing.withLock { $0.remove(token) }
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
