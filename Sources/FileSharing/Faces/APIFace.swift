import Accounts
import ChangeLog
import FileWatching
import Hummingbird
import NIOCore
import Previews

#if canImport(Glibc)
    import Glibc
#endif

/// The JSON API at `/api/` (`http-api.md`): listing, downloads, uploads
/// (whole and resumable), changes, thumbnails and ZIP archives. It parses
/// and answers HTTP; the core performs. The core's errors (the folder's,
/// a refused upload) get their statuses from `ShareError(_:)`, mounted with
/// the routes.
struct APIFace: Sendable {
    let core: ShareCore
    /// Whether no change through the server is allowed (for `/api/info`).
    let readOnly: Bool
    /// Large folders' listings, while the tree is unchanged.
    let listings = ListingCache()
    let listingMakings = CoalescedWork<ListingCache.Key, ByteBuffer>()

    /// The routes, to mount at `/api`.
    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("info") { _, _ in self.info() }
        routes.get("list") { request, _ in try await self.list(request) }
        routes.get("files/**") { request, _ in try await self.download(request, head: false) }
        routes.head("files/**") { request, _ in try await self.download(request, head: true) }
        routes.put("files/**") { request, context in try await self.upload(request, context: context) }
        routes.delete("files/**") { request, context in try await self.delete(request, context: context) }
        routes.post("mkdir") { request, context in try await self.makeDirectory(request, context: context) }
        routes.post("move") { request, context in try await self.move(request, context: context) }
        routes.get("thumbnail/**") { request, _ in try await self.thumbnail(request) }
        routes.get("zip") { request, _ in try await self.zip(request) }
        routes.post("uploads") { request, context in try await self.startUpload(request, context: context) }
        routes.patch("uploads/:token") { request, context in try await self.continueUpload(request, context: context) }
        routes.head("uploads/:token") { _, context in try await self.uploadStatus(context: context) }
        routes.delete("uploads/:token") { _, context in try await self.cancelUpload(context: context) }
        return routes
    }

    /// The origin of a change made through this face.
    static func origin(_ context: ShareContext, method: String) -> ChangeOrigin {
        ChangeOrigin(face: "api", client: context.client, user: context.user, method: method)
    }

    /// Performs a change made through this face, refused (423) while a
    /// WebDAV client holds a lock on it (``ShareCore/refuseIfLocked(_:)``),
    /// and (412) when the client's `conditions` do not hold at the moment
    /// of the change.
    func change<T: Sendable>(
        _ paths: [SharePath], method: String, context: ShareContext,
        conditions: [SharePath: WritePreconditions] = [:], _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await core.refuseIfLocked(paths)
        return try await core.perform(
            paths, origin: APIFace.origin(context, method: method), conditions: conditions.filter { !$0.value.isEmpty },
            work)
    }

    // MARK: Info and listing

    /// `GET /api/info`: what the page needs to know about the share.
    func info() -> Response {
        let name = core.folder.rootPath.split(separator: "/").last.map(String.init) ?? "/"
        var body =
            "{\"name\":\(JSONText.quoted(name)),\"readOnly\":\(readOnly),"
            + "\"maxUploadBytes\":\(core.maxUploadBytes ?? 0),\"resumableChunkBytes\":\(ResumableUploads.chunkBytes)"
        // Who signed in (with a users file), for the page's sign-out.
        if let user = Requester.current.user { body += ",\"user\":\(JSONText.quoted(user))" }
        let kinds = APIFace.thumbnailKinds(of: core).map { "\"\($0)\"" }
        body += ",\"thumbnailKinds\":[" + kinds.joined(separator: ",") + "]"
        body += core.databaseInfo
        // Only when uploads are limited: no "acceptedTypes" means every type.
        if let identifiers = core.uploadTypes.identifiers {
            body += ",\"acceptedTypes\":[" + identifiers.map(JSONText.quoted).joined(separator: ",") + "]"
        }
        return .json(status: .ok, body: body + "}")
    }

    /// The kinds whose thumbnails this machine can make (`jpeg`, `cbz`, …), as the page names them.
    static func thumbnailKinds(of core: ShareCore) -> [String] {
        (core.imageThumbnailer?.kinds.map(\.rawValue) ?? []) + (core.thumbnailer?.kinds.map(\.rawValue) ?? [])
    }

    /// `GET /api/list?path=P`: the folder's items, as the observer knows
    /// them, and for each file the entity tag it has on disk now (the
    /// download's `ETag`, for `If-Match` when the client replaces it).
    func list(_ request: Request) async throws -> Response {
        let core = self.core
        let path = try SharePath(plain: try APIRequest.query(request, "path") ?? "")
        let policy = Requester.current.policy
        // A drop box lists as empty, whatever it holds, without asking the disk.
        if try core.listingScope(path) == .empty { return APIFace.emptyListing(path, access: .upload) }
        // Through the disk first: a link that leads out, or a missing folder, answers as it should.
        let metadata = try await core.blocking { try core.folder.metadata(path) }
        guard metadata.kind == .directory else { throw ShareError(.notFound, "'\(path)' is a file, not a folder") }
        // Clients listing the folder at once share the making of its listing.
        let key = ListingCache.Key(path: path, policy: policy)
        let body = try await listingMakings.value(for: key) { try self.listing(key) }
        return APIFace.listingResponse(body)
    }

    /// The JSON of `key`'s folder as the observer's tree has it now: kept,
    /// or made and kept.
    func listing(_ key: ListingCache.Key) throws -> ByteBuffer {
        let (path, policy) = (key.path, key.policy)
        // Read before the tree: a listing kept under it is never older than it.
        let version = core.observer.treeVersion
        if let kept = listings.body(for: key, version: version) { return kept }
        guard let items = core.observer.children(of: path.itemPath) else {
            throw ShareError(.notFound, "'\(path)': no such folder")
        }
        var json = JSONBytes(capacity: 64 + items.count * 180)
        json.raw("{\"path\":")
        json.string(path.description)
        // With a users file: the user's right here, so the page offers only what it allows.
        if !policy.isAdmin {
            json.raw(",\"access\":")
            json.string(policy.right(at: path.components).rawValue)
        }
        json.raw(",\"items\":[")
        var first = true
        var listed: [Item] = []
        listed.reserveCapacity(items.count)
        for item in items {
            // Only the rights need the names apart, and an admin's have no rules to check.
            let components = policy.isAdmin ? [] : item.path.components.map { String(decoding: $0, as: UTF8.self) }
            guard policy.isAdmin || policy.isListed(components) else { continue }
            listed.append(item)
            if !first { json.raw(",") }
            first = false
            // Written from the path's bytes: no string is made per item.
            json.raw("{\"name\":")
            json.string(utf8: item.path.nameBytes)
            json.raw(",\"path\":")
            json.string(utf8: item.path.bytes)
            switch item.kind {
            case .file: json.raw(",\"kind\":\"file\"")
            case .directory: json.raw(",\"kind\":\"directory\"")
            case .symlink: json.raw(",\"kind\":\"symlink\"")
            case .other: json.raw(",\"kind\":\"other\"")
            }
            json.raw(",\"size\":")
            json.integer(item.kind == .directory ? 0 : item.size)
            json.raw(",\"modified\":")
            json.time(nanoseconds: item.modificationTime)
            json.raw(",\"id\":")
            json.id(item.id)
            if let count = item.childCount, AccessRules.showsCount(of: components, policy: policy) {
                json.raw(",\"childCount\":")
                json.integer(Int64(count))
            }
            if item.kind == .file {
                json.raw(",\"writing\":")
                json.bool(item.isWriting)
                // From the observer's tree, as the rest of the item: a listing asks the disk nothing per file.
                json.raw(",\"etag\":")
                json.entityTag(inode: item.inode, size: item.size, modified: item.modificationTime)
            }
            json.raw("}")
        }
        json.raw("]}")
        core.makeThumbnailsAhead(of: listed)
        let body = ByteBuffer(bytes: json.bytes)
        listings.keep(body, for: key, version: version)
        return body
    }

    static func listingResponse(_ body: ByteBuffer) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes),
                .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: body))
    }

    /// The listing of a drop box: nothing, whatever it holds.
    static func emptyListing(_ path: SharePath, access: Right) -> Response {
        .json(
            status: .ok,
            body: "{\"path\":\(JSONText.quoted(path.description)),\"access\":\"\(access.rawValue)\",\"items\":[]}")
    }

    // MARK: Changes

    /// `DELETE /api/files/P`, under the request's conditions on `P`.
    func delete(_ request: Request, context: ShareContext) async throws -> Response {
        let path = try APIRequest.path(of: request, after: "/api/files/")
        try core.authorize(.change, path)
        let folder = core.folder
        let conditions = WritePreconditions(request.headers)
        try await change([path], method: "DELETE", context: context, conditions: [path: conditions]) {
            try folder.remove(path)
        }
        return Response(status: .noContent)
    }

    struct PathBody: Decodable { var path: String }
    struct MoveBody: Decodable {
        var from: String
        var to: String
        var overwrite: Bool?
    }

    /// `POST /api/mkdir` with `{"path": P}`, under the request's conditions
    /// on `P` (`If-None-Match: *` turns the 409 for a folder already there into 412).
    func makeDirectory(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: PathBody.self, context: context)
        let path = try SharePath(plain: body.path)
        AuditNote.about(path: path.description)
        try core.authorize(.change, path)
        let folder = core.folder
        let conditions = WritePreconditions(request.headers)
        try await change([path], method: "POST", context: context, conditions: [path: conditions]) {
            try folder.makeDirectory(path)
        }
        return .json(status: .created, body: "{\"path\":\(JSONText.quoted(path.description))}")
    }

    /// `POST /api/move` with `{"from": A, "to": B, "overwrite": false}`.
    /// `If-Match` and `If-Unmodified-Since` are about `A` (the item the
    /// client saw), `If-None-Match` about `B` (`*`: never replace).
    func move(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: MoveBody.self, context: context)
        let from = try SharePath(plain: body.from)
        let to = try SharePath(plain: body.to)
        AuditNote.about(path: from.description, detail: "to " + to.description)
        try core.authorize(.change, from)
        try core.authorize(.change, to)
        let folder = core.folder
        let conditions = WritePreconditions(request.headers)
        var checked = [from: conditions.onExisting]
        // A move onto itself: both conditions are about the one item.
        checked[to, default: .none].ifNoneMatch = conditions.ifNoneMatch
        try await change([from, to], method: "POST", context: context, conditions: checked) {
            try folder.move(from: from, to: to, overwrite: body.overwrite ?? false)
        }
        return .json(
            status: .ok,
            body: "{\"from\":\(JSONText.quoted(from.description)),\"to\":\(JSONText.quoted(to.description))}")
    }
}

/// What the faces read from a request's URL.
enum APIRequest {
    /// The shared path after `/api/files/` (or another prefix) in the raw URL path.
    static func path(of request: Request, after prefix: String) throws(ShareError) -> SharePath {
        let raw = request.uri.path
        guard raw.hasPrefix(prefix) else { return .root }
        do {
            return try SharePath(percentEncoded: raw.dropFirst(prefix.count))
        } catch {
            throw ShareError(error)
        }
    }

    /// A query parameter, percent-decoded (`+` is kept as it is).
    static func query(_ request: Request, _ name: String) throws(ShareError) -> String? {
        guard let query = request.uri.query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first == Substring(name) else { continue }
            let value = parts.count > 1 ? parts[1] : ""
            let bytes: [UInt8]
            do {
                bytes = try SharePath.percentDecode(value)
            } catch {
                throw ShareError(.badRequest, "the \(name) parameter: \(error.message)")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ShareError(.badRequest, "the \(name) parameter is not valid UTF-8")
            }
            return text
        }
        return nil
    }
}
