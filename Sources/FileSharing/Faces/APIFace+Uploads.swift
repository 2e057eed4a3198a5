import FileWatching
import HTTPTypes
import Hummingbird
import NIOCore

extension APIFace {
    /// `PUT /api/files/P`: the body streamed to a staged file on the same
    /// file system, checked, flushed, and put in place only once complete;
    /// the answer names where (``uploaded(at:requested:replaced:)``). The
    /// request's conditions on `P` are checked before the body is read, and
    /// again when the file is put in place.
    func upload(_ request: Request, context: ShareContext) async throws -> Response {
        try await upload(at: APIRequest.path(of: request, after: "/api/files/"), request: request, context: context)
    }

    /// The body of `request` put at `path`, as `PUT /api/files/P` does (a share link's uploads too).
    /// - Parameter keepingBoth: Whether a file already at `path` stays, the
    ///   new one put beside it under the first free name (`NAME 2.ext`)
    ///   instead of replacing it: a drop box's way.
    func upload(at path: SharePath, request: Request, context: ShareContext, keepingBoth: Bool = false)
        async throws -> Response
    {
        guard !path.isRoot else { throw ShareError(.conflict, "the shared folder is a folder") }
        if keepingBoth { try core.authorize(.add, path) } else { try await core.authorizePut(path) }
        let declared = try UploadBody.declaredSize(request.headers)
        try UploadBody.checkSize(declared, core: core)
        try await core.refuseIfLocked([path])
        let conditions = WritePreconditions(request.headers)
        try await core.check(conditions, at: path)
        let folder = core.folder
        let file = try await core.blocking { try StagedFile.create(in: folder, prefix: "upload-") }
        _ = try await UploadBody.write(
            request.body, to: file, at: 0, limit: core.maxUploadBytes, core: core, checkingTypeFor: path,
            totalSize: declared)
        try await core.refuseIfLocked([path])
        // The validator of exactly the content sent, taken before it is put
        // in place (a rename keeps inode, size and time): an editor sends its
        // next save with `If-Match` without asking again, and a write by
        // someone else right after this one still makes that save a 412.
        let stored = try? await core.blocking { try SharedFolder.metadata(fd: file.descriptor, path: path) }
        let placed = try await FolderHistory.$editSession.withValue(
            keepingBoth ? nil : EditSession(request.headers, requester: Requester.current)
        ) {
            try await core.commit(
                file, to: path, origin: APIFace.origin(context, method: "PUT"), creatingParents: true,
                conditions: conditions, keepingBoth: keepingBoth)
        }
        var response = APIFace.uploaded(at: placed.path, requested: path, replaced: placed.replaced)
        if let stored { response.headers[.eTag] = stored.entityTag }
        return response
    }

    /// The answer to a complete upload: 200 when it replaced a file, 201
    /// when it made one; `{"path": P}`, where the file is. When its name was
    /// corrected (`--fix-extensions`), `P` is the corrected path, the body
    /// also has `"requestedPath"`, and `Location` points at the file.
    static func uploaded(at path: SharePath, requested: SharePath, replaced: Bool) -> Response {
        guard path != requested else {
            return .json(status: replaced ? .ok : .created, body: "{\"path\":\(JSONText.quoted(path.description))}")
        }
        var response = Response.json(
            status: .created,
            body: "{\"path\":\(JSONText.quoted(path.description)),"
                + "\"requestedPath\":\(JSONText.quoted(requested.description))}")
        response.headers[.location] = "/api/files" + WebDAV.href(path, collection: false).dropFirst("/dav".count)
        return response
    }

    // MARK: Resumable uploads

    /// `POST /api/uploads?path=P` with `Upload-Length`: starts an upload that
    /// can be continued after an interruption. The request's conditions on
    /// `P` are checked now, kept, and checked again when the last chunk puts
    /// the file in place.
    func startUpload(_ request: Request, context: ShareContext) async throws -> Response {
        guard let length = try UploadBody.byteCount(request.headers, .uploadLength) else {
            throw ShareError(.badRequest, "an Upload-Length header with the file's size is needed")
        }
        let path = try SharePath(plain: try APIRequest.query(request, "path") ?? "")
        guard !path.isRoot else { throw ShareError(.conflict, "the shared folder is a folder") }
        try await core.authorizePut(path)
        try UploadBody.checkSize(length, core: core)
        // An empty file is judged by its name, and can be judged now.
        if length == 0 { try core.uploadTypes.checkEmptyFile(at: path) }
        let conditions = WritePreconditions(request.headers)
        try await core.check(conditions, at: path)
        let token = try await core.uploads.begin(
            path: path, length: length, conditions: conditions,
            owner: PendingUploads.owner(user: context.user, address: context.address), core: core)
        var response = Response.json(status: .created, body: "{\"upload\":\"\(token)\",\"offset\":0}")
        response.headers[.uploadOffset] = "0"
        response.headers[.uploadExpires] = HTTPDate.format(
            nanoseconds: core.uploads.expiry(lastWritten: core.uploads.now))
        response.headers[.location] = "/api/uploads/\(token)"
        return response
    }

    /// `PATCH /api/uploads/T` with `Upload-Offset`: appends a chunk; the last
    /// one puts the file in place. One request at a time: another one that
    /// comes while a chunk is being written gets 409 (without an offset: it
    /// is not known until that chunk ends).
    func continueUpload(_ request: Request, context: ShareContext) async throws -> Response {
        let token = try APIFace.token(context)
        guard let offset = try UploadBody.byteCount(request.headers, .uploadOffset) else {
            throw ShareError(.badRequest, "an Upload-Offset header is needed")
        }
        let outcome: ResumableAppend.Outcome
        do {
            outcome = try await ResumableAppend.append(
                core: core, token: token, at: offset, body: request.body,
                origin: APIFace.origin(context, method: "PATCH"))
        } catch let mismatch as ResumableOffsetMismatch {
            var response = Response.json(
                status: .conflict, error: "the upload is at byte \(mismatch.offset), not \(offset)")
            response.headers[.uploadOffset] = String(mismatch.offset)
            return response
        }
        guard outcome.completed else {
            var response = Response(status: .noContent)
            response.headers[.uploadOffset] = String(outcome.offset)
            if let expires = outcome.expires {
                response.headers[.uploadExpires] = HTTPDate.format(nanoseconds: expires)
            }
            return response
        }
        var response = APIFace.uploaded(at: outcome.path, requested: outcome.requested, replaced: outcome.replaced)
        response.headers[.uploadOffset] = String(outcome.offset)
        return response
    }

    /// `HEAD /api/uploads/T`: where to continue.
    func uploadStatus(context: ShareContext) async throws -> Response {
        let upload = try await open(try APIFace.token(context))
        return Response(
            status: .noContent,
            headers: [
                .uploadOffset: String(upload.offset), .uploadLength: String(upload.length),
                .uploadExpires: HTTPDate.format(nanoseconds: core.uploads.expiry(lastWritten: upload.lastWritten)),
                .cacheControl: "no-store",
            ])
    }

    /// `DELETE /api/uploads/T`: cancels; nothing is left behind. 409 while
    /// a chunk is being written (its file would go from under it).
    func cancelUpload(context: ShareContext) async throws -> Response {
        let existed = try await ResumableAppend.cancel(core: core, token: try APIFace.token(context))
        guard existed else { throw ShareError(.notFound, "no such upload") }
        return Response(status: .noContent)
    }

    private func open(_ token: String) async throws -> ResumableUploads.Open {
        let uploads = core.uploads
        guard let upload = try await core.blocking({ try uploads.open(token) }) else {
            throw ShareError(.notFound, "no such upload")
        }
        return upload
    }

    static func token(_ context: ShareContext) throws(ShareError) -> String {
        guard let token = context.parameters.get("token"), ResumableUploads.isValid(token) else {
            throw ShareError(.notFound, "no such upload")
        }
        return token
    }
}

extension EditSession {
    /// The session a save names in `Fileshare-Edit-Session` (see `http-api.md`),
    /// of `requester`; `nil` without the header or for a token that is not one.
    init?(_ headers: HTTPFields, requester: Requester) {
        guard let token = headers[HTTPField.Name("Fileshare-Edit-Session")!] else { return nil }
        self.init(token: token, owner: requester.name)
    }
}
