import Foundation
import NIOCore
import NIOEmbedded
import Testing

@testable import FileSharing

/// The events around ``SmallReadLane``: a read it answers whole stays with
/// it, read-complete included, and it asks for the next read itself; a read
/// that passes anything on reaches the handlers behind as before, and the
/// next read is theirs to ask for.
@Suite("Small read lane, events")
struct SmallReadLaneEventTests {
    /// Counts what passes by: the reads and read-completes going in, the
    /// read requests going out.
    final class Probe: ChannelDuplexHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundIn = ByteBuffer
        var reads = 0
        var readCompletes = 0
        var readRequests = 0

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            reads += 1
            context.fireChannelRead(data)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            readCompletes += 1
            context.fireChannelReadComplete()
        }

        func read(context: ChannelHandlerContext) {
            readRequests += 1
            context.read()
        }
    }

    static func request(_ target: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\n\r\n"
    }

    /// A lane between two probes, `front` on the socket's side and
    /// `behind` where the decoder is, on a share with `Team/s.txt`; the
    /// handlers behind have asked for a read (as `autoRead` does from the tail).
    static func channel(_ share: ShareFixture) throws -> (EmbeddedChannel, front: Probe, behind: Probe) {
        try share.write("Team/s.txt", "small text")
        let reads = try #require(share.server.smallReads)
        let (front, behind) = (Probe(), Probe())
        let lane = SmallReadLane(
            reads: reads, ends: SmallReadLane.ResponseEnds(), routeAtLeastEvery: .seconds(30), deadlines: nil)
        let channel = EmbeddedChannel(handlers: [front, lane, behind])
        channel.read()
        #expect(front.readRequests == 1 && behind.readRequests == 1)
        return (channel, front, behind)
    }

    /// The status lines of the answers written, and how many writes they took.
    static func written(_ channel: EmbeddedChannel) throws -> (statusLines: [String], writes: Int) {
        var text = ""
        var writes = 0
        while let out = try channel.readOutbound(as: ByteBuffer.self) {
            text += String(buffer: out)
            writes += 1
        }
        // Each answer: a head, and the body at the end.
        #expect(text.isEmpty || text.hasSuffix("\r\n\r\nsmall text"))
        let statusLines = text.components(separatedBy: "small text").dropLast().map {
            $0.components(separatedBy: "\r\n")[0]
        }
        return (statusLines, writes)
    }

    static func answers(_ channel: EmbeddedChannel) throws -> [String] { try written(channel).statusLines }

    @Test("a read answered whole: nothing reaches the handlers behind, and the lane asks for the next read")
    func answeredWhole() throws {
        let share = try ShareFixture()
        let (channel, front, behind) = try Self.channel(share)

        // Two requests in one read, then one more: all answered by the lane.
        try channel.writeInbound(
            ByteBuffer(string: Self.request("/api/files/Team/s.txt") + Self.request("/dav/Team/s.txt")))
        let (firstAnswers, writes) = try Self.written(channel)
        #expect(firstAnswers == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"])
        // Gathered: one write down the pipeline for the read's answers.
        #expect(writes == 1)
        try channel.writeInbound(ByteBuffer(string: Self.request("/api/files/Team/s.txt")))
        let nextAnswers = try Self.answers(channel)
        #expect(nextAnswers == ["HTTP/1.1 200 OK"])
        #expect(behind.reads == 0 && behind.readCompletes == 0)
        // The next read was asked for by the lane, once per read, not by those behind.
        #expect(front.readRequests == 3 && behind.readRequests == 1)

        // A request the router answers (a query): it goes on with its read-complete,
        // and the lane asks for nothing: the next read is for those behind to ask.
        try channel.writeInbound(ByteBuffer(string: Self.request("/api/files/Team/s.txt?download=1")))
        let none = try Self.answers(channel)
        #expect(none.isEmpty)
        #expect(behind.reads == 1 && behind.readCompletes == 1)
        #expect(front.readRequests == 3)
        channel.read()
        #expect(front.readRequests == 4 && behind.readRequests == 2)
        _ = try channel.finish()
    }

    @Test("a read answered in part: the rest goes on with its read-complete, and the lane asks for no read")
    func answeredInPart() throws {
        let share = try ShareFixture()
        let (channel, front, behind) = try Self.channel(share)
        try channel.writeInbound(
            ByteBuffer(string: Self.request("/api/files/Team/s.txt") + Self.request("/api/files/Team/s.txt?download=1"))
        )
        let answers = try Self.answers(channel)
        #expect(answers == ["HTTP/1.1 200 OK"])
        #expect(behind.reads == 1 && behind.readCompletes == 1)
        #expect(front.readRequests == 1)
        _ = try channel.finish()
    }

    @Test("a read-complete after a read that brought nothing (the end of the stream) goes on as before")
    func emptyReadComplete() throws {
        let share = try ShareFixture()
        let (channel, front, behind) = try Self.channel(share)
        channel.pipeline.fireChannelReadComplete()
        #expect(behind.readCompletes == 1 && front.readRequests == 1)
        _ = try channel.finish()
    }
}
