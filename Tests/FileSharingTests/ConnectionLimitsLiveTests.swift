import FileshareTestSupport
import Foundation
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// The connection limits on a real socket, with bounds short enough for a test.
@Suite("Connection limits, live")
struct ConnectionLimitsLiveTests {
    static let limits = ConnectionLimits(requestHeaderTimeout: .milliseconds(1500), keepAliveTimeout: .seconds(1))

    @Test("a header dripped a byte every 200 ms gets 408 and is closed at the header bound, not later")
    func drippedHeader() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(limits: Self.limits)
            try await share.test(.live) { client in
                let port = try #require(client.port)
                let (outcome, elapsed, next) = try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    let start = ContinuousClock.now
                    connection.blockingSend("GET /api/info HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    let outcome = connection.answerOrClose(drippingEvery: .milliseconds(200), for: .seconds(10))
                    let elapsed = ContinuousClock.now - start
                    // The server goes on (on a new connection: the test
                    // client's own was closed meanwhile, idle past the bound).
                    let next = try RawConnection(port: port)
                    next.blockingSend(
                        "GET /api/info HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\n\r\n")
                    return (outcome, elapsed, next.blockingReceive(until: "\r\n\r\n"))
                }
                #expect(outcome.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(outcome.text)")
                #expect(outcome.text.lowercased().contains("connection: close"))
                #expect(outcome.closed)
                #expect(elapsed >= .milliseconds(1450) && elapsed < .seconds(5), "\(elapsed)")
                #expect(next.hasPrefix("HTTP/1.1 200 OK"), "\(next.prefix(60))")
            }
        }
    }

    @Test("a kept-alive connection with no request under way is closed after the keep-alive bound, without an answer")
    func keepAlive() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(limits: Self.limits)
            try await share.test(.live) { client in
                let port = try #require(client.port)
                let (answer, outcome, elapsed) = try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    connection.blockingSend(
                        "GET /api/info HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\n\r\n")
                    let answer = connection.blockingReceive(until: "\r\n\r\n")
                    let answered = ContinuousClock.now
                    let outcome = connection.answerOrClose(drippingEvery: nil, for: .seconds(10))
                    return (answer, outcome, ContinuousClock.now - answered)
                }
                #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer.prefix(60))")
                // What arrives is the rest of the first answer, if any; no second one.
                #expect(outcome.closed && !outcome.text.contains("HTTP/1.1"), "\(outcome.text)")
                #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(5), "\(elapsed)")
            }
        }
    }

    @Test("a body sent a byte every 150 ms goes on past both bounds: a slow upload is not a slow header")
    func slowBody() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(limits: Self.limits)
            try await share.test(.live) { client in
                let port = try #require(client.port)
                let (answer, elapsed) = try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    let body = Array("twenty bytes, slowly".utf8)
                    connection.blockingSend(
                        "PUT /api/files/slow.txt HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\nContent-Length: \(body.count)\r\n\r\n"
                    )
                    let start = ContinuousClock.now
                    for byte in body {
                        Thread.sleep(forTimeInterval: 0.15)
                        connection.blockingSend([byte])
                    }
                    return (connection.blockingReceive(until: "\r\n\r\n"), ContinuousClock.now - start)
                }
                #expect(elapsed > .milliseconds(2500))
                #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(60))")
                #expect(share.read("slow.txt") == "twenty bytes, slowly")
            }
        }
    }
}

extension RawConnection {
    /// Waits up to `limit` for the server to answer or close, sending one
    /// header byte every `interval` meanwhile (when given). Returns what
    /// arrived and whether the server closed the connection.
    func answerOrClose(drippingEvery interval: Duration?, for limit: Duration) -> (text: String, closed: Bool) {
        let end = ContinuousClock.now.advanced(by: limit)
        var nextDrip = interval.map { ContinuousClock.now.advanced(by: $0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < end {
            if let next = nextDrip, ContinuousClock.now >= next, let interval {
                blockingSend("a")
                nextDrip = next.advanced(by: interval)
            }
            var polled = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&polled, 1, 20) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += buffer[..<count]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }
}
