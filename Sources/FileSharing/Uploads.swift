import CFileshareShim
import FileWatching
import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension ShareServer {
    /// `PUT /api/files/P`: the body streamed to a staging file on the same
    /// file system, flushed, and renamed into place only once complete.
    func upload(_ request: Request, context: ShareContext) async throws -> Response {
        let path = try ShareServer.path(of: request, after: "/api/files/")
        guard !path.isRoot else { throw ShareError(.conflict, "the shared folder is a folder") }
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        try checkSize(declared)
        try refuseIfLocked([path])
        let staging = "upload-" + UUID().uuidString
        let fd = try await blocking { () throws(ShareError) in try self.folder.createStagingFile(named: staging) }
        var committed = false
        defer {
            close(fd)
            if !committed { folder.discardStagingFile(named: staging) }
        }
        _ = try await write(
            request.body, to: fd, at: 0, limit: configuration.maxUploadBytes,
            checkingTypeFor: path, totalSize: declared)
        let replaced = try await change([path], method: "PUT", context: context) { () throws(ShareError) in
            try self.uploadTypes?.check(stagedFile: fd, for: path)
            if cfs_fsync(fd) < 0 { throw SharedFolder.error(errno, path) }
            return try self.folder.commitStagingFile(named: staging, to: path)
        }
        committed = true
        return .json(status: replaced ? .ok : .created, body: "{\"path\":\(JSONText.quoted(path.description))}")
    }

    /// 413 over the limit, 507 when the disk has no room for what is announced.
    func checkSize(_ size: Int64?) throws(ShareError) {
        guard let size else { return }
        if let limit = configuration.maxUploadBytes, size > limit {
            throw ShareError(.contentTooLarge, "the file is larger than this share accepts (\(limit) bytes)")
        }
        if size > folder.availableBytes {
            throw ShareError(.insufficientStorage, "the disk is full: \(size) bytes do not fit in the \(folder.availableBytes) free")
        }
    }

    /// Writes a request body at `offset`; returns the bytes written. Parts
    /// are gathered up to 1 MiB before each write, so the thread hops stay
    /// few and memory stays flat.
    ///
    /// With accepted types and `checkingTypeFor`, the file's first bytes
    /// are checked as soon as they are written (`UploadTypePolicy`): an
    /// upload whose prefix already shows a refused type ends with 415 then,
    /// not after the rest has arrived.
    ///
    /// - Parameters:
    ///   - path: Where the file will be, to check its first bytes; `nil` not to.
    ///   - totalSize: The complete file's size, if announced.
    func write(
        _ body: RequestBody, to fd: Int32, at offset: Int64, limit: Int64?,
        checkingTypeFor path: SharePath? = nil, totalSize: Int64? = nil
    ) async throws -> Int64 {
        var written: Int64 = 0
        var pending = ByteBuffer()
        // Checked once: when the bytes written first reach what identification reads.
        let policy = path == nil ? nil : uploadTypes
        var prefixChecked = policy.map { offset >= Int64($0.prefixLength) } ?? true
        /// - Parameter last: Whether the body has ended (then the whole file is checked
        ///   anyway, unless this is a chunk before the end of a resumable upload).
        func flush(last: Bool = false) async throws {
            guard pending.readableBytes > 0 else { return }
            let chunk = pending
            let position = offset + written
            try await blocking { () throws(ShareError) in
                let result = chunk.withUnsafeReadableBytes { raw in
                    cfs_pwrite_all(fd, raw.baseAddress, raw.count, position)
                }
                if result < 0 { throw SharedFolder.error(Int32(-result), .root) }
            }
            written += Int64(chunk.readableBytes)
            pending.clear()
            let available = offset + written
            let moreToCome = !last || totalSize.map { available < $0 } ?? false
            if !prefixChecked, moreToCome, let policy, let path, available >= Int64(policy.prefixLength) {
                prefixChecked = true
                try await blocking { () throws(ShareError) in
                    try policy.checkPrefix(ofStagedFile: fd, available: available, for: path, totalSize: totalSize)
                }
            }
        }
        for try await buffer in body {
            if let limit, offset + written + Int64(pending.readableBytes + buffer.readableBytes) > limit {
                throw ShareError(.contentTooLarge, "the file is larger than this share accepts (\(limit) bytes)")
            }
            if pending.readableBytes == 0 && buffer.readableBytes >= 1 << 20 {
                pending = buffer
            } else {
                var buffer = buffer
                pending.writeBuffer(&buffer)
            }
            if pending.readableBytes >= 1 << 20 { try await flush() }
        }
        try await flush(last: true)
        return written
    }

    // MARK: Resumable uploads

    /// `POST /api/uploads?path=P` with `Upload-Length`: starts an upload that
    /// can be continued after an interruption.
    func startUpload(_ request: Request, context: ShareContext) async throws -> Response {
        let path = try SharePath(plain: try ShareServer.query(request, "path") ?? "")
        guard !path.isRoot else { throw ShareError(.conflict, "the shared folder is a folder") }
        guard let length = request.headers[.init("Upload-Length")!].flatMap({ Int64($0) }), length >= 0 else {
            throw ShareError(.badRequest, "an Upload-Length header with the file's size is needed")
        }
        try checkSize(length)
        // An empty file is judged by its name, and can be judged now.
        if length == 0 { try uploadTypes?.checkEmptyFile(at: path) }
        let token = try await blocking { () throws(ShareError) in try self.uploads.start(path: path, length: length) }
        var response = Response.json(status: .created, body: "{\"upload\":\"\(token)\",\"offset\":0}")
        response.headers[.init("Upload-Offset")!] = "0"
        response.headers[.location] = "/api/uploads/\(token)"
        return response
    }

    /// `PATCH /api/uploads/T` with `Upload-Offset`: appends a chunk; the last one puts the file in place.
    func continueUpload(_ request: Request, context: ShareContext) async throws -> Response {
        let token = try ShareServer.token(context)
        guard let offset = request.headers[.init("Upload-Offset")!].flatMap({ Int64($0) }) else {
            throw ShareError(.badRequest, "an Upload-Offset header is needed")
        }
        let upload = try await blocking { () throws(ShareError) in try self.uploads.open(token) }
        defer { close(upload.fd) }
        guard offset == upload.offset else {
            var response = Response.json(status: .conflict, error: "the upload is at byte \(upload.offset), not \(offset)")
            response.headers[.init("Upload-Offset")!] = String(upload.offset)
            return response
        }
        let replaced: Bool
        let now: Int64
        do {
            let written = try await write(
                request.body, to: upload.fd, at: offset, limit: upload.length,
                checkingTypeFor: upload.path, totalSize: upload.length)
            now = offset + written
            guard now == upload.length else {
                var response = Response(status: .noContent)
                response.headers[.init("Upload-Offset")!] = String(now)
                return response
            }
            replaced = try await change([upload.path], method: "PATCH", context: context) { () throws(ShareError) in
                try self.uploadTypes?.check(stagedFile: upload.fd, for: upload.path)
                if cfs_fsync(upload.fd) < 0 { throw SharedFolder.error(errno, upload.path) }
                return try self.uploads.finish(token, path: upload.path)
            }
        } catch let error as ShareError where error.kind == .unsupportedMediaType {
            // A refused type does not become acceptable by sending it again: the upload ends here.
            uploads.discard(token)
            throw error
        }
        var response = Response.json(status: replaced ? .ok : .created, body: "{\"path\":\(JSONText.quoted(upload.path.description))}")
        response.headers[.init("Upload-Offset")!] = String(now)
        return response
    }

    /// `HEAD /api/uploads/T`: where to continue.
    func uploadStatus(context: ShareContext) async throws -> Response {
        let token = try ShareServer.token(context)
        let upload = try await blocking { () throws(ShareError) in try self.uploads.open(token) }
        close(upload.fd)
        return Response(status: .noContent, headers: [
            .init("Upload-Offset")!: String(upload.offset), .init("Upload-Length")!: String(upload.length),
            .cacheControl: "no-store",
        ])
    }

    /// `DELETE /api/uploads/T`: cancels; nothing is left behind.
    func cancelUpload(context: ShareContext) async throws -> Response {
        let token = try ShareServer.token(context)
        try await blocking { () throws(ShareError) in try self.uploads.cancel(token) }
        return Response(status: .noContent)
    }

    static func token(_ context: ShareContext) throws(ShareError) -> String {
        guard let token = context.parameters.get("token"), ResumableUploads.isValid(token) else {
            throw ShareError(.notFound, "no such upload")
        }
        return token
    }
}

/// Uploads that survive an interrupted connection (and a server restart):
/// the staging file holds the bytes received so far, and a small sidecar the
/// target path and length.
final class ResumableUploads: Sendable {
    /// The chunk size the page uses.
    static let chunkBytes = 8 * 1024 * 1024
    private let folder: SharedFolder
    /// Uploads being written to now, so two requests never write one at once.
    private let busy = Mutex<Set<String>>([])

    struct Open {
        var fd: Int32
        var path: SharePath
        var length: Int64
        var offset: Int64
    }

    init(folder: SharedFolder) { self.folder = folder }

    static func isValid(_ token: String) -> Bool {
        token.utf8.count == 32 && token.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    func start(path: SharePath, length: Int64) throws(ShareError) -> String {
        var random = SystemRandomNumberGenerator()
        let token = (0..<2).map { _ in String(random.next(), radix: 16).leftPadded(16) }.joined()
        let fd = try folder.createStagingFile(named: "resumable-" + token)
        close(fd)
        let sidecar = try folder.createStagingFile(named: "resumable-" + token + ".info")
        defer { close(sidecar) }
        let info = Array("\(length)\n\(path.description)".utf8)
        let result = info.withUnsafeBytes { cfs_pwrite_all(sidecar, $0.baseAddress, $0.count, 0) }
        if result < 0 {
            cancelQuietly(token)
            throw SharedFolder.error(Int32(-result), path)
        }
        return token
    }

    func open(_ token: String) throws(ShareError) -> Open {
        let sidecar = try folder.openStagingFile(named: "resumable-" + token + ".info")
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { cfs_pread(sidecar, $0.baseAddress, $0.count, 0) }
        close(sidecar)
        guard count > 0 else { throw ShareError(.notFound, "no such upload") }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        guard let newline = text.firstIndex(of: "\n"), let length = Int64(text[..<newline]) else {
            throw ShareError(.notFound, "no such upload")
        }
        let path = try SharePath(plain: String(text[text.index(after: newline)...]))
        let fd = try folder.openStagingFile(named: "resumable-" + token)
        var raw = cfs_stat()
        guard cfs_fstat(fd, &raw) == 0 else {
            close(fd)
            throw ShareError(.notFound, "no such upload")
        }
        return Open(fd: fd, path: path, length: length, offset: Int64(raw.size))
    }

    func finish(_ token: String, path: SharePath) throws(ShareError) -> Bool {
        let replaced = try folder.commitStagingFile(named: "resumable-" + token, to: path)
        folder.discardStagingFile(named: "resumable-" + token + ".info")
        return replaced
    }

    func cancel(_ token: String) throws(ShareError) {
        guard folder.stagingFileSize(named: "resumable-" + token + ".info") != nil else {
            throw ShareError(.notFound, "no such upload")
        }
        cancelQuietly(token)
    }

    /// Ends an upload and removes what it staged, whether or not it exists.
    func discard(_ token: String) {
        cancelQuietly(token)
    }

    private func cancelQuietly(_ token: String) {
        folder.discardStagingFile(named: "resumable-" + token)
        folder.discardStagingFile(named: "resumable-" + token + ".info")
    }
}
