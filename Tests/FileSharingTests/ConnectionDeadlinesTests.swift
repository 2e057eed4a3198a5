import NIOCore
import Testing

@testable import FileSharing

/// The connection deadlines as a pure state machine, on an injected clock
/// (seconds since the connection was accepted).
@Suite("Connection deadlines")
struct ConnectionDeadlinesTests {
    static let header = TimeAmount.seconds(60)
    static let keepAlive = TimeAmount.seconds(75)

    static func at(_ seconds: Double) -> NIODeadline {
        .uptimeNanoseconds(1_000_000_000_000 + UInt64(seconds * 1_000_000_000))
    }

    /// A socket with nothing unread in it.
    static func nothingWaiting() -> Bool { false }

    func accepted() -> ConnectionDeadlines {
        ConnectionDeadlines(headerTimeout: Self.header, keepAliveTimeout: Self.keepAlive, now: Self.at(0))
    }

    @Test("a connection that sends nothing is closed without an answer after the keep-alive timeout")
    func idleConnection() {
        var deadlines = accepted()
        #expect(deadlines.start() == .setTimer(Self.at(75)))
        #expect(deadlines.timerFired(now: Self.at(74.9), bytesWaiting: Self.nothingWaiting) == .setTimer(Self.at(75)))
        #expect(deadlines.timerFired(now: Self.at(75), bytesWaiting: Self.nothingWaiting) == .close(answer: false))
        #expect(deadlines.phase == .closed)
        #expect(deadlines.timerFired(now: Self.at(200), bytesWaiting: Self.nothingWaiting) == .none)
    }

    @Test(
        "a request still unread in the socket when the keep-alive deadline is run late starts its header deadline; only then is the socket asked"
    )
    func requestWaitingAtKeepAliveDeadline() {
        var deadlines = accepted()
        _ = deadlines.bytesArrived(now: Self.at(1))
        _ = deadlines.headReceived()
        _ = deadlines.requestEnded(now: Self.at(1))
        #expect(deadlines.responseEnded(now: Self.at(2)) == .setTimer(Self.at(77)))
        var asked = 0
        func requestWaits() -> Bool {
            asked += 1
            return true
        }
        // Early: the socket is not asked.
        #expect(deadlines.timerFired(now: Self.at(76), bytesWaiting: requestWaits) == .setTimer(Self.at(77)))
        #expect(asked == 0)
        // Due, with a request in the socket that the loop has not read yet:
        // kept, with the header deadline from now.
        #expect(deadlines.timerFired(now: Self.at(78), bytesWaiting: requestWaits) == .setTimer(Self.at(138)))
        #expect(asked == 1)
        #expect(deadlines.phase == .readingHead(deadline: Self.at(138)))
        // The read that follows finds the phase begun; the request goes on as any other.
        #expect(deadlines.bytesArrived(now: Self.at(78)) == .none)
        #expect(deadlines.headReceived() == .cancelTimer)
        // A header that does not come whole by its deadline is answered 408,
        // whatever is in the socket: the socket is not asked.
        _ = deadlines.requestEnded(now: Self.at(80))
        _ = deadlines.responseEnded(now: Self.at(80))
        _ = deadlines.bytesArrived(now: Self.at(90))
        #expect(deadlines.timerFired(now: Self.at(150), bytesWaiting: requestWaits) == .close(answer: true))
        #expect(asked == 1)
    }

    @Test(
        "an idle connection whose socket holds nothing is closed at the keep-alive deadline, however late the timer ran"
    )
    func nothingWaitingAtKeepAliveDeadline() {
        var deadlines = accepted()
        var asked = 0
        func nothingWaits() -> Bool {
            asked += 1
            return false
        }
        #expect(deadlines.timerFired(now: Self.at(90), bytesWaiting: nothingWaits) == .close(answer: false))
        #expect(asked == 1)
        #expect(deadlines.phase == .closed)
    }

    @Test(
        "bytes dripped one at a time do not move the header deadline: 408 at first byte + 60 s",
        arguments: [0.0, 10, 74])
    func drippedHeader(firstByte: Double) {
        var deadlines = accepted()
        #expect(deadlines.bytesArrived(now: Self.at(firstByte)) == .setTimer(Self.at(firstByte + 60)))
        for second in stride(from: firstByte + 1, to: firstByte + 60, by: 1) {
            #expect(deadlines.bytesArrived(now: Self.at(second)) == .none)
        }
        #expect(
            deadlines.timerFired(now: Self.at(firstByte + 60), bytesWaiting: Self.nothingWaiting)
                == .close(answer: true))
        #expect(deadlines.bytesArrived(now: Self.at(firstByte + 61)) == .none)
        #expect(deadlines.headReceived() == .none)
    }

    @Test("a header in time: no deadline while the body and the response take as long as they take")
    func requestInTime() {
        var deadlines = accepted()
        _ = deadlines.bytesArrived(now: Self.at(1))
        #expect(deadlines.headReceived() == .cancelTimer)
        #expect(deadlines.deadline == nil)
        // A slow body: bytes for ten minutes, a response for another ten.
        #expect(deadlines.bytesArrived(now: Self.at(300)) == .none)
        #expect(deadlines.requestEnded(now: Self.at(600)) == .none)
        #expect(deadlines.timerFired(now: Self.at(900), bytesWaiting: Self.nothingWaiting) == .none)
        // Keep-alive from the end of the response.
        #expect(deadlines.responseEnded(now: Self.at(1200)) == .setTimer(Self.at(1275)))
        #expect(deadlines.phase == .idle(since: Self.at(1200)))
        // The next request starts its own header deadline.
        #expect(deadlines.bytesArrived(now: Self.at(1210)) == .setTimer(Self.at(1270)))
        #expect(deadlines.headReceived() == .cancelTimer)
    }

    @Test("a response that ends before its request's body (an early 413) waits for the body's end")
    func earlyResponse() {
        var deadlines = accepted()
        _ = deadlines.bytesArrived(now: Self.at(0))
        _ = deadlines.headReceived()
        #expect(deadlines.responseEnded(now: Self.at(1)) == .none)
        #expect(deadlines.bytesArrived(now: Self.at(100)) == .none)
        #expect(deadlines.phase == .busy)
        #expect(deadlines.requestEnded(now: Self.at(120)) == .setTimer(Self.at(195)))
    }

    @Test("a pipelined request: its header deadline starts when the response before it ends")
    func pipelined() {
        var deadlines = accepted()
        _ = deadlines.bytesArrived(now: Self.at(0))
        _ = deadlines.headReceived()
        _ = deadlines.requestEnded(now: Self.at(0))
        // Part of the next request while a long download goes on.
        #expect(deadlines.bytesArrived(now: Self.at(5)) == .none)
        #expect(deadlines.responseEnded(now: Self.at(500)) == .setTimer(Self.at(560)))
        #expect(deadlines.timerFired(now: Self.at(560), bytesWaiting: Self.nothingWaiting) == .close(answer: true))
    }

    @Test("two pipelined heads: busy until both responses ended")
    func twoPipelinedHeads() {
        var deadlines = accepted()
        _ = deadlines.bytesArrived(now: Self.at(0))
        _ = deadlines.headReceived()
        _ = deadlines.requestEnded(now: Self.at(0))
        _ = deadlines.bytesArrived(now: Self.at(0))
        #expect(deadlines.headReceived() == .none)
        _ = deadlines.requestEnded(now: Self.at(0))
        #expect(deadlines.responseEnded(now: Self.at(1)) == .none)
        #expect(deadlines.phase == .busy)
        #expect(deadlines.responseEnded(now: Self.at(2)) == .setTimer(Self.at(77)))
    }

    @Test("a closed connection keeps no timer and ignores what comes after")
    func closed() {
        var deadlines = accepted()
        _ = deadlines.bytesArrived(now: Self.at(1))
        #expect(deadlines.closed() == .cancelTimer)
        #expect(deadlines.bytesArrived(now: Self.at(2)) == .none)
        #expect(deadlines.headReceived() == .none)
        #expect(deadlines.responseEnded(now: Self.at(3)) == .none)
        #expect(deadlines.timerFired(now: Self.at(100), bytesWaiting: Self.nothingWaiting) == .none)
    }
}
