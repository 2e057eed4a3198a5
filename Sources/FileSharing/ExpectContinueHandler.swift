import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` at once, so clients that
/// wait for it before sending a body (curl for large uploads, WebDAV clients)
/// do not stall for a second on every upload. Hummingbird does not do it.
final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(var head) = unwrapInboundIn(data), let expect = head.headerFields[.expect] {
            head.headerFields[.expect] = nil
            if expect.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            }
            context.fireChannelRead(wrapInboundOut(.head(head)))
            return
        }
        context.fireChannelRead(data)
    }
}
