import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Pauses accepting connections for a moment when the process has no
/// descriptor left, instead of retrying `accept` in a busy loop.
///
/// With every descriptor in use, `accept` fails with `EMFILE` and leaves the
/// connection queued, so the listening socket stays readable. NIO installs
/// an `AcceptBackoffHandler`, but it only delays the next `read()`: the
/// failed accept leaves the channel's read pending and the socket registered
/// for readability, so the event loop wakes and fails again at once (about
/// 1,600 times a second, measured). Turning `autoRead` off takes the socket
/// out of the poll set; turning it on after the pause accepts again. Queued
/// clients wait in the kernel's backlog meanwhile, as with nginx.
///
/// Put it first in the server channel's pipeline, so it sees the error
/// before NIO's handler swallows it.
final class AcceptPauseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = any Channel

    private let pause: TimeAmount
    private let logger: Logger
    private var resume: Scheduled<Void>?
    /// Pauses since a connection was last accepted.
    private var pauses = 0

    init(pause: Duration, logger: Logger) {
        self.pause = TimeAmount(pause)
        self.logger = logger
    }

    /// Whether an accept failed for want of a resource that closing connections frees.
    static func isExhaustion(_ error: any Error) -> Bool {
        guard let error = error as? IOError else { return false }
        return [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard AcceptPauseHandler.isExhaustion(error) else {
            context.fireErrorCaught(error)
            return
        }
        if pauses == 0 {
            logger.warning(
                "cannot accept connections: \(error); pausing accept until a descriptor is free",
                metadata: ["pause": "\(pause)"])
        }
        pauses += 1
        // Already paused, or reads held back by someone else: nothing to do.
        guard resume == nil, let options = context.channel.syncOptions,
            (try? options.getOption(ChannelOptions.autoRead)) == true
        else { return }
        try? options.setOption(ChannelOptions.autoRead, value: false)
        resume = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [weak self] in
            self?.resume = nil
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if pauses > 0 {
            logger.notice("accepting connections again", metadata: ["pauses": "\(pauses)"])
            pauses = 0
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        // While paused, a read asked for by the pipeline waits for the resume,
        // which reads.
        guard resume == nil else { return }
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelResume()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Removed while paused: accept again rather than never.
        if resume != nil {
            cancelResume()
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        }
    }

    private func cancelResume() {
        resume?.cancel()
        resume = nil
    }
}
