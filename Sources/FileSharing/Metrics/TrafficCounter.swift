import CoreMetrics
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Counts the bytes of one connection on the wire (with TLS, as encrypted),
/// and the connection itself while it is open. It must sit at the front of
/// the pipeline, where bytes are bytes: ``Installer``, one of Hummingbird's
/// additional channel handlers (which come after the HTTP decoder), puts it there.
final class TrafficCounter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let metrics: ServerMetrics
    private var counted = false

    init(metrics: ServerMetrics) { self.metrics = metrics }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { opened() }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { closed() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        metrics.bytesReceived.increment(by: Int64(unwrapInboundIn(data).readableBytes))
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        metrics.bytesSent.increment(by: Int64(unwrapOutboundIn(data).readableBytes))
        context.write(data, promise: promise)
    }

    private func opened() {
        guard !counted else { return }
        counted = true
        metrics.connections.increment()
        metrics.connectionsTotal.increment()
    }

    private func closed() {
        guard counted else { return }
        counted = false
        metrics.connections.decrement()
    }
}

extension TrafficCounter {
    /// Puts a ``TrafficCounter`` at the front of the connection's pipeline
    /// when it is added, then removes itself.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart

        private let metrics: ServerMetrics

        init(metrics: ServerMetrics) { self.metrics = metrics }

        func handlerAdded(context: ChannelHandlerContext) {
            let pipeline = context.pipeline.syncOperations
            try? pipeline.addHandler(TrafficCounter(metrics: metrics), position: .first)
            pipeline.removeHandler(context: context, promise: nil)
        }
    }
}
