import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// A request body written to a staged file, for every face that takes
/// uploads: gathered in parts of up to 1 MiB (so the thread hops stay few
/// and memory stays flat), held to a size limit (413), and checked against
/// the accepted types as soon as its first bytes tell (415).
enum UploadBody {
    /// 413 over the limit, 507 when the disk has no room for what is announced.
    static func checkSize(_ size: Int64?, core: ShareCore) throws(ShareError) {
        guard let size else { return }
        if let limit = core.maxUploadBytes, size > limit {
            throw ShareError(.contentTooLarge, "the file is larger than this share accepts (\(limit) bytes)")
        }
        let available = core.folder.availableBytes
        if size > available {
            throw ShareError(
                .insufficientStorage, "the disk is full: \(size) bytes do not fit in the \(available) free")
        }
    }

    /// The byte count or offset in the header `name` (`Upload-Length`,
    /// `Upload-Offset`); `nil` when there is none.
    /// - Throws: 400 naming the header when it is not a number of bytes a
    ///   file can have (0 to 2^63 − 1).
    static func byteCount(_ headers: HTTPFields, _ name: HTTPField.Name) throws(ShareError) -> Int64? {
        guard let text = headers[name] else { return nil }
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(text) else {
            throw ShareError(
                .badRequest,
                "\(name.rawName) must be a number of bytes from 0 to \(Int64.max), not '\(text.prefix(40))'")
        }
        return value
    }

    /// The size a `PUT` announces (`Content-Length`; `nil` for a chunked body).
    /// - Throws: 400 naming the header for a `Content-Length` that is not a
    ///   number of bytes, and for any `Content-Range`: a partial `PUT` is not
    ///   supported, and its body must not be taken for the whole file (RFC
    ///   9110, 14.5).
    static func declaredSize(_ headers: HTTPFields) throws(ShareError) -> Int64? {
        if headers[.contentRange] != nil {
            throw ShareError(
                .badRequest,
                "Content-Range is not supported on PUT: send the whole file, or continue a resumable upload")
        }
        return try byteCount(headers, .contentLength)
    }

    /// The next part of a body; a body whose framing the decoder cannot read
    /// (a chunk size past what a number holds, say) is a 400 naming the
    /// problem, not a failure of the server.
    private static func next(_ parts: inout RequestBody.AsyncIterator) async throws -> ByteBuffer? {
        do {
            return try await parts.next()
        } catch let error as HTTPParserError {
            throw ShareError(.badRequest, UploadBody.message(error))
        }
    }

    /// For a person: what is wrong with a body's framing.
    static func message(_ error: HTTPParserError) -> String {
        switch error {
        case .invalidChunkSize:
            "a chunk size of the body (Transfer-Encoding: chunked) is not a hexadecimal number of bytes below 2^63"
        case .invalidContentLength, .unexpectedContentLength:
            "Content-Length must be a number of bytes from 0 to \(Int64.max), sent once"
        default:
            "the request body cannot be read: its framing (Content-Length or Transfer-Encoding) is malformed"
        }
    }

    /// Writes `body` at `offset`; returns the bytes written.
    ///
    /// With accepted types and `checkingTypeFor`, the file's first bytes
    /// are checked as soon as they are written (`UploadTypePolicy`): an
    /// upload whose prefix already shows a refused type ends with 415 then,
    /// not after the rest has arrived.
    ///
    /// - Parameters:
    ///   - path: Where the file will be, to check its first bytes; `nil` not to.
    ///   - totalSize: The complete file's size, if announced.
    static func write(
        _ body: RequestBody, to file: StagedFile, at offset: Int64, limit: Int64?, core: ShareCore,
        checkingTypeFor path: SharePath? = nil, totalSize: Int64? = nil
    ) async throws -> Int64 {
        // Told as activity, for presenters of the file in this process: how
        // far it is, and when it ends (complete, refused or cut off) — a
        // resumable upload's chunk before its last ends nothing.
        let activity = core.activity
        if let path, activity.isActive {
            activity.publish(
                FolderActivity(path: path.description, kind: .receiving(offset: offset, length: totalSize)))
        }
        var moreToCome = false
        defer {
            if let path, activity.isActive, !moreToCome {
                activity.publish(FolderActivity(path: path.description, kind: .received))
            }
        }
        var written: Int64 = 0
        var pending = ByteBuffer()
        // Checked once: when the bytes written first reach what identification reads.
        let policy = path == nil ? nil : core.uploadTypes
        var prefixChecked = policy.map { offset >= Int64($0.prefixLength) } ?? true
        /// - Parameter last: Whether the body has ended (then the whole file is checked
        ///   anyway, unless this is a chunk before the end of a resumable upload).
        func flush(last: Bool = false) async throws {
            guard pending.readableBytes > 0 else { return }
            let chunk = pending
            let position = offset + written
            try await core.blocking { try file.write(chunk, at: position, path: path ?? .root) }
            written += Int64(chunk.readableBytes)
            pending.clear()
            let available = offset + written
            if let path, activity.isActive {
                activity.publish(
                    FolderActivity(path: path.description, kind: .receiving(offset: available, length: totalSize)))
            }
            let moreToCome = !last || totalSize.map { available < $0 } ?? false
            if !prefixChecked, moreToCome, let policy, let path, available >= Int64(policy.prefixLength) {
                prefixChecked = true
                try await core.blocking {
                    try policy.checkPrefix(
                        ofStagedFile: file.descriptor, available: available, for: path, totalSize: totalSize)
                }
            }
        }
        var parts = body.makeAsyncIterator()
        while let buffer = try await UploadBody.next(&parts) {
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
        moreToCome = totalSize.map { offset + written < $0 } ?? false
        return written
    }
}

extension HTTPField.Name {
    /// The bytes a resumable upload has (tus, `/api/uploads`).
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    /// The size of a resumable upload's file.
    static let uploadLength = HTTPField.Name("Upload-Length")!
    /// When a resumable upload no request writes to ends (tus's `expiration`).
    static let uploadExpires = HTTPField.Name("Upload-Expires")!
}
