import Hummingbird

/// Holds requests to the JSON API to the shape its OpenAPI document gives
/// them: a method a path does not take is 405 with `Allow` (RFC 9110
/// section 15.5.6; the router alone would say 404, as if the path did not
/// exist), and a query parameter the operation does not take is 400, so a
/// misspelt `?pth=` is not silently a listing of the root.
struct RouteShapeMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    /// How a path is matched.
    enum Pattern: Sendable {
        /// This path.
        case exact(String)
        /// Anything below this prefix (a shared path follows it).
        case below(String)
        /// One segment (not empty) after this prefix (a token).
        case segment(String)

        func matches(_ path: String) -> Bool {
            switch self {
            case .exact(let exact): path == exact
            case .below(let prefix): path.hasPrefix(prefix)
            case .segment(let prefix):
                path.hasPrefix(prefix) && path.count > prefix.count && !path.dropFirst(prefix.count).contains("/")
            }
        }
    }

    /// One operation: a path, a method, and the query parameters it takes.
    struct Operation: Sendable {
        var pattern: Pattern
        var method: HTTPRequest.Method
        var query: Set<String> = []
    }

    /// The operations of `APIFace.routes()`, `EventStreamFace.routes()`, `TusFace.routes()` and
    /// the OpenAPI document's own route, as `openapi.json` describes them.
    static let operations: [Operation] = [
        Operation(pattern: .exact("/api/info"), method: .get),
        // With a users file, answered before authentication (`SessionFace`); 404 without one.
        Operation(pattern: .exact("/api/session"), method: .get),
        Operation(pattern: .exact("/api/session"), method: .post),
        Operation(pattern: .exact("/api/session"), method: .delete),
        Operation(pattern: .exact("/api/list"), method: .get, query: ["path"]),
        Operation(pattern: .below("/api/files/"), method: .get, query: ["download"]),
        Operation(pattern: .below("/api/files/"), method: .head, query: ["download"]),
        Operation(pattern: .below("/api/files/"), method: .put),
        Operation(pattern: .below("/api/files/"), method: .delete),
        Operation(pattern: .exact("/api/mkdir"), method: .post),
        Operation(pattern: .exact("/api/move"), method: .post),
        // `v`: the page's cache key for a thumbnail.
        Operation(pattern: .below("/api/thumbnail/"), method: .get, query: ["v"]),
        Operation(pattern: .exact("/api/zip"), method: .get, query: ["path"]),
        Operation(pattern: .exact("/api/uploads"), method: .post, query: ["path"]),
        Operation(pattern: .segment("/api/uploads/"), method: .patch),
        Operation(pattern: .segment("/api/uploads/"), method: .head),
        Operation(pattern: .segment("/api/uploads/"), method: .delete),
        // tus 1.0 (`TusFace`): the creation URL (also taken without its slash), and each upload.
        Operation(pattern: .exact("/api/tus/"), method: .post),
        Operation(pattern: .exact("/api/tus/"), method: .options),
        Operation(pattern: .segment("/api/tus/"), method: .head),
        Operation(pattern: .segment("/api/tus/"), method: .patch),
        Operation(pattern: .segment("/api/tus/"), method: .delete),
        Operation(pattern: .segment("/api/tus/"), method: .options),
        Operation(pattern: .exact("/api/events"), method: .get, query: ["since"]),
        Operation(pattern: .exact("/api/changes"), method: .get, query: ["since", "limit"]),
        Operation(pattern: .exact("/api/openapi.json"), method: .get),
        // Versions and the trash (`HistoryFace`).
        Operation(pattern: .exact("/api/versions"), method: .get, query: ["path"]),
        Operation(pattern: .exact("/api/versions/content"), method: .get, query: ["path", "version", "download"]),
        Operation(pattern: .exact("/api/versions/content"), method: .head, query: ["path", "version", "download"]),
        Operation(pattern: .exact("/api/versions/restore"), method: .post),
        Operation(pattern: .exact("/api/versions/resolve"), method: .post),
        Operation(pattern: .exact("/api/trash"), method: .get),
        Operation(pattern: .exact("/api/trash/restore"), method: .post),
        Operation(pattern: .segment("/api/trash/"), method: .delete),
        // Share links (`SharesAPIFace`) and the audit (`AuditFace`).
        Operation(pattern: .exact("/api/shares"), method: .get),
        Operation(pattern: .exact("/api/shares"), method: .post),
        Operation(pattern: .segment("/api/shares/"), method: .delete),
        Operation(pattern: .exact("/api/audit"), method: .get, query: ["since", "user", "path", "limit"]),
    ]

    /// The operations on `path`. A path named exactly is a resource of its
    /// own: a token pattern beside it (`/api/trash/{token}` beside
    /// `/api/trash/restore`) does not lend it its methods.
    static func candidates(for path: String) -> [Operation] {
        let matching = operations.filter { $0.pattern.matches(path) }
        let exact = matching.filter { if case .exact = $0.pattern { true } else { false } }
        return exact.isEmpty ? matching : exact
    }

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        let path = request.uri.path
        let candidates = Self.candidates(for: path)
        guard !candidates.isEmpty else { return try await next(request, context) }
        guard let operation = candidates.first(where: { $0.method == request.method }) else {
            let allow = candidates.map(\.method.rawValue).joined(separator: ", ")
            var response = Response.json(
                status: .methodNotAllowed, error: "\(request.method.rawValue) is not taken here; these are: \(allow)")
            response.headers[.allow] = allow
            return response
        }
        for name in try Self.queryNames(request) where !operation.query.contains(name) {
            let taken = operation.query.isEmpty ? "none" : operation.query.sorted().joined(separator: ", ")
            throw ShareError(.badRequest, "the query parameter '\(name)' is not taken here (these are: \(taken))")
        }
        return try await next(request, context)
    }

    /// The names of the request's query parameters, percent-decoded (empty pairs left out).
    static func queryNames(_ request: Request) throws(ShareError) -> [String] {
        guard let query = request.uri.query else { return [] }
        var names: [String] = []
        for pair in query.split(separator: "&") {
            let raw = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let bytes: [UInt8]
            do {
                bytes = try SharePath.percentDecode(raw)
            } catch {
                throw ShareError(error)
            }
            guard let name = String(validating: bytes, as: UTF8.self) else {
                throw ShareError(.badRequest, "a query parameter's name is not valid UTF-8")
            }
            names.append(name)
        }
        return names
    }
}
