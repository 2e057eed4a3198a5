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
        /// When the upload expires unless a request writes to it again, in
        /// nanoseconds since 1970 (`nil` once it is complete).
        var expires: Int64?
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
        let uploads = core.uploads
        guard try await claim(token, uploads) else {
            throw ShareError(
                .conflict, "another request is writing this upload; ask where it stands (HEAD), then go on")
        }
        // Where the upload stands when this request lets go (`nil`: it ended).
        var reached: Int64? = nil
        do {
            let outcome = try await write(
                core: core, uploads: uploads, token: token, at: offset, body: body, origin: origin, reached: &reached)
            await release(token, uploads, core: core, reached: reached)
            return outcome
        } catch {
            await release(token, uploads, core: core, reached: reached)
            throw error
        }
    }

    /// Ends the claim on `token`, the upload at `reached` (`nil`: it ended).
    /// One still under way was written to now: its lifetime starts again
    /// (also when this request brought no byte, as the database's does).
    private static func release(_ token: String, _ uploads: ResumableUploads, core: ShareCore, reached: Int64?)
        async
    {
        if reached != nil { _ = try? await core.blocking { uploads.touch(token) } }
        await uploads.release(token, offset: reached)
    }

    /// Claims `token`; 503 when the uploads' database cannot be asked.
    private static func claim(_ token: String, _ uploads: ResumableUploads) async throws(ShareError) -> Bool {
        do {
            return try await uploads.claim(token)
        } catch {
            throw ShareError(.serviceUnavailable, error.message)
        }
    }

    /// ``append(core:token:at:body:origin:)`` under the claim.
    private static func write(
        core: ShareCore, uploads: ResumableUploads, token: String, at offset: Int64, body: RequestBody,
        origin: ChangeOrigin, reached: inout Int64?
    ) async throws -> Outcome {
        guard let upload = try await core.blocking({ try uploads.open(token) }) else {
            await uploads.forget(token)
            throw ShareError(.notFound, "no such upload")
        }
        // The URL names the upload, not the file: the audit is told where it goes.
        AuditNote.about(path: upload.path.description)
        reached = upload.offset
        guard offset == upload.offset else {
            throw ResumableOffsetMismatch(offset: upload.offset)
        }
        do {
            let written = try await UploadBody.write(
                body, to: upload.file, at: offset, limit: upload.length, core: core,
                checkingTypeFor: upload.path, totalSize: upload.length)
            let now = offset + written
            reached = now
            guard now == upload.length else {
                return Outcome(
                    offset: now, expires: uploads.expiry(lastWritten: uploads.now), path: upload.path,
                    requested: upload.path, completed: false, replaced: false)
            }
            try await core.refuseIfLocked([upload.path])
            let placed = try await core.commit(
                upload.file, to: upload.path, origin: origin, creatingParents: true, conditions: upload.conditions)
            uploads.finished(token)
            reached = nil
            await uploads.forget(token)
            // The part that puts the file in place is the upload, for whoever asks whether it arrived.
            AuditNote.about(path: placed.path.description, action: "upload")
            return Outcome(
                offset: now, expires: nil, path: placed.path, requested: upload.path, completed: true,
                replaced: placed.replaced)
        } catch let error as UploadRefusal where error.kind == .refused {
            // A refused type does not become acceptable by sending it again: the upload ends here.
            uploads.discard(token)
            reached = nil
            await uploads.forget(token)
            throw error
        } catch let error as PreconditionFailure {
            // Nor does a file changed since the upload began become unchanged.
            uploads.discard(token)
            reached = nil
            await uploads.forget(token)
            throw error
        } catch {
            // Cut off: the bytes written so far stay, and the client asks where it stands.
            if let size = try? upload.file.size() { reached = size }
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
        guard try await claim(token, uploads) else {
            throw ShareError(.conflict, "a chunk is being written to this upload; cancel it when that ends")
        }
        let existed: Bool
        do {
            existed = try await core.blocking { () -> Bool in
                guard uploads.exists(token) else { return false }
                if let upload = try? uploads.open(token) { AuditNote.about(path: upload.path.description) }
                uploads.discard(token)
                return true
            }
        } catch {
            uploads.release(token)
            throw error
        }
        await uploads.release(token, offset: nil)
        await uploads.forget(token)
        return existed
    }
}

/// The client's offset is not the server's: 409, with the server's offset.
struct ResumableOffsetMismatch: Error, Sendable {
    var offset: Int64
}
