import Hummingbird

/// What every request must pass before anything else looks at it, whatever
/// the credentials or their absence: a change sent by another site's page
/// is refused (``CrossSiteCheck``: a browser sends a cached Basic password
/// as readily as a cookie, and a share without credentials needs none), and
/// a share without credentials answers only to its loopback names
/// (``HostCheck``), so a page elsewhere cannot read it through DNS rebinding.
struct RequestGuardMiddleware: RouterMiddleware {
    typealias Context = ShareContext
    /// Whether only loopback names are answered (a share without credentials).
    let loopbackHostsOnly: Bool

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        if loopbackHostsOnly && !HostCheck.isLoopback(request.head.authority) {
            return .json(
                status: .forbidden,
                error:
                    "this share has no password, so it answers only on this computer; open it as localhost or 127.0.0.1"
            )
        }
        guard
            CrossSiteCheck.allows(
                method: request.method.rawValue, fetchSite: request.headers[.secFetchSite],
                origin: request.headers[.origin], host: request.head.authority)
        else {
            return .json(status: .forbidden, error: "a change sent by another site's page is refused")
        }
        return try await next(request, context)
    }
}
