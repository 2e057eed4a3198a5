import Accounts
import FileWatching
import Hummingbird
import NIOCore

/// The page's sign-in, with a users file: answered before authentication,
/// since it is how one signs in.
///
/// - `GET /signin` (`?next=/PATH`): the form, naming the share;
///   `POST /signin` (form fields `name`, `password`, `next`): signs in and
///   goes to `next` (a path on this server, else `/`) with a session
///   cookie, or shows the form again with the reason and the name typed
///   (401, or 429 while slowed down);
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
    /// The shared folder's name, told on the form.
    let share: String

    static let cookieName = "fileshare-session"

    /// The answer to a sign-in request, or `nil` for any other request.
    func answer(_ request: Request, context: ShareContext) async throws -> Response? {
        switch (request.method, request.uri.path) {
        case (.get, "/signin"):
            let next = (try? APIRequest.query(request, "next"))?.flatMap(SessionFace.returnPath)
            return SessionFace.page(status: .ok, message: nil, form: SignInForm(share: share, next: next))
        case (.get, "/app.css"): return PageFace.asset(WebAssets.css, type: "text/css; charset=utf-8")
        case (.post, "/signin"):
            let body = try await request.body.collect(upTo: 16 * 1024)
            let fields = SessionFace.formFields(String(buffer: body))
            UsersAuthMiddleware.noteSignIn(fields["name"] ?? "")
            let outcome = await signIn.signIn(
                name: fields["name"] ?? "", password: fields["password"] ?? "", address: context.address)
            let next = fields["next"].flatMap(SessionFace.returnPath)
            // The name typed stays in the form (never the password): a typo in the password is retyped alone.
            let form = SignInForm(share: share, name: fields["name"], next: next)
            switch outcome {
            case .signedIn(let requester):
                return try await signedIn(
                    requester, response: Response(status: .seeOther, headers: [.location: next ?? "/"]))
            case .failed:
                return SessionFace.page(
                    status: .unauthorized, message: "The user name or password is wrong.", form: form)
            case .throttled(let wait):
                var response = SessionFace.page(
                    status: .tooManyRequests,
                    message: "Too many failed sign-ins: try again in \(UsersAuthMiddleware.seconds(wait)) seconds.",
                    form: form)
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

    /// What the sign-in form shows besides the fields: the share, the name
    /// typed before, and where to go once signed in.
    struct SignInForm {
        var share: String
        var name: String? = nil
        var next: String? = nil
    }

    /// `path` when it is a path on this server to come back to after signing
    /// in (`/`, `/#/Photos`); `nil` for anything that could lead elsewhere
    /// (`//host`, `/\\host`, a scheme, control characters) or is too long.
    static func returnPath(_ path: String) -> String? {
        guard path.utf8.count <= 2048, path.hasPrefix("/"), !path.hasPrefix("//"), !path.hasPrefix("/\\"),
            path.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F && $0 != "\\" })
        else { return nil }
        return path
    }

    /// The sign-in form, with `message` told above it.
    static func page(status: HTTPResponse.Status, message: String?, form: SignInForm) -> Response {
        var html = WebAssets.signIn
        if let message {
            html = html.replacing(
                "<!--message-->", with: "<p class=\"field-error\" role=\"alert\">\(HTMLText.escaped(message))</p>")
        }
        html = html.replacing("<!--share-->", with: HTMLText.escaped(form.share))
        html = html.replacing("value=\"\" data-name", with: "value=\"\(HTMLText.escaped(form.name ?? ""))\" data-name")
        if form.name?.isEmpty == false {
            // The name is there: the cursor goes to the password.
            html = html.replacing(" required autofocus>", with: " required>")
            html = html.replacing(
                "autocomplete=\"current-password\" required>",
                with: "autocomplete=\"current-password\" required autofocus>")
        }
        if let next = form.next {
            html = html.replacing(
                "<!--next-->", with: "<input type=\"hidden\" name=\"next\" value=\"\(HTMLText.escaped(next))\">")
        }
        var response = PageFace.page(
            html, policy: "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'")
        response.status = status
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
