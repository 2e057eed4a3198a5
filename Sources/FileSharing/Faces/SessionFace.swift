import Accounts
import FileWatching
import Hummingbird
import NIOCore

/// The page's sign-in, with a users file: answered before authentication,
/// since it is how one signs in.
///
/// - `GET /signin`: the form; `POST /signin` (form fields `name`,
///   `password`): signs in and goes to `/` with a session cookie, or shows
///   the form again with the reason (401, or 429 while slowed down);
///   `POST /signout`: ends the session and goes back to the form.
/// - `POST /api/session` (`{"name","password"}`): the same for scripts,
///   answering `{"user"}` and the cookie; `DELETE /api/session` signs out;
///   `GET /api/session` (signed in) says who.
///
/// The cookie `fileshare-session` is `HttpOnly`, `SameSite=Strict`, `Path=/`,
/// `Secure` under TLS; its id is new at every sign-in.
struct SessionFace {
    let signIn: SignIn
    let secure: Bool

    static let cookieName = "fileshare-session"

    /// The answer to a sign-in request, or `nil` for any other request.
    func answer(_ request: Request, context: ShareContext) async throws -> Response? {
        switch (request.method, request.uri.path) {
        case (.get, "/signin"): return SessionFace.page(status: .ok, message: nil)
        case (.get, "/app.css"): return PageFace.asset(WebAssets.css, type: "text/css; charset=utf-8")
        case (.post, "/signin"):
            let body = try await request.body.collect(upTo: 16 * 1024)
            let fields = SessionFace.formFields(String(buffer: body))
            UsersAuthMiddleware.noteSignIn(fields["name"] ?? "")
            let outcome = await signIn.signIn(
                name: fields["name"] ?? "", password: fields["password"] ?? "", address: context.address)
            switch outcome {
            case .signedIn(let requester):
                return try await signedIn(requester, response: Response(status: .seeOther, headers: [.location: "/"]))
            case .failed:
                return SessionFace.page(status: .unauthorized, message: "The user name or password is wrong.")
            case .throttled(let wait):
                var response = SessionFace.page(
                    status: .tooManyRequests,
                    message: "Too many failed sign-ins: try again in \(UsersAuthMiddleware.seconds(wait)) seconds.")
                response.headers[.retryAfter] = String(UsersAuthMiddleware.seconds(wait))
                return response
            }
        case (.post, "/signout"):
            return try await signedOut(request, Response(status: .seeOther, headers: [.location: "/signin"]))
        case (.post, "/api/session"):
            struct Body: Decodable {
                var name: String
                var password: String
            }
            let body = try await request.decode(as: Body.self, context: context)
            UsersAuthMiddleware.noteSignIn(body.name)
            switch await signIn.signIn(name: body.name, password: body.password, address: context.address) {
            case .signedIn(let requester):
                return try await signedIn(
                    requester,
                    response: .json(status: .ok, body: "{\"user\":\(JSONText.quoted(requester.user ?? ""))}"))
            case .failed:
                return .json(status: .unauthorized, error: "the user name or password is wrong")
            case .throttled(let wait):
                return UsersAuthMiddleware.tooManyAttempts(wait)
            }
        case (.delete, "/api/session"):
            return try await signedOut(request, Response(status: .noContent))
        case (.get, "/api/session"):
            guard let id = SessionFace.sessionID(request), let requester = try await signIn.session(id) else {
                return UsersAuthMiddleware.challenge(request)
            }
            return .json(
                status: .ok,
                body: "{\"user\":\(JSONText.quoted(requester.user ?? "")),\"admin\":\(requester.policy.isAdmin)}")
        default:
            return nil
        }
    }

    private func signedIn(_ requester: Requester, response: Response) async throws -> Response {
        var response = response
        // A new id, whatever cookie the browser brought.
        let id = try await signIn.startSession(for: requester.user ?? "")
        let maxAge = signIn.sessionLimits.absolute.components.seconds
        response.headers[.setCookie] =
            "\(SessionFace.cookieName)=\(id); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func signedOut(_ request: Request, _ response: Response) async throws -> Response {
        // Ended in the store before the answer: a sign-out that did not happen is not told as done.
        if let id = SessionFace.sessionID(request) { try await signIn.endSession(id) }
        var response = response
        response.headers[.setCookie] =
            "\(SessionFace.cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
        return response
    }

    /// The session id the request's `Cookie` header carries.
    static func sessionID(_ request: Request) -> String? {
        sessionID(request.headers)
    }

    /// The session id in a request's `Cookie` fields, if one is well formed.
    static func sessionID(_ fields: HTTPFields) -> String? {
        for header in fields[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters() == cookieName {
                    let value = parts[1].trimmingCharacters()
                    if value.count == 64, value.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) {
                        return String(value)
                    }
                }
            }
        }
        return nil
    }

    /// The fields of an `application/x-www-form-urlencoded` body.
    static func formFields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? {
                let plus = String(text.map { $0 == "+" ? " " : $0 })
                guard let bytes = try? SharePath.percentDecode(Substring(plus)) else { return nil }
                return String(validating: bytes, as: UTF8.self)
            }
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { continue }
            fields[name] = value
        }
        return fields
    }

    /// The sign-in form, with `message` told above it.
    static func page(status: HTTPResponse.Status, message: String?) -> Response {
        var html = WebAssets.signIn
        if let message {
            let escaped = message.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            html = html.replacing("<!--message-->", with: "<p class=\"field-error\" role=\"alert\">\(escaped)</p>")
        }
        var response = PageFace.page(
            html, policy: "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'")
        response.status = status
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
