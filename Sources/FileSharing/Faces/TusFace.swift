import ChangeLog
import FileWatching
import Hummingbird
import NIOCore

/// Resumable uploads in tus 1.0 (<https://tus.io/protocols/resumable-upload>:
/// core, creation, creation-with-upload, termination, expiration) at `/api/tus/`, so
/// the many tus clients (tus-js-client, tuspy, TUSKit, tus-java-client…)
/// upload to the shared folder as they are.
///
/// The target path is the `path` key of `Upload-Metadata` (base64, as tus
/// says; `filename` is used in the root when there is no `path`). It is the
/// same upload as `/api/uploads`: the bytes go to a staged file that
/// survives a restart, the type is checked from the first bytes, the
/// length against the server's limit, WebDAV locks are respected, and the
/// file is put in place, as one change, only once complete. An upload no
/// request writes to for a day ends (`Upload-Expires` says when), and a
/// user may have only so many under way (429).
struct TusFace: Sendable {
    let core: ShareCore

    /// The protocol version this server speaks.
    static let version = "1.0.0"
    /// The extensions it supports.
    static let extensions = "creation,creation-with-upload,termination,expiration"
    /// The media type of a PATCH body.
    static let chunkType = "application/offset+octet-stream"

    /// The routes, to mount at `/api/tus`.
    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.add(middleware: TusErrorMiddleware())
        routes.on("", method: .options) { _, _ in self.options() }
        routes.post("") { request, context in try await self.create(request, context: context) }
        routes.head(":token") { request, context in try await self.status(request, context: context) }
        routes.patch(":token") { request, context in try await self.append(request, context: context) }
        routes.delete(":token") { request, context in try await self.terminate(request, context: context) }
        routes.on(":token", method: .options) { _, _ in self.options() }
        return routes
    }

    // MARK: Requests

    /// `OPTIONS /api/tus/`: what the server supports.
    func options() -> Response {
        var headers = TusFace.headers()
        headers[.init("Tus-Version")!] = TusFace.version
        headers[.init("Tus-Extension")!] = TusFace.extensions
        if let max = core.maxUploadBytes { headers[.init("Tus-Max-Size")!] = String(max) }
        return Response(status: .noContent, headers: headers)
    }

    /// `POST /api/tus/` with `Upload-Length` and `Upload-Metadata`: a new
    /// upload, at `Location`; with a body (creation-with-upload) its first bytes.
    func create(_ request: Request, context: ShareContext) async throws -> Response {
        // What is malformed is 400 first; a well-formed request in another version 412.
        if request.headers[.init("Upload-Defer-Length")!] != nil {
            throw TusError(.badRequest, "Upload-Defer-Length is not supported: send Upload-Length")
        }
        guard let length = try UploadBody.byteCount(request.headers, .uploadLength) else {
            throw TusError(.badRequest, "an Upload-Length header with the file's size is needed")
        }
        let metadata = try TusMetadata(request.headers[.init("Upload-Metadata")!] ?? "")
        let path = try metadata.targetPath()
        // The path is in the metadata, not the URL: the audit is told.
        AuditNote.about(path: path.description)
        try TusFace.checkVersion(request)
        try await core.authorizePut(path)
        // 413 past the server's limit (`Tus-Max-Size`), 507 when the disk has no room.
        try UploadBody.checkSize(length, core: core)
        try await core.refuseIfLocked([path])
        if length == 0 { try core.uploadTypes.checkEmptyFile(at: path) }
        let token = try await core.uploads.begin(
            path: path, length: length, owner: PendingUploads.owner(user: context.user, address: context.address),
            core: core)
        var headers = TusFace.headers()
        headers[.location] = "/api/tus/\(token)"
        var outcome: ResumableAppend.Outcome? = nil
        if request.headers[.contentType].map(TusFace.isChunkType) == true {
            // creation-with-upload: the first bytes with the creation.
            outcome = try await ResumableAppend.append(
                core: core, token: token, at: 0, body: request.body, origin: TusFace.origin(context, method: "POST"))
        } else if length == 0 {
            // An empty file is complete at once.
            outcome = try await ResumableAppend.append(
                core: core, token: token, at: 0, body: RequestBody(buffer: ByteBuffer()),
                origin: TusFace.origin(context, method: "POST"))
        }
        headers[.uploadOffset] = String(outcome?.offset ?? 0)
        if outcome?.completed != true {
            let expires = outcome?.expires ?? core.uploads.expiry(lastWritten: core.uploads.now)
            headers[.uploadExpires] = HTTPDate.format(nanoseconds: expires)
        }
        return Response(status: .created, headers: headers)
    }

    /// `HEAD /api/tus/T`: where to continue.
    func status(_ request: Request, context: ShareContext) async throws -> Response {
        try TusFace.checkVersion(request)
        let upload = try await open(try TusFace.token(context))
        var headers = TusFace.headers()
        headers[.uploadOffset] = String(upload.offset)
        headers[.uploadLength] = String(upload.length)
        headers[.uploadExpires] = HTTPDate.format(nanoseconds: core.uploads.expiry(lastWritten: upload.lastWritten))
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers)
    }

    /// `PATCH /api/tus/T` with `Upload-Offset`: appends the body; the last
    /// bytes put the file in place.
    func append(_ request: Request, context: ShareContext) async throws -> Response {
        guard let offset = try UploadBody.byteCount(request.headers, .uploadOffset) else {
            throw TusError(.badRequest, "an Upload-Offset header (the bytes the server has) is needed")
        }
        try TusFace.checkVersion(request)
        let token = try TusFace.token(context)
        guard request.headers[.contentType].map(TusFace.isChunkType) == true else {
            throw TusError(.unsupportedMediaType, "a PATCH body must be sent as \(TusFace.chunkType)")
        }
        let outcome = try await ResumableAppend.append(
            core: core, token: token, at: offset, body: request.body, origin: TusFace.origin(context, method: "PATCH"))
        var headers = TusFace.headers()
        headers[.uploadOffset] = String(outcome.offset)
        if let expires = outcome.expires { headers[.uploadExpires] = HTTPDate.format(nanoseconds: expires) }
        return Response(status: .noContent, headers: headers)
    }

    /// `DELETE /api/tus/T`: ends the upload; nothing is left behind.
    func terminate(_ request: Request, context: ShareContext) async throws -> Response {
        try TusFace.checkVersion(request)
        let existed = try await ResumableAppend.cancel(core: core, token: try TusFace.token(context))
        guard existed else { throw TusError(.notFound, "no such upload") }
        return Response(status: .noContent, headers: TusFace.headers())
    }

    // MARK: Helpers

    /// The origin of a change made through this face.
    static func origin(_ context: ShareContext, method: String) -> ChangeOrigin {
        ChangeOrigin(face: "tus", client: context.client, user: context.user, method: method)
    }

    /// `Tus-Resumable: 1.0.0`, which every answer but `OPTIONS`'s carries (that one too, harmlessly).
    static func headers() -> HTTPFields {
        [.init("Tus-Resumable")!: version]
    }

    /// 412 with `Tus-Version` when the client speaks another version; 400
    /// when it says none (not a tus request at all).
    static func checkVersion(_ request: Request) throws(TusError) {
        guard let spoken = request.headers[.init("Tus-Resumable")!], !spoken.isEmpty else {
            throw TusError(.badRequest, "a tus request needs Tus-Resumable: \(version)")
        }
        guard spoken == version else {
            throw TusError(
                .preconditionFailed, "this server speaks tus \(version), not \(spoken): send Tus-Resumable: \(version)")
        }
    }

    static func isChunkType(_ value: String) -> Bool {
        value.split(separator: ";").first.map { $0.trimmingCharacters().lowercased() } == chunkType
    }

    static func token(_ context: ShareContext) throws(TusError) -> String {
        guard let token = context.parameters.get("token"), ResumableUploads.isValid(token) else {
            throw TusError(.notFound, "no such upload")
        }
        return token
    }

    private func open(_ token: String) async throws -> ResumableUploads.Open {
        let uploads = core.uploads
        guard let upload = try await core.blocking({ try uploads.open(token) }) else {
            throw TusError(.notFound, "no such upload")
        }
        return upload
    }
}

/// A failure answered the tus way: the status, `Tus-Resumable` (and
/// `Tus-Version` on a version mismatch), and the reason as plain text.
struct TusError: Error, Sendable {
    var status: HTTPResponse.Status
    var message: String

    init(_ kind: ShareError.Kind, _ message: String) {
        self.status = HTTPResponse.Status(code: kind.rawValue)
        self.message = message
    }
}

/// `Upload-Metadata`: comma-separated `key base64value` pairs (a key alone has no value).
struct TusMetadata: Sendable, Equatable {
    var values: [String: String]

    init(_ header: String) throws(TusError) {
        var values: [String: String] = [:]
        for pair in header.split(separator: ",") {
            let parts = pair.trimmingCharacters().split(separator: " ", omittingEmptySubsequences: true)
            guard let key = parts.first, parts.count <= 2 else {
                throw TusError(.badRequest, "Upload-Metadata must be comma-separated pairs of a key and a base64 value")
            }
            if parts.count == 1 {
                values[String(key)] = ""
                continue
            }
            guard let bytes = Base64.decode(String(parts[1])) else {
                throw TusError(.badRequest, "the Upload-Metadata value of '\(key)' is not base64")
            }
            values[String(key)] = String(decoding: bytes, as: UTF8.self)
        }
        self.values = values
    }

    /// Where the file goes: `path`, else `filename` in the shared folder's root.
    func targetPath() throws(TusError) -> SharePath {
        guard let text = values["path"] ?? values["filename"], !text.isEmpty else {
            throw TusError(
                .badRequest,
                "Upload-Metadata needs a 'path' (the file's path in the shared folder, base64), or a 'filename'")
        }
        let path: SharePath
        do {
            path = try SharePath(plain: text)
        } catch {
            throw TusError(.badRequest, error.message)
        }
        guard !path.isRoot else { throw TusError(.conflict, "the shared folder is a folder") }
        return path
    }
}

/// Answers ``TusError`` (and the core's errors inside the tus routes, with
/// the `/api` mapping: ``ErrorMiddleware/shareError(for:)``) with
/// `Tus-Resumable` (tus clients check it on every answer) and the reason as
/// `{"error": "..."}`, like the rest of `/api`.
struct TusErrorMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as TusError {
            return TusErrorMiddleware.answer(error.status, error.message)
        } catch let error as ResumableOffsetMismatch {
            var response = TusErrorMiddleware.answer(
                .conflict, "the upload is at byte \(error.offset): send Upload-Offset: \(error.offset)")
            response.headers[.uploadOffset] = String(error.offset)
            return response
        } catch {
            guard let answer = ErrorMiddleware.shareError(for: error) else { throw error }
            return TusErrorMiddleware.answer(HTTPResponse.Status(code: answer.kind.rawValue), answer.message)
        }
    }

    static func answer(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var response = Response.json(status: status, error: message)
        response.headers[.init("Tus-Resumable")!] = TusFace.version
        if status == .preconditionFailed { response.headers[.init("Tus-Version")!] = TusFace.version }
        return response
    }
}
