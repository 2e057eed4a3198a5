import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Enforces ``ConnectionLimits/requestHeaderTimeout`` and
/// ``ConnectionLimits/keepAliveTimeout`` on one connection: the I/O around
/// ``ConnectionDeadlines``.
///
/// It sits after the HTTP decoder (Hummingbird's additional channel
/// handlers), where it sees decoded request heads and written response ends
/// and can answer 408 in HTTP. The decoder says nothing until a header block
/// is complete, so a ``RequestBytesObserver`` put at the front of the
/// pipeline (before TLS, where there is TLS) tells it when bytes arrive.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private var deadlines: ConnectionDeadlines?
    private var timer: Scheduled<Void>?
    private var observer: RequestBytesObserver?

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var deadlines = ConnectionDeadlines(
            headerTimeout: TimeAmount(limits.requestHeaderTimeout),
            keepAliveTimeout: TimeAmount(limits.keepAliveTimeout), now: .now())
        let action = deadlines.start()
        self.deadlines = deadlines
        perform(action, context: context)
        let observer = RequestBytesObserver { [weak self] in
            self?.update(context) { $0.bytesArrived(now: .now()) }
        }
        self.observer = observer
        do {
            try context.pipeline.syncOperations.addHandler(observer, position: .first)
        } catch {
            // Without the observer every request would look idle: close
            // rather than apply the wrong bound.
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        // A closing channel removes every handler itself.
        if let observer, context.channel.isActive {
            context.pipeline.syncOperations.removeHandler(observer, promise: nil)
        }
        observer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: update(context) { $0.headReceived() }
        case .body: break
        case .end: update(context) { $0.requestEnded(now: .now()) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            update(context) { $0.responseEnded(now: .now()) }
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        update(context) { $0.closed() }
        context.fireChannelInactive()
    }

    private func update(
        _ context: ChannelHandlerContext, _ event: (inout ConnectionDeadlines) -> ConnectionDeadlines.Action
    ) {
        guard var deadlines else { return }
        let action = event(&deadlines)
        self.deadlines = deadlines
        perform(action, context: context)
    }

    private func perform(_ action: ConnectionDeadlines.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .setTimer(let deadline):
            timer?.cancel()
            timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
                guard let self else { return }
                self.timer = nil
                self.update(context) { $0.timerFired(now: .now()) }
            }
        case .cancelTimer:
            timer?.cancel()
            timer = nil
        case .close(let answer):
            timer?.cancel()
            timer = nil
            if answer {
                var fields = HTTPFields()
                fields[.connection] = "close"
                fields[.contentLength] = "0"
                context.write(
                    wrapOutboundOut(.head(HTTPResponse(status: .requestTimeout, headerFields: fields))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
            // The answer is in the socket's buffer once the flush returns (a
            // client that sent part of a header is not refusing to read);
            // closing now, not once the write completes, means a client that
            // never reads cannot hold the connection open.
            context.close(promise: nil)
        }
    }
}

/// Tells its owner that bytes arrived, before anything decodes them, and
/// passes them on unchanged.
final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let bytesArrived: () -> Void

    init(bytesArrived: @escaping () -> Void) {
        self.bytesArrived = bytesArrived
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytesArrived()
        context.fireChannelRead(data)
    }
}
