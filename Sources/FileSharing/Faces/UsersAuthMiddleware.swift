import Accounts
import FileWatching
import HTTPTypes
import Hummingbird
import NIOCore

/// Authentication against the users file (`--users`), for every request:
/// the page's session cookie, or HTTP Basic (scripts, WebDAV), checked by
/// ``SignIn``, whose answer — who it is and what they may do — is the
/// ``Requester`` the core decides by for the rest of the request.
///
/// It also answers the sign-in itself (``SessionFace``); a change that
/// another site's page sends was refused before (``RequestGuardMiddleware``).
struct UsersAuthMiddleware: RouterMiddleware {
    typealias Context = ShareContext
    let signIn: SignIn
    /// Whether the server speaks HTTPS (the cookie is then `Secure`).
    let secure: Bool
    /// The shared folder's name, told on the sign-in form.
    let share: String

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws
        -> Response
    {
        let method = request.method.rawValue
        let face = SessionFace(signIn: signIn, secure: secure, share: share)
        if let response = try await face.answer(request, context: context) { return response }

        var requester: Requester? = nil
        if let id = SessionFace.sessionID(request) { requester = try await signIn.session(id) }
        if requester == nil, let basic = BasicCredentials.parse(request.headers[.authorization]) {
            switch await signIn.signIn(name: basic.name, password: basic.password, address: context.address) {
            case .signedIn(let signedIn): requester = signedIn
            case .failed:
                UsersAuthMiddleware.noteSignIn(basic.name)
                return UsersAuthMiddleware.challenge(request)
            case .throttled(let wait):
                UsersAuthMiddleware.noteSignIn(basic.name)
                return UsersAuthMiddleware.tooManyAttempts(wait)
            }
        }
        guard let requester else {
            // A browser opening the page without a session goes to the sign-in form.
            if method == "GET", request.uri.path == "/", request.headers[.accept]?.contains("text/html") == true {
                return Response(status: .seeOther, headers: [.location: "/signin"])
            }
            return UsersAuthMiddleware.challenge(request)
        }
        var context = context
        context.user = requester.user
        AuditNote.who(requester.name)
        return try await Requester.$current.withValue(requester) { try await next(request, context) }
    }

    /// 401. The Basic challenge only for what is not the page's own script
    /// (which sends `Sec-Fetch-Mode: cors` or `same-origin`): the page goes
    /// to its sign-in form instead of the browser's password dialog.
    static func challenge(_ request: Request) -> Response {
        var response = Response.json(
            status: .unauthorized,
            body: "{\"error\":\"sign in with your user name and password\",\"signIn\":\"/signin\"}")
        let mode = request.headers[.secFetchMode]
        if mode == nil || mode == "navigate" {
            response.headers[.wwwAuthenticate] = "Basic realm=\"fileshare\", charset=\"UTF-8\""
        }
        return response
    }

    /// A failed sign-in, for the audit: the name tried (never the password).
    static func noteSignIn(_ name: String) {
        AuditNote.who(AccountName.isValid(name) ? name : "-")
        AuditNote.about(path: nil, action: "signin")
    }

    /// 429 with `Retry-After`, for a sign-in refused by the throttle.
    static func tooManyAttempts(_ wait: Duration) -> Response {
        var response = Response.json(
            status: .tooManyRequests,
            error: "too many failed sign-ins from this address or for this name; try again in \(seconds(wait)) s")
        response.headers[.retryAfter] = String(seconds(wait))
        return response
    }

    static func seconds(_ wait: Duration) -> Int {
        max(1, Int((wait + .milliseconds(999)).components.seconds))
    }
}

/// The name and password of an `Authorization: Basic` header.
enum BasicCredentials {
    static func parse(_ header: String?) -> (name: String, password: String)? {
        guard let decoded = decoded(header), let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
            let name = String(validating: decoded[..<colon], as: UTF8.self),
            let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else { return nil }
        return (name, password)
    }

    /// The credentials of an `Authorization` field of the `Basic` scheme
    /// (its name in any case), decoded; `nil` for another scheme or bad
    /// Base64. Checked on every request: the scheme is compared byte by byte
    /// rather than lowercasing the whole field.
    static func decoded(_ header: String?) -> [UInt8]? {
        let scheme = "basic ".utf8
        guard let header, header.utf8.count > scheme.count,
            zip(header.utf8, scheme).allSatisfy({ $0.lowercasedASCII == $1 })
        else { return nil }
        return Base64.decode(Substring(header.utf8.dropFirst(scheme.count)).trimmingCharacters())
    }
}

extension HTTPField.Name {
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    static let secFetchMode = HTTPField.Name("Sec-Fetch-Mode")!
}
