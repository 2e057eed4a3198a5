import FileWatching
import Hummingbird
import NIOCore

/// HTTP Basic authentication for every request.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = ShareContext
    let user: String
    let password: String

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        switch check(request.headers[.authorization]) {
        case .missing: return AuthMiddleware.challenge()
        case .wrong:
            AuditNote.about(path: nil, action: "signin")
            return AuthMiddleware.challenge()
        case .accepted: break
        }
        context.user = user
        AuditNote.who(user)
        return try await next(request, context)
    }

    static func challenge() -> Response {
        var response = Response.json(
            status: .unauthorized, error: "sign in with the user name and password of this share")
        response.headers[.wwwAuthenticate] = "Basic realm=\"fileshare\", charset=\"UTF-8\""
        return response
    }

    /// What an `Authorization` field says.
    enum Check { case missing, wrong, accepted }

    /// Checks an `Authorization` field against the share's user and password.
    func check(_ header: String?) -> Check {
        guard let decoded = BasicCredentials.decoded(header), let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return .missing }
        let givenUser = Array(decoded[..<colon])
        let givenPassword = Array(decoded[(colon + 1)...])
        // Both compared in full, whatever matches, so timing tells nothing.
        let userMatches = constantTimeEqual(givenUser, Array(user.utf8))
        let passwordMatches = constantTimeEqual(givenPassword, Array(password.utf8))
        return userMatches && passwordMatches ? .accepted : .wrong
    }

    private func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
