import Hummingbird

/// 403 for every request that would change something, when shared read-only.
struct ReadOnlyMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws
        -> Response
    {
        switch request.method {
        case .get, .head, .options: return try await next(request, context)
        default:
            if request.method.rawValue == "PROPFIND" { return try await next(request, context) }
            return .json(status: .forbidden, error: "this folder is shared read-only")
        }
    }
}
