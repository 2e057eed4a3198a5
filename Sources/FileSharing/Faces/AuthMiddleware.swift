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
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("basic "),
            let decoded = Base64Decoding.decode(header.dropFirst(6).trimmingCharacters()),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return AuthMiddleware.challenge() }
        let givenUser = Array(decoded[..<colon])
        let givenPassword = Array(decoded[(colon + 1)...])
        // Both compared in full, whatever matches, so timing tells nothing.
        let userMatches = constantTimeEqual(givenUser, Array(user.utf8))
        let passwordMatches = constantTimeEqual(givenPassword, Array(password.utf8))
        guard userMatches && passwordMatches else { return AuthMiddleware.challenge() }
        context.user = user
        return try await next(request, context)
    }

    static func challenge() -> Response {
        var response = Response.json(
            status: .unauthorized, error: "sign in with the user name and password of this share")
        response.headers[.wwwAuthenticate] = "Basic realm=\"fileshare\", charset=\"UTF-8\""
        return response
    }

    private func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}

/// Standard base64 decoding for Basic credentials.
enum Base64Decoding {
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - 71)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte + 4)
            case UInt8(ascii: "+"): values.append(62)
            case UInt8(ascii: "/"): values.append(63)
            case UInt8(ascii: "="): continue
            default: return nil
            }
        }
        var out: [UInt8] = []
        var index = 0
        while index + 1 < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            let a = UInt32(chunk[chunk.startIndex]), b = UInt32(chunk[chunk.startIndex + 1])
            let c = chunk.count > 2 ? UInt32(chunk[chunk.startIndex + 2]) : 0
            let d = chunk.count > 3 ? UInt32(chunk[chunk.startIndex + 3]) : 0
            let n = a << 18 | b << 12 | c << 6 | d
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            index += 4
        }
        return out
    }
}
