import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Converts between NIO's HTTP/1 parts and `HTTPTypes`, as
/// `HTTP1ToHTTPServerCodec` does, but takes an origin-form target
/// (`/path?query`, what every client sends a server that is no proxy)
/// as the request's path without parsing it.
///
/// `HTTP1ToHTTPServerCodec` runs every target through Foundation's
/// `URLComponents` to find an absolute form's path; the profile of a small
/// GET put 2–3 % of the server's time there. A target that begins with `/`
/// has no scheme, and for such a target that conversion returns it
/// unchanged, so taking it as it is gives the same path. Any other target
/// (absolute form, `*`) still goes through the same conversion.
final class OriginFormCodec: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let secure: Bool

    init(secure: Bool) { self.secure = secure }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            do {
                context.fireChannelRead(wrapInboundOut(.head(try OriginFormCodec.request(head, secure: secure))))
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
        case .head(let response):
            context.write(wrapOutboundOut(.head(HTTPResponseHead(response))), promise: promise)
        case .body(let body):
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: promise)
        case .end(let trailers):
            context.write(wrapOutboundOut(.end(trailers.map(HTTPHeaders.init))), promise: promise)
        }
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
