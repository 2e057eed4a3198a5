import Accounts
import FileWatching
import Foundation
import Hummingbird

/// `POST /api/shares`, `GET /api/shares`, `DELETE /api/shares/TOKEN`: the
/// share links (`http-api.md`). Only someone who may share the item may make
/// a link to it: a `read` link needs read on the item, an `upload` link
/// write on the folder. The token is in the answer to `POST` and nowhere
/// else afterwards: the store keeps its hash, listings show the link's id.
struct SharesAPIFace: Sendable {
    let core: ShareCore
    let links: LinkStore
    let audit: AuditLog?

    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.post("shares") { request, context in try await self.make(request, context: context) }
        routes.get("shares") { _, _ in try await self.list() }
        routes.delete("shares/:token") { _, context in try await self.revoke(context: context) }
        return routes
    }

    struct MakeBody: Decodable {
        var path: String
        var access: String?
        var expires: String?
        var password: String?
        var maxDownloads: Int?
    }

    /// `POST /api/shares`: makes a link; 201 with its token and address.
    func make(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: MakeBody.self, context: context)
        let path: SharePath
        do { path = try SharePath(plain: body.path) } catch { throw ShareError(error) }
        guard let access = ShareLink.Access(rawValue: body.access ?? "read") else {
            throw ShareError(.badRequest, "access is read or upload")
        }
        let now = LinkStore.now()
        var expires: Int64? = nil
        if let text = body.expires {
            guard let time = LinkExpiry.parse(text, now: now) else {
                throw ShareError(
                    .badRequest, "expires is an ISO 8601 duration (P7D, PT1H) or an RFC 3339 time in the future")
            }
            expires = time
        }
        if let max = body.maxDownloads, max < 1 { throw ShareError(.badRequest, "maxDownloads is at least 1") }
        if let password = body.password, password.isEmpty || password.utf8.count > 72 {
            throw ShareError(.badRequest, "a link's password has 1 to 72 bytes")
        }
        // The right to share: read on the item for a read link, write on the folder for an upload link.
        try core.authorize(access == .upload ? .change : .read, path)
        guard !path.isRoot, let item = core.observer.item(at: path.itemPath) else {
            throw ShareError(
                .notFound, path.isRoot ? "share a file or folder inside the share" : "'\(path)': no such file or folder"
            )
        }
        if access == .upload, item.kind != .directory {
            throw ShareError(.conflict, "an upload link is to a folder; '\(path)' is not one")
        }
        guard item.kind == .file || item.kind == .directory else {
            throw ShareError(.conflict, "'\(path)' is neither a file nor a folder")
        }
        let requester = Requester.current
        let (token, link) = try await links.make(
            item: item.id.description, path: path.description, access: access, creator: requester.user,
            expires: expires, password: body.password, maxDownloads: body.maxDownloads, now: now)
        audit?.record(
            AuditEvent(
                action: "link-create", who: context.user ?? requester.name, address: context.address,
                path: path.description,
                outcome: "ok", detail: "link \(link.id) \(access.rawValue)"))
        var json = SharesAPIFace.json(link, path: path.description)
        json.removeLast()
        json += ",\"token\":\(JSONText.quoted(token)),\"url\":\(JSONText.quoted("/s/" + token))}"
        var response = Response.json(status: .created, body: json)
        response.headers[.location] = "/s/" + token
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// `GET /api/shares`: the links the requester made (an admin: all), each where its item is now.
    func list() async throws -> Response {
        let requester = Requester.current
        let now = LinkStore.now()
        let visible = try await links.records.links(visibleTo: requester.user, isAdmin: requester.policy.isAdmin)
        let items = visible.map { link in
            let path =
                ItemID(link.item).flatMap { core.observer.item(id: $0) }?.path.description ?? link.path
            return SharesAPIFace.json(link, path: path, now: now)
        }
        return .json(status: .ok, body: "{\"links\":[" + items.joined(separator: ",") + "]}")
    }

    /// `DELETE /api/shares/TOKEN` (the token, or the link's id as listed): ends the link at once.
    func revoke(context: ShareContext) async throws -> Response {
        let key = context.parameters.get("token") ?? ""
        let id = LinkToken.isWellFormed(key) ? LinkToken.id(ofHash: LinkToken.hash(key)) : key
        let requester = Requester.current
        // Its maker never changes: checked, then ended, with nothing between that matters.
        // (Each `try await` stands alone, not in the guard's conditions: there, the
        // release build's compiler crashed splitting this function, Swift 6.3.)
        let found = try await links.records.link(id: id)
        guard let link = found, ShareLinks.mayManage(link, user: requester.user, isAdmin: requester.policy.isAdmin)
        else { throw ShareError(.notFound, "no such link") }
        let revoked = try await links.records.revoke(id: id)
        guard revoked else { throw ShareError(.notFound, "no such link") }
        audit?.record(
            AuditEvent(
                action: "link-revoke", who: context.user ?? requester.name, address: context.address, path: nil,
                outcome: "ok",
                detail: "link \(id)"))
        return Response(status: .noContent)
    }

    /// A link as listings show it (never its token or password hash).
    static func json(_ link: ShareLink, path: String, now: Int64 = LinkStore.now()) -> String {
        var json = "{\"id\":\(JSONText.quoted(link.id)),\"path\":\(JSONText.quoted(path)),"
        json += "\"access\":\"\(link.access.rawValue)\",\"created\":\(JSONText.quoted(time(link.created)))"
        if let creator = link.creator { json += ",\"creator\":\(JSONText.quoted(creator))" }
        if let expires = link.expires { json += ",\"expires\":\(JSONText.quoted(time(expires)))" }
        if let max = link.maxDownloads { json += ",\"maxDownloads\":\(max)" }
        json += ",\"downloads\":\(link.downloads),\"password\":\(link.passwordHash != nil)"
        json += ",\"state\":\"\(link.ending(at: now)?.rawValue ?? "open")\"}"
        return json
    }

    /// RFC 3339, in UTC.
    static func time(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(.iso8601)
    }
}
