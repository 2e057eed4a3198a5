import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Runs each connection's requests on the connection's own event loop.
///
/// Hummingbird handles a connection in a task on Swift's global executor,
/// a thread pool apart from the event loops: every request then crosses
/// threads twice (its parts from the loop to the task, its answer back),
/// each crossing a wake-up of a sleeping thread. That was most of a small
/// GET's time. With the loop as the task's executor (SE-0417) the parts
/// and the answer stay on one thread, as nginx's worker keeps them.
///
/// What may wait on the disk still goes to the thread pool (`runBlocking`);
/// the work done here is what ran on the global executor before, which is
/// two threads on two cores as the loops are.
///
/// Hummingbird's `HTTP1ToHTTPServerCodec` is replaced by an
/// ``OriginFormCodec``, which converts the same way without parsing an
/// origin-form target. With `smallReads`, small cached files are answered
/// without a task at all: by a ``SmallReadLane`` on the bytes, ahead of
/// NIO's decoder, when nothing else is under way on the connection, and
/// otherwise by a ``SmallReadHandler`` just before the router's handler.
struct EventLoopChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    var smallReads: SmallReads? = nil
    /// How often the lane passes a request on to the router at least: within
    /// Hummingbird's idle bound, which sees only the requests passed on.
    var routeAtLeastEvery: TimeAmount = .seconds(30)

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            // Hummingbird's HTTP/1 channel converts as a server without TLS
            // (`secure: false`) even under TLS; so does its replacement.
            let codec = try operations.handler(type: HTTP1ToHTTPServerCodec.self)
            try operations.addHandler(OriginFormCodec(secure: false), position: .after(codec))
            // Removed at once: nothing has been read yet, and the codec keeps no state.
            operations.removeHandler(codec, promise: nil)
            guard let smallReads else { return value }
            let state = try operations.handler(type: HTTPConnectionStateHandler.self)
            try operations.addHandler(SmallReadHandler(reads: smallReads), position: .after(state))
            // The lane ahead of the decoder, and the count of the answers
            // written behind it that it waits for.
            let encoder = try operations.handler(type: HTTPResponseEncoder.self)
            let ends = SmallReadLane.ResponseEnds()
            try operations.addHandler(ResponseEndCounter(ends), position: .after(encoder))
            let deadlines = try? (
                operations.handler(type: ConnectionDeadlineHandler.self),
                operations.context(handlerType: ConnectionDeadlineHandler.self)
            )
            let lane = SmallReadLane(
                reads: smallReads, ends: ends, routeAtLeastEvery: routeAtLeastEvery, deadlines: deadlines)
            try operations.addHandler(lane, position: .before(encoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await base.handle(value: value, logger: logger)
        }
    }
}

/// An event loop as a task executor: a job runs as the loop's next task.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
