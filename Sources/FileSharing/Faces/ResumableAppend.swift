import ChangeLog
import FileWatching
import Hummingbird

/// One step of a resumable upload, for both protocols that speak it (the
/// JSON API's `/api/uploads` and tus at `/api/tus`): the body appended at
/// the offset the client names, and, with the last byte, the file checked
/// and put in place as one change.
///
/// One request at a time writes an upload: a second one for the same
/// upload while the first is writing gets 409 (both at one offset would
/// otherwise pass the offset check and write over each other).
enum ResumableAppend {
    /// Where an upload stands after a step.
    struct Outcome: Sendable {
        /// The bytes the server has now.
        var offset: Int64
        /// Where the file is (or will be): the upload's target, or, once
        /// complete, the name it was corrected to (`--fix-extensions`).
        var path: SharePath
        /// The target the upload was started with.
        var requested: SharePath
        /// Whether the file is complete and in place, and whether it replaced one.
        var completed: Bool
        var replaced: Bool
    }

    /// Appends `body` at `offset` to the upload `token` (on behalf of `origin`).
    /// - Throws: ``ShareError``: 404 for no such upload, 409 for another
    ///   offset (with the one the server has) or another request writing it,
    ///   413 past the announced length; ``UploadRefusal`` for a refused type
    ///   and ``PreconditionFailure`` for a file changed since the upload
    ///   began (the upload is then discarded: sending it again won't change it).
    static func append(
        core: ShareCore, token: String, at offset: Int64, body: RequestBody, origin: ChangeOrigin
    ) async throws -> Outcome {
        guard core.uploads.claim(token) else {
            throw ShareError(
                .conflict, "another request is writing this upload; ask where it stands (HEAD), then go on")
        }
        defer { core.uploads.release(token) }
        let uploads = core.uploads
        guard let upload = try await core.blocking({ try uploads.open(token) }) else {
            throw ShareError(.notFound, "no such upload")
        }
        guard offset == upload.offset else {
            throw ResumableOffsetMismatch(offset: upload.offset)
        }
        do {
            let written = try await UploadBody.write(
                body, to: upload.file, at: offset, limit: upload.length, core: core,
                checkingTypeFor: upload.path, totalSize: upload.length)
            let now = offset + written
            guard now == upload.length else {
                return Outcome(
                    offset: now, path: upload.path, requested: upload.path, completed: false, replaced: false)
            }
            try APIFace(core: core, readOnly: false).refuseIfLocked([upload.path])
            let placed = try await core.commit(
                upload.file, to: upload.path, origin: origin, creatingParents: true, conditions: upload.conditions)
            uploads.finished(token)
            return Outcome(
                offset: now, path: placed.path, requested: upload.path, completed: true, replaced: placed.replaced)
        } catch let error as UploadRefusal where error.kind == .refused {
            // A refused type does not become acceptable by sending it again: the upload ends here.
            uploads.discard(token)
            throw error
        } catch let error as PreconditionFailure {
            // Nor does a file changed since the upload began become unchanged.
            uploads.discard(token)
            throw error
        }
    }
}

extension ResumableAppend {
    /// Ends the upload `token` and removes what it staged; `false` when
    /// there is none. 409 while a request writes to it (its file would go
    /// from under it).
    static func cancel(core: ShareCore, token: String) async throws -> Bool {
        let uploads = core.uploads
        guard uploads.claim(token) else {
            throw ShareError(.conflict, "a chunk is being written to this upload; cancel it when that ends")
        }
        defer { uploads.release(token) }
        return try await core.blocking {
            guard uploads.exists(token) else { return false }
            uploads.discard(token)
            return true
        }
    }
}

/// The client's offset is not the server's: 409, with the server's offset.
struct ResumableOffsetMismatch: Error, Sendable {
    var offset: Int64
}
