import Hummingbird

/// A share without credentials (`--no-auth`, answered on loopback names
/// only: ``RequestGuardMiddleware``): every request may do everything.
///
/// Said here, where such a share's requests enter, rather than by the
/// requester's default, which is nobody (``Requester/current``).
struct OpenShareMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        try await Requester.$current.withValue(.everyone) { try await next(request, context) }
    }
}
