import HTTPTypes
import Hummingbird

/// `GET /api/events` and `GET /api/changes`: the change log over HTTP, as
/// server-sent events (`id: SEQ`, `data: RECORD`) from `Last-Event-ID` (or
/// `?since=`), and as pages of records after a cursor. ``ChangeStream``
/// reads the log and writes the answers; this face parses the requests, and
/// the core says what the requester may see.
struct EventStreamFace: Sendable {
    let core: ShareCore
    let stream: ChangeStream

    /// The routes, to mount at `/api`.
    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("events") { request, _ in
            let cursor = try stream.startCursor(
                lastEventID: request.headers[.lastEventID], since: try APIRequest.query(request, "since"))
            return stream.events(after: cursor, visibility: core.visibility())
        }
        routes.get("changes") { request, _ in
            try await stream.changes(
                since: try APIRequest.query(request, "since"), limit: try APIRequest.query(request, "limit"),
                visibility: core.visibility())
        }
        return routes
    }
}

extension HTTPField.Name {
    /// The last event a reconnecting `EventSource` received.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
