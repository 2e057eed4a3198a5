import FileshareTestSupport
import Foundation
import HummingbirdTesting
import Testing

@testable import FileSharing

/// A request that ends its connection (RFC 9112 section 9.3) gets its
/// answer with `Connection: close`, and then the server closes; one that
/// keeps it open does not (and an HTTP/1.0 one is told `keep-alive`). Both for a file answered on the event loop
/// (`SmallReads`) and for an answer of the router (a 404), on a real socket.
@Suite("Connection: close and HTTP/1.0, live")
struct ConnectionCloseTests {
    /// How a request asks, and the `Connection` its answer must carry
    /// (`close`: the connection ends after it; otherwise it stays open).
    static let cases: [(head: String, says: String?)] = [
        ("HTTP/1.1\r\nHost: x\r\nConnection: close", "close"),
        ("HTTP/1.1\r\nHost: x\r\nConnection: Close", "close"),
        ("HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, CLOSE", "close"),
        ("HTTP/1.0", "close"),
        ("HTTP/1.0\r\nConnection: close", "close"),
        ("HTTP/1.0\r\nConnection: Keep-Alive", "keep-alive"),
        ("HTTP/1.1\r\nHost: x", nil),
        ("HTTP/1.1\r\nHost: x\r\nConnection: keep-alive", nil),
    ]

    @Test("each way of asking, for a small file and for a 404", arguments: [true, false])
    func asked(smallReads: Bool) async throws {
        let share = try ShareFixture(smallReads: smallReads)
        try share.write("Team/s.txt", "small text")
        try await share.test(.live) { client in
            let port = try #require(client.port)
            for target in ["/api/files/Team/s.txt", "/api/files/Team/nothing.txt"] {
                for (head, says) in Self.cases {
                    let ends = says == "close"
                    let (answer, closed) = try await onOwnThread {
                        let connection = try RawConnection(port: port)
                        connection.blockingSend(
                            "GET \(target) \(head)\r\nAuthorization: \(ShareFixture.authorization)\r\n\r\n")
                        let answer = connection.blockingReceive(until: "\r\n\r\n")
                        return (answer, connection.closesSoon(answer: answer))
                    }
                    let expected = target.hasSuffix("s.txt") ? "HTTP/1.1 200 OK" : "HTTP/1.1 404 Not Found"
                    let said = answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("connection:") }
                        .map { $0.dropFirst("connection:".count).trimmingCharacters(in: .whitespaces) }
                    #expect(answer.hasPrefix(expected), "\(target) \(head): \(answer.prefix(40))")
                    #expect(said == says, "\(target) \(head): Connection: \(said ?? "none")")
                    #expect(closed == ends, "\(target) \(head): closed \(closed)")
                }
            }
        }
        share.stop()
    }

    @Test("two requests in one write, the second closing: two answers, only the second says close, then the end")
    func pipelined() async throws {
        let share = try ShareFixture(smallReads: true)
        try share.write("Team/s.txt", "small text")
        try await share.test(.live) { client in
            let port = try #require(client.port)
            let text = try await onOwnThread {
                let connection = try RawConnection(port: port)
                let request =
                    "GET /api/files/Team/s.txt HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)"
                connection.blockingSend(request + "\r\n\r\n" + request + "\r\nConnection: close\r\n\r\n")
                // Until the server closes (or the 20 s receive timeout).
                return connection.blockingReceive()
            }
            let answers = text.components(separatedBy: "HTTP/1.1 200 OK").dropFirst()
            #expect(answers.count == 2, "\(text)")
            #expect(answers.first.map { !$0.lowercased().contains("connection: close") } == true)
            #expect(answers.last.map { $0.lowercased().contains("connection: close") } == true)
        }
        share.stop()
    }
}

extension RawConnection {
    /// Whether the server closes the connection once `answer` (its head, as
    /// read so far) is whole: reads the rest of the body its
    /// `Content-Length` announces, then waits up to 2 seconds for the end.
    func closesSoon(answer: String) -> Bool {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let parts = answer.components(separatedBy: "\r\n\r\n")
        let length =
            parts[0].split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        var missing = length - (parts.count > 1 ? parts[1...].joined(separator: "\r\n\r\n").utf8.count : 0)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count == 0 { return missing <= 0 }
            // A timeout (or an error) with the answer whole: the connection stayed open.
            if count < 0 { return false }
            missing -= count
            // More than the answer: a second answer came, so the connection is open.
            if missing < 0 { return false }
        }
    }
}
