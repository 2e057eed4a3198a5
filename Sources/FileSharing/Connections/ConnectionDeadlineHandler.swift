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
    /// When ``timer`` fires.
    private var armed: NIODeadline?
    /// Bytes arrived in the read under way, and an earlier deadline than
    /// the armed one is due: the timer is set once the read completes, if
    /// it is still due then.
    private var rearmAfterRead = false
    /// Whether a read is under way (bytes arrived, its read has not completed).
    private var reading = false
    private var observer: RequestBytesObserver?

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let deadlines = ConnectionDeadlines(
            headerTimeout: TimeAmount(limits.requestHeaderTimeout),
            keepAliveTimeout: TimeAmount(limits.keepAliveTimeout), now: .now())
        let action = deadlines.start()
        self.deadlines = deadlines
        perform(action, context: context)
        let observer = RequestBytesObserver { [weak self] in
            guard let self else { return }
            self.reading = true
            self.update(context) { $0.bytesArrived(now: .now()) }
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
        armed = nil
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

    func channelReadComplete(context: ChannelHandlerContext) {
        readCompleted(context: context)
        context.fireChannelReadComplete()
    }

    /// The read under way is complete: what `channelReadComplete` does,
    /// for ``SmallReadLane``, which keeps a read it answered whole from the
    /// handlers behind it.
    func readCompleted(context: ChannelHandlerContext) {
        reading = false
        if rearmAfterRead {
            rearmAfterRead = false
            // A request whose head came whole in this read is busy now: no timer.
            if let deadline = deadlines?.deadline { arm(at: deadline, context: context) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            update(context) { $0.responseEnded(now: .now()) }
        }
        context.write(data, promise: promise)
    }

    /// A request answered whole ahead of the decoder (``SmallReadLane``),
    /// in the read under way at `now`: its head, its end and its answer's end.
    func requestAnsweredAhead(context: ChannelHandlerContext, now: NIODeadline) {
        update(context) { $0.headReceived() }
        update(context) { $0.requestEnded(now: now) }
        update(context) { $0.responseEnded(now: now) }
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
            // A timer armed for earlier stays: it fires early and the
            // machine sets it again (`timerFired`). Setting and cancelling a
            // timer for every request (a head's deadline, then the next
            // idle one) cost a small GET several percent of its time.
            if let armed, armed <= deadline { return }
            if reading {
                rearmAfterRead = true
            } else {
                arm(at: deadline, context: context)
            }
        case .cancelTimer:
            // Left armed: when it fires, the machine finds no deadline (or a later one).
            rearmAfterRead = false
        case .close(let answer):
            timer?.cancel()
            timer = nil
            armed = nil
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

extension ConnectionDeadlineHandler {
    /// Sets the one timer to fire at `deadline` (unless it fires sooner already).
    private func arm(at deadline: NIODeadline, context: ChannelHandlerContext) {
        if let armed, armed <= deadline { return }
        timer?.cancel()
        armed = deadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self else { return }
            self.timer = nil
            self.armed = nil
            self.update(context) { deadlines in
                deadlines.timerFired(now: .now()) { self.unreadBytesWaiting(context.channel) }
            }
        }
    }

    /// Whether the kernel has received bytes on this connection that no read
    /// has taken yet: more than ``RequestBytesObserver`` counted.
    ///
    /// Asked of Linux's TCP statistics (`TCP_INFO`), on the event loop,
    /// where the answer is at hand at once. Elsewhere, or for a socket that
    /// keeps no such count, the answer is no: the connection is closed as
    /// it was before the question was asked.
    private func unreadBytesWaiting(_ channel: any Channel) -> Bool {
        #if os(Linux)
            guard let observer, let socket = channel as? any SocketOptionProvider else { return false }
            var received: UInt64? = nil
            let info: EventLoopFuture<KernelTCPInfo> = socket.unsafeGetSocketOption(level: .tcp, name: .tcp_info)
            // Complete already: the option is read at once on the channel's loop.
            info.assumeIsolated().whenSuccess { received = $0.bytesReceived }
            guard let received else { return false }
            return received > observer.bytesSeen
        #else
            return false
        #endif
    }
}

#if os(Linux)
    /// The start of Linux's `struct tcp_info` (`linux/tcp.h`), through
    /// `tcpi_bytes_received`: the bytes the connection has received in
    /// order, read or not. The field is at byte 128 since Linux 4.1, and
    /// glibc's copy of the struct ends before it, so it is read by its
    /// offset. A kernel that fills less leaves it 0 (NIO zeroes the storage
    /// first), which reads as nothing waiting.
    struct KernelTCPInfo: Sendable {
        private var words:
            (
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

        /// `tcpi_bytes_received`.
        var bytesReceived: UInt64 { words.16 }
    }
#endif

/// Tells its owner that bytes arrived, before anything decodes them, counts
/// them, and passes them on unchanged.
final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let bytesArrived: () -> Void
    /// The bytes read from the connection so far (before TLS, where there is TLS).
    private(set) var bytesSeen: UInt64 = 0

    init(bytesArrived: @escaping () -> Void) {
        self.bytesArrived = bytesArrived
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytesSeen &+= UInt64(unwrapInboundIn(data).readableBytes)
        bytesArrived()
        context.fireChannelRead(data)
    }
}
