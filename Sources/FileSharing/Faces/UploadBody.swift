import HTTPTypes
import Hummingbird
import NIOCore

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
