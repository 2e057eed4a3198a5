import Accounts
import FileWatching
import Foundation
import Hummingbird

/// `GET /api/audit?since=&user=&path=&limit=`: the audit, for admins (and
/// a share without a users file); 404 for everyone else, as if it did not exist.
struct AuditFace: Sendable {
    let audit: AuditLog

    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("audit") { request, _ in try await self.read(request) }
        return routes
    }

    func read(_ request: Request) async throws -> Response {
        guard Requester.current.policy.isAdmin, Requester.current.link == nil else {
            throw ShareError(.notFound, "no such resource")
        }
        AuditNote.skip()
        var filter = AuditReader.Filter(limit: 1000)
        if let since = try APIRequest.query(request, "since") {
            guard let time = AuditEvent.parseTime(since) else {
                throw ShareError(.badRequest, "since is an RFC 3339 time")
            }
            filter.since = time
        }
        filter.user = try APIRequest.query(request, "user")
        filter.path = try APIRequest.query(request, "path")
        if let limit = try APIRequest.query(request, "limit") {
            guard let value = Int(limit), (1...100_000).contains(value) else {
                throw ShareError(.badRequest, "limit is a number from 1 to 100000")
            }
            filter.limit = value
        }
        // What was answered before this request is in the answer.
        await audit.flush()
        let folder = audit.folder
        let chosen = filter
        let events = await runBlocking { AuditReader.read(folder: folder, filter: chosen) }
        return .json(status: .ok, body: "{\"events\":[" + events.map(\.jsonLine).joined(separator: ",") + "]}")
    }
}
