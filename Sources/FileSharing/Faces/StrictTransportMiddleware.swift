import HTTPTypes
import Hummingbird

/// Under HTTPS, tells browsers to come back by HTTPS only, for a year
/// (`Strict-Transport-Security`): a network that rewrites a later `http://`
/// visit can then neither read the session cookie nor change the page.
/// Mounted first, so errors carry it too.
struct StrictTransportMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        var response = try await next(request, context)
        response.headers[.strictTransportSecurity] = "max-age=31536000"
        return response
    }
}

extension HTTPField.Name {
    static let strictTransportSecurity = HTTPField.Name("Strict-Transport-Security")!
}
