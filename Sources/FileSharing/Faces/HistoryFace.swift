import Accounts
import ChangeLog
import FileWatching
import Hummingbird
import NIOCore
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// Versions and the trash in the JSON API (`http-api.md`): a file's kept
/// versions (listed, downloaded, restored, conflicts resolved) and the
/// deleted items (listed, restored, purged). It parses and answers HTTP;
/// the core performs. Names a client sends are checked for the store's
/// form before anything is asked of the disk.
struct HistoryFace: Sendable {
    let api: APIFace
    var core: ShareCore { api.core }

    /// The routes, to mount at `/api`.
    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("versions") { request, _ in try await self.versions(request) }
        routes.get("versions/content") { request, _ in try await self.content(request, head: false) }
        routes.head("versions/content") { request, _ in try await self.content(request, head: true) }
        routes.post("versions/restore") { request, context in try await self.restoreVersion(request, context: context) }
        routes.post("versions/resolve") { request, context in try await self.resolve(request, context: context) }
        routes.get("trash") { _, _ in self.trash() }
        routes.post("trash/restore") { request, context in try await self.restoreItem(request, context: context) }
        routes.delete("trash/:trashId") { _, context in try await self.purge(context: context) }
        return routes
    }

    // MARK: Versions

    /// `GET /api/versions?path=P`: the file's versions, newest first.
    func versions(_ request: Request) async throws -> Response {
        let path = try HistoryFace.path(request)
        try core.authorize(.read, path)
        let id = try await core.itemID(at: path)
        var json = JSONBytes(capacity: 256)
        json.raw("{\"path\":")
        json.string(path.description)
        json.raw(",\"id\":")
        json.string(id.description)
        json.raw(",\"versions\":[")
        let policy = Requester.current.policy
        for (index, record) in core.folder.history.versions.versions(of: id).enumerated() {
            if index > 0 { json.raw(",") }
            HistoryFace.write(record, shownTo: policy, into: &json)
        }
        json.raw("]}")
        return HistoryFace.json(json)
    }

    /// `GET /api/versions/content?path=P&version=V`: the bytes of a version,
    /// as a download of the file is sent (ranges, validators); a folder
    /// version (a package document's tree) as a ZIP named after the folder.
    func content(_ request: Request, head: Bool) async throws -> Response {
        let path = try HistoryFace.path(request)
        try core.authorize(.read, path)
        let version = try HistoryFace.versionName(try APIRequest.query(request, "version"))
        let id = try await core.itemID(at: path)
        let store = core.folder.history.versions
        let record: VersionRecord
        do {
            record = try store.version(version, of: id)
        } catch {
            throw ShareError(error)
        }
        if record.kind == .directory {
            let fd = try await core.blocking { () throws -> Int32 in
                do throws(VersionError) { return try store.openContent(version, of: id) } catch {
                    throw ShareError(error)
                }
            }
            let headers: HTTPFields = [
                .contentType: "application/zip", .contentDisposition: FileResponses.attachment(path.name + ".zip"),
                .cacheControl: "no-store",
            ]
            if head {
                close(fd)
                return Response(status: .ok, headers: headers)
            }
            // What the requester may see of the folder now: a rule below it holds for its versions too.
            let policy = Requester.current.policy
            let body = ZipTree.body(folder: fd, prefix: path.name + "/", core: core) { relative, _ in
                policy.isAdmin || policy.isListed(path.components + relative)
            }
            return Response(status: .ok, headers: headers, body: body)
        }
        return try await FileResponses.send(
            named: path.name, path: path, request: request, head: head, core: core,
            notFile: "version \(version) of '\(path)' is not a file"
        ) {
            do throws(VersionError) { return try store.openContent(version, of: id) } catch { throw ShareError(error) }
        }
    }

    struct RestoreVersionBody: Decodable {
        var path: String
        var version: String
    }

    /// `POST /api/versions/restore` with `{"path": P, "version": V}`, under
    /// the request's conditions on `P`: the content it replaces becomes a version.
    func restoreVersion(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: RestoreVersionBody.self, context: context)
        let path = try SharePath(plain: body.path)
        let version = try HistoryFace.versionName(body.version)
        // Before anything is asked of the disk: a path the requester may not
        // see answers as a missing one, without its item's id.
        AuditNote.about(path: path.description, detail: "version \(version)", action: "restore")
        try core.authorize(.change, path)
        let id = try await core.itemID(at: path)
        do {
            _ = try core.folder.history.versions.version(version, of: id)
        } catch {
            throw ShareError(error)
        }
        try await core.refuseIfLocked([path])
        let after = try await core.restore(
            version: version, of: id, at: path, origin: APIFace.origin(context, method: "POST"),
            conditions: WritePreconditions(request.headers))
        return .json(
            status: .ok,
            body: "{\"path\":\(JSONText.quoted(path.description)),\"id\":\(JSONText.quoted(after.description))}")
    }

    struct ResolveBody: Decodable {
        var path: String
        var keep: [String]
    }

    /// `POST /api/versions/resolve` with `{"path": P, "keep": [V…]}`: the
    /// conflict versions kept become ordinary versions, the others are discarded.
    func resolve(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: ResolveBody.self, context: context)
        let path = try SharePath(plain: body.path)
        AuditNote.about(path: path.description, action: "resolve")
        try core.authorize(.change, path)
        let keep = try body.keep.map { try HistoryFace.versionName($0) }
        let id = try await core.itemID(at: path)
        let store = core.folder.history.versions
        let versions = try await core.blocking { () throws -> [VersionRecord] in
            do throws(VersionError) { return try store.resolve(id, keep: keep) } catch { throw ShareError(error) }
        }
        var json = JSONBytes(capacity: 256)
        json.raw("{\"path\":")
        json.string(path.description)
        json.raw(",\"id\":")
        json.string(id.description)
        json.raw(",\"versions\":[")
        let policy = Requester.current.policy
        for (index, record) in versions.enumerated() {
            if index > 0 { json.raw(",") }
            HistoryFace.write(record, shownTo: policy, into: &json)
        }
        json.raw("]}")
        return HistoryFace.json(json)
    }

    // MARK: Trash

    /// `GET /api/trash`: the deleted items, the most recent first.
    func trash() -> Response {
        var json = JSONBytes(capacity: 256)
        json.raw("{\"items\":[")
        // A user sees what was deleted where they may read (admins: all).
        let requester = Requester.current
        let items = core.folder.history.trash.items.filter { item in
            requester.seesEverything
                || (try? SharePath(plain: item.path)).map { path in
                    (try? ShareCore.authorize(.read, path, for: requester)) != nil
                } ?? false
        }
        for (index, item) in items.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"trashId\":")
            json.string(item.trashId)
            json.raw(",\"path\":")
            json.string(item.path)
            if let id = item.id {
                json.raw(",\"id\":")
                json.string(id.description)
            }
            json.raw(",\"kind\":")
            json.string(item.kind.description)
            json.raw(",\"size\":")
            json.integer(item.size)
            json.raw(",\"deleted\":")
            json.time(nanoseconds: item.deleted)
            if let by = item.by {
                json.raw(",\"by\":")
                json.rawText(by.json)
            }
            json.raw("}")
        }
        json.raw("]}")
        return HistoryFace.json(json)
    }

    struct RestoreItemBody: Decodable { var trashId: String }

    /// `POST /api/trash/restore` with `{"trashId": T}`: `{"path": P}`, where it went.
    func restoreItem(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: RestoreItemBody.self, context: context)
        let trashId = try HistoryFace.trashID(body.trashId)
        do {
            let record = try core.folder.history.trash.item(trashId)
            AuditNote.about(path: record.path, detail: "from the trash", action: "restore")
            try HistoryFace.authorize(changing: record)
            if let path = try? SharePath(plain: record.path) { try await core.refuseIfLocked([path]) }
        } catch let error as VersionError {
            throw ShareError(error)
        }
        let path = try await core.restore(trashId: trashId, origin: APIFace.origin(context, method: "POST"))
        AuditNote.about(path: path.description, detail: "from the trash", action: "restore")
        return .json(status: .ok, body: "{\"path\":\(JSONText.quoted(path.description))}")
    }

    /// `DELETE /api/trash/T`: removes the item for good.
    func purge(context: ShareContext) async throws -> Response {
        let trashId = try HistoryFace.trashID(context.parameters.get("trashId"))
        let trash = core.folder.history.trash
        let record: TrashRecord
        do { record = try trash.item(trashId) } catch { throw ShareError(error) }
        AuditNote.about(path: record.path, detail: "from the trash, for good", action: "purge")
        try HistoryFace.authorize(changing: record)
        try await core.blocking {
            do throws(VersionError) { try trash.purge(trashId) } catch { throw ShareError(error) }
        }
        return Response(status: .noContent)
    }

    /// Throws unless the current requester may restore or purge `record`:
    /// change its path and everything that was under it, as deleting it
    /// needed (a folder deleted by an admin with a subfolder closed to the
    /// requester stays the admin's to restore or purge). A record whose
    /// path cannot be read is an admin's alone. One the requester may not
    /// see answers as an id the trash does not hold.
    static func authorize(changing record: TrashRecord) throws {
        let requester = Requester.current
        if requester.seesEverything { return }
        let missing = ShareError(.notFound, "nothing in the trash is \(record.trashId)")
        guard let path = try? SharePath(plain: record.path) else { throw missing }
        if let denied = AccessRules.checkTree(.change, at: path.components, policy: requester.policy) {
            throw denied.code == .hidden ? missing : ShareError(denied)
        }
    }

    // MARK: Answers

    /// The `path` parameter: 400 when it is missing.
    static func path(_ request: Request) throws -> SharePath {
        guard let text = try APIRequest.query(request, "path") else {
            throw ShareError(.badRequest, "the path parameter is missing")
        }
        return try SharePath(plain: text)
    }

    /// A version name a client sent: 400 unless it has the store's form.
    static func versionName(_ text: String?) throws(ShareError) -> String {
        guard let text else { throw ShareError(.badRequest, "the version parameter is missing") }
        guard StoreName.isValid(text) else { throw ShareError(.badRequest, "'\(text)' is not a version name") }
        return text
    }

    /// A trash id a client sent: 400 unless it has the store's form.
    static func trashID(_ text: String?) throws(ShareError) -> String {
        guard let text, StoreName.isValid(text) else {
            throw ShareError(.badRequest, "'\(text ?? "")' is not a trash id")
        }
        return text
    }

    /// One version as the listing shows it to one with `policy`: where the
    /// file was then only when they may see that path (a file moved out of
    /// a folder closed to them keeps its versions, not the folder's names).
    static func write(_ record: VersionRecord, shownTo policy: AccessPolicy, into json: inout JSONBytes) {
        json.raw("{\"version\":")
        json.string(record.version)
        json.raw(",\"size\":")
        json.integer(record.size)
        json.raw(",\"modified\":")
        json.time(nanoseconds: record.modified)
        json.raw(",\"saved\":")
        json.time(nanoseconds: record.saved)
        if let path = try? SharePath(plain: record.path), policy.shows(path) {
            json.raw(",\"path\":")
            json.string(record.path)
        }
        if let origin = record.origin {
            json.raw(",\"origin\":")
            json.rawText(origin.json)
        }
        json.raw(",\"conflict\":")
        json.bool(record.conflict)
        json.raw(",\"kind\":")
        json.string(record.kind == .directory ? "directory" : "file")
        json.raw("}")
    }

    static func json(_ json: JSONBytes) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(json.bytes.count),
                .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.bytes)))
    }
}

extension ShareError {
    /// The `/api` face's answer to a failure of the version store or the trash.
    init(_ error: VersionError) {
        let kind: Kind =
            switch error.code {
            case .notFound: .notFound
            case .invalidName: .badRequest
            case .noSpace: .insufficientStorage
            default: .internalError
            }
        self.init(kind, error.message)
    }
}
