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
    /// The number of the first request that ends the connection, counted from 1.
    private var closingRequest: Int?

    init(secure: Bool) { self.secure = secure }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            do {
                var request = try OriginFormCodec.request(head, secure: secure)
                requests += 1
                if OriginFormCodec.endsConnection(head) {
                    request.headerFields[.connection] = "close"
                    if closingRequest == nil { closingRequest = requests }
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
                if answers == closingRequest { response.headerFields[.connection] = "close" }
            }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(response))), promise: promise)
        case .body(let body):
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        case .end(let trailers):
            context.write(wrapOutboundOut(.end(trailers.map(HTTPHeaders.init))), promise: promise)
        }
    }

    /// Whether the connection ends after the answer to this request: a
    /// `close` option (in any case, among others), or HTTP/1.0 (or older)
    /// without a `keep-alive` option.
    static func endsConnection(_ head: HTTPRequestHead) -> Bool {
        var close = false
        var keepAlive = false
        for value in head.headers["Connection"] {
            for option in value.split(separator: ",") {
                let option = option.trimmingCharacters()
                if option.utf8.count == 5, option.lowercased() == "close" { close = true }
                if option.utf8.count == 10, option.lowercased() == "keep-alive" { keepAlive = true }
            }
        }
        if close { return true }
        return head.version.major < 1 || (head.version.major == 1 && head.version.minor == 0 && !keepAlive)
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
