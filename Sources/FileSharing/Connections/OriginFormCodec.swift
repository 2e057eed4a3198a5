import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Converts between NIO's HTTP/1 parts and `HTTPTypes`, as
/// `HTTP1ToHTTPServerCodec` does, with two differences.
///
/// It takes an origin-form target (`/path?query`, what every client sends a
/// server that is no proxy) as the request's path without parsing it.
/// `HTTP1ToHTTPServerCodec` runs every target through Foundation's
/// `URLComponents` to find an absolute form's path; the profile of a small
/// GET put 2–3 % of the server's time there. A target that begins with `/`
/// has no scheme, and for such a target that conversion returns it
/// unchanged, so taking it as it is gives the same path. Any other target
/// (absolute form, `*`) still goes through the same conversion.
///
/// And it says plainly when a request ends its connection (RFC 9112
/// section 9.3): one with a `close` option in any case, or an HTTP/1.0 one
/// without `keep-alive`. Such a request reaches the router with exactly
/// `Connection: close`, the one form Hummingbird closes on (it missed
/// `Close` and HTTP/1.0 entirely: such a client waited for an end that never
/// came), and the answer to it says `Connection: close` too (section 9.6).
/// An HTTP/1.0 client that asks to keep the connection is told
/// `Connection: keep-alive`, which it needs to send its next request.
/// The version is gone once a request is in `HTTPTypes`, so this is the
/// last place that can tell.
final class OriginFormCodec: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let secure: Bool
    /// Request heads read, and final answers written (an interim `1xx` is none).
    private var requests = 0
    private var answers = 0
    /// The `Connection` option the answer to a request must carry, by the
    /// request's number (counted from 1): `close`, or `keep-alive` for an
    /// HTTP/1.0 client that asked to keep the connection (without it, such
    /// a client waits for the server to close). Empty for most connections.
    private var answerOptions: [Int: String] = [:]

    init(secure: Bool) { self.secure = secure }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            do {
                var request = try OriginFormCodec.request(head, secure: secure)
                requests += 1
                switch OriginFormCodec.persistence(head) {
                case .close:
                    request.headerFields[.connection] = "close"
                    answerOptions[requests] = "close"
                case .keepAliveSaid:
                    answerOptions[requests] = "keep-alive"
                case .kept:
                    break
                }
                context.fireChannelRead(wrapInboundOut(.head(request)))
            } catch {
                context.fireErrorCaught(error)
            }
        case .body(let body):
            context.fireChannelRead(wrapInboundOut(.body(body)))
        case .end(let trailers):
            context.fireChannelRead(wrapInboundOut(.end(trailers.map { HTTPFields($0, splitCookie: false) })))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var response):
            if response.status.kind != .informational {
                answers += 1
                if !answerOptions.isEmpty, let option = answerOptions.removeValue(forKey: answers) {
                    response.headerFields[.connection] = option
                }
            }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(response))), promise: promise)
        case .body(let body):
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        case .end(let trailers):
            context.write(wrapOutboundOut(.end(trailers.map(HTTPHeaders.init))), promise: promise)
        }
    }

    /// What a request says of its connection (RFC 9112 section 9.3).
    enum Persistence: Equatable {
        /// It ends after the answer: a `close` option (in any case, among
        /// others), or HTTP/1.0 (or older) without `keep-alive`.
        case close
        /// HTTP/1.0 with `keep-alive`: kept, and the answer must say so.
        case keepAliveSaid
        /// HTTP/1.1 without `close`: kept.
        case kept
    }

    static func persistence(_ head: HTTPRequestHead) -> Persistence {
        var close = false
        var keepAlive = false
        for value in head.headers["Connection"] {
            for option in value.split(separator: ",") {
                let option = option.trimmingCharacters()
                if option.utf8.count == 5, option.lowercased() == "close" { close = true }
                if option.utf8.count == 10, option.lowercased() == "keep-alive" { keepAlive = true }
            }
        }
        if close { return .close }
        if head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1) { return .kept }
        return keepAlive ? .keepAliveSaid : .close
    }

    /// The request `head` as `HTTPTypes` has it, as `HTTP1ToHTTPServerCodec` converts it.
    static func request(_ head: HTTPRequestHead, secure: Bool) throws -> HTTPRequest {
        guard head.uri.utf8.first == UInt8(ascii: "/") else {
            return try HTTPRequest(head, secure: secure, splitCookie: false)
        }
        return HTTPRequest(
            method: try HTTPRequest.Method(head.method), scheme: secure ? "https" : "http",
            authority: head.headers["Host"].first, path: head.uri,
            headerFields: HTTPFields(head.headers, splitCookie: false))
    }
}
