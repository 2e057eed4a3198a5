import FileWatching
import Hummingbird
import NIOCore

/// HTTP Basic authentication for every request, against the one user of
/// `--user` on a share without a users file: who passes may do everything
/// (``Requester/everyone``).
struct AuthMiddleware: RouterMiddleware {
    typealias Context = ShareContext
    let user: String
    let password: String
    /// The user and password as bytes, made once: each check compared them
    /// to arrays made anew, five allocations a request.
    private let userBytes: [UInt8]
    private let passwordBytes: [UInt8]
    /// `Basic ` and the Base64 of `user:password`: the field as clients send it.
    private let canonicalField: [UInt8]

    init(user: String, password: String) {
        self.user = user
        self.password = password
        userBytes = Array(user.utf8)
        passwordBytes = Array(password.utf8)
        canonicalField = Array(("Basic " + Base64.encode(userBytes + [UInt8(ascii: ":")] + passwordBytes)).utf8)
    }

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
        return try await Requester.$current.withValue(.everyone) { try await next(request, context) }
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
        guard var header else { return .missing }
        // The field exactly as clients write it is these credentials without
        // decoding anything (Base64 has one padded spelling of given bytes).
        // Compared in full like the rest: a wrong field takes the decoding
        // path below, whose timing tells nothing either.
        if header.withUTF8({ Self.constantTimeEqual($0, canonicalField) }) { return .accepted }
        guard let decoded = BasicCredentials.decoded(header), let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return .missing }
        // Both compared in full, whatever matches, so timing tells nothing.
        let userMatches = decoded.withUnsafeBytes {
            Self.constantTimeEqual(UnsafeRawBufferPointer(rebasing: $0[..<colon]), userBytes)
        }
        let passwordMatches = decoded.withUnsafeBytes {
            Self.constantTimeEqual(UnsafeRawBufferPointer(rebasing: $0[(colon + 1)...]), passwordBytes)
        }
        return userMatches && passwordMatches ? .accepted : .wrong
    }

    /// Whether `a` and `b` are the same bytes, in a time that depends only on their lengths.
    private static func constantTimeEqual(_ a: some Collection<UInt8>, _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        var index = a.startIndex
        for position in 0..<max(a.count, b.count) {
            var byte: UInt8 = 0
            if index != a.endIndex {
                byte = a[index]
                a.formIndex(after: &index)
            }
            difference |= byte ^ (position < b.count ? b[position] : 0)
        }
        return difference == 0
    }
}
