import FileshareTestSupport
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import Testing

@testable import FileSharing

/// ``ConnectionDeadlineHandler`` on a real socket, served by an event loop
/// of the test's own, which the test keeps busy on purpose: an event loop
/// runs the timers that fell due while it was busy before it reads its
/// sockets again. (Its own loop: keeping the server's shared loops busy
/// would slow every test running beside it.)
@Suite("Connection deadlines on a socket whose loop runs late")
struct ConnectionDeadlineHandlerLiveTests {
    /// Answers every request `200` with the body `ok`.
    final class Answerer: ChannelInboundHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundOut = HTTPResponsePart

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            var fields = HTTPFields()
            fields[.contentLength] = "2"
            context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: fields))), promise: nil)
            context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: "ok"))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    static let request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test(
        "a request sent well within the keep-alive bound is answered, though the loop ran the deadline before reading it; an idle connection is still closed at the bound"
    )
    func requestWaitingWhenTheLoopRunsLate() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let limits = ConnectionLimits(requestHeaderTimeout: .seconds(5), keepAliveTimeout: .milliseconds(300))
        do {
            let server = try await ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let operations = channel.pipeline.syncOperations
                        try operations.configureHTTPServerPipeline()
                        try operations.addHandlers([
                            HTTP1ToHTTPServerCodec(secure: false), ConnectionDeadlineHandler(limits: limits),
                            Answerer(),
                        ])
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            let port = try #require(server.localAddress?.port)
            let loop = group.next()
            let outcome = try await onOwnThread {
                () throws -> (first: String, second: String, closedAfter: Duration, end: String) in
                let connection = try RawConnection(port: port)
                connection.blockingSend(Self.request)
                let first = connection.blockingReceive(until: "\r\n\r\nok")
                // The loop busy from now for more than twice the bound: the
                // deadline falls due while it is, and the request sent now
                // waits in the socket until it is done.
                let busy = DispatchSemaphore(value: 0)
                loop.execute {
                    busy.signal()
                    usleep(700_000)
                }
                busy.wait()
                connection.blockingSend(Self.request)
                let second = connection.blockingReceive(until: "\r\n\r\nok")
                // Then idle: closed at the bound, without an answer.
                let answered = ContinuousClock.now
                let end = connection.blockingReceive()
                return (first, second, ContinuousClock.now - answered, end)
            }
            #expect(outcome.first.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(outcome.first)")
            #expect(
                outcome.second.hasPrefix("HTTP/1.1 200 OK\r\n") && outcome.second.hasSuffix("\r\n\r\nok"),
                "the second request: \(outcome.second.isEmpty ? "closed without an answer" : outcome.second)")
            #expect(outcome.end.isEmpty, "\(outcome.end)")
            #expect(
                outcome.closedAfter >= .milliseconds(250) && outcome.closedAfter < .seconds(5),
                "closed \(outcome.closedAfter) after the last answer")
            try await server.close()
        } catch {
            try await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }
}
