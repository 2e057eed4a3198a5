import HTTPTypes
import Testing

@testable import FileSharing

/// The strict head reader and the framing that let ``SmallReadLane``
/// answer ahead of NIO's decoder without ever reading the stream otherwise.
@Suite("Small read lane, logic")
struct SmallReadLaneLogicTests {
    static func scan(_ text: String) -> RequestHeadScan? {
        Array(text.utf8).withUnsafeBytes { RequestHeadScan($0) }
    }

    @Test("a strict head: its method, target, version, fields and length")
    func strict() throws {
        let text = "GET /api/files/a%20b.txt HTTP/1.1\r\nHost: x\r\nRange:  bytes=1-2 \t\r\nX-Empty:\r\n\r\n"
        let bytes = Array(text.utf8)
        try bytes.withUnsafeBytes { head in
            let scan = try #require(RequestHeadScan(head))
            #expect(scan.isMethod("GET", in: head))
            #expect(!scan.isMethod("GE", in: head) && !scan.isMethod("HEAD", in: head))
            #expect(String(decoding: bytes[scan.target], as: UTF8.self) == "/api/files/a%20b.txt")
            #expect(scan.isHTTP11)
            #expect(
                scan.fields(in: head).map { String(decoding: bytes[$0.name], as: UTF8.self) } == [
                    "Host", "Range", "X-Empty",
                ])
            #expect(
                scan.fields(in: head).map { String(decoding: bytes[$0.value], as: UTF8.self) } == [
                    "x", "bytes=1-2", "",
                ])
            #expect(scan.fieldCount == 3 && scan.contentLength == nil && !scan.needsDecoder)
        }
        #expect(Self.scan("PUT /a HTTP/1.0\r\ncontent-LENGTH: 0012\r\n\r\n")?.contentLength == 12)
        #expect(Self.scan("PUT /a HTTP/1.0\r\ncontent-LENGTH: 0012\r\n\r\n")?.isHTTP11 == false)
        #expect(Self.scan("GET / HTTP/1.1\r\n\r\n") != nil)
    }

    @Test(
        "what is not strict is refused: the decoder alone reads it",
        arguments: [
            "GET / HTTP/1.1\nHost: x\r\n\r\n",  // a bare LF
            "GET / HTTP/1.1\r\nHost: x\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\r\n\r\n",  // a bare CR
            "GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",  // obs-fold
            "GET / HTTP/1.1\r\nHost : x\r\n\r\n",  // a space before the colon
            "GET / HTTP/1.1\r\nHo st: x\r\n\r\n",
            "GET / HTTP/1.1\r\n: x\r\n\r\n",
            "GET / HTTP/1.1\r\nX: a\u{0}b\r\n\r\n",  // a control character
            "GET / HTTP/1.1\r\nX: a\u{7F}\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",  // two lengths
            "GET / HTTP/1.1\r\nContent-Length: +1\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: \r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n",
            "GET  / HTTP/1.1\r\n\r\n",  // two spaces
            "GET / HTTP/1.1 \r\n\r\n",
            "GET / HTTP/2.0\r\n\r\n",
            "GET / http/1.1\r\n\r\n",
            "GET /\u{1}a HTTP/1.1\r\n\r\n",
            "G(T / HTTP/1.1\r\n\r\n",
            "\r\nGET / HTTP/1.1\r\n\r\n",  // an empty line first
            "GET / HTTP/1.1\r\nHost: x\r\n",  // not ended
        ])
    func refused(text: String) {
        #expect(Self.scan(text) == nil)
    }

    @Test(
        "fields whose messages only the decoder may frame",
        arguments: ["Transfer-Encoding: chunked", "transfer-encoding: identity", "Upgrade: websocket"])
    func decoderOnly(field: String) {
        #expect(Self.scan("POST /a HTTP/1.1\r\n\(field)\r\n\r\n")?.needsDecoder == true)
    }

    @Test("a body sent after 100 Continue is framed by its length: the following goes on after it")
    func expectContinue() throws {
        let scan = try #require(Self.scan("PUT /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"))
        #expect(scan.expects && !scan.needsDecoder && scan.contentLength == 3)
        let framing = Self.framing(
            "PUT /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n",
            cuts: [60])
        #expect(framing.heads == 2 && framing.isAtBoundary)
        // The lane leaves such a request to the router.
        let head = Array("GET /a HTTP/1.1\r\nExpect: 100-continue\r\n\r\n".utf8)
        #expect(head.withUnsafeBytes { SmallReadLane.request($0) } == nil)
        #expect(
            Array("GET /a HTTP/1.1\r\nHost: h\r\n\r\n".utf8).withUnsafeBytes { SmallReadLane.request($0) }?.0
                .authority == "h")
    }

    @Test("a body only for a PROPFIND, and a small one; a GET with one is the router's")
    func bodies() {
        func asked(_ text: String) -> (method: String, bodyLength: Int)? {
            Array(text.utf8).withUnsafeBytes { SmallReadLane.request($0) }.map { ($0.0.method.rawValue, $0.bodyLength) }
        }
        #expect(asked("PROPFIND /dav/a HTTP/1.1\r\nDepth: 0\r\nContent-Length: 120\r\n\r\n")! == ("PROPFIND", 120))
        #expect(asked("PROPFIND /dav/a HTTP/1.1\r\nDepth: 0\r\n\r\n")! == ("PROPFIND", 0))
        #expect(asked("PROPFIND /dav/a HTTP/1.1\r\nContent-Length: \(SmallReads.maximumBody + 1)\r\n\r\n") == nil)
        #expect(asked("PROPFIND /dav/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == nil)
        #expect(asked("GET /a HTTP/1.1\r\nContent-Length: 1\r\n\r\n") == nil)
        #expect(asked("PROPPATCH /dav/a HTTP/1.1\r\nContent-Length: 1\r\n\r\n") == nil)
    }

    @Test("the end of a head is found wherever it falls, as a plain search finds it")
    func headEnd() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("\r\nab".utf8)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<40, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            }
            let start = Int.random(in: 0...max(0, bytes.count), using: &generator)
            var expected: Int? = nil
            if bytes.count >= 4 {
                for index in start..<max(start, bytes.count - 3)
                where bytes[index..<index + 4].elementsEqual("\r\n\r\n".utf8) {
                    expected = index + 4
                    break
                }
            }
            let found = bytes.withUnsafeBytes { RequestHeadScan.headEnd(in: $0, from: start) }
            #expect(found == expected, "\(bytes) from \(start)")
        }
    }

    /// Feeds `text` to a framing in pieces cut at `cuts`.
    static func framing(_ text: String, cuts: [Int]) -> RequestFraming {
        let bytes = Array(text.utf8)
        var framing = RequestFraming()
        var start = 0
        for cut in cuts + [bytes.count] where cut >= start {
            bytes[start..<cut].withUnsafeBytes { framing.consume($0) }
            start = cut
        }
        return framing
    }

    @Test("requests and their bodies are followed however the bytes are cut")
    func followed() {
        let stream =
            "PUT /a HTTP/1.1\r\nContent-Length: 11\r\n\r\nGET / HTTP/"
            + "GET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
            + "POST /d HTTP/1.0\r\nContent-Length: 3\r\n\r\nxyz"
        // The body of the PUT holds what looks like a request line: it is body.
        let count = stream.utf8.count
        for cut in 0...count {
            for second in [cut, min(count, cut + 7)] {
                let framing = Self.framing(stream, cuts: [cut, second])
                #expect(framing.heads == 4, "cut at \(cut), \(second)")
                #expect(framing.isAtBoundary, "cut at \(cut), \(second)")
            }
        }
        // Byte by byte.
        let framing = Self.framing(stream, cuts: Array(0..<count))
        #expect(framing.heads == 4 && framing.isAtBoundary)
        // Half a body, half a head: not at a boundary.
        #expect(!Self.framing(String(stream.prefix(45)), cuts: []).isAtBoundary)
        #expect(!Self.framing(String(stream.prefix(60)), cuts: []).isAtBoundary)
        #expect(Self.framing(String(stream.prefix(50)), cuts: []).heads == 1)
    }

    @Test("a header cut where the rest looks like a request is one request")
    func lookalike() {
        let framing = Self.framing(
            "GET /a HTTP/1.1\r\nX-A: GET /secret HTTP/1.1\r\n\r\n", cuts: ["GET /a HTTP/1.1\r\nX-A: ".utf8.count])
        #expect(framing.heads == 1 && framing.isAtBoundary)
    }

    @Test(
        "what only the decoder may frame ends the following, for good",
        arguments: [
            "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
            "CONNECT x:443 HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
            "GET / HTTP/1.1\nHost: x\n\n\r\n\r\n",
        ])
    func opaque(head: String) {
        var framing = Self.framing(head + "GET / HTTP/1.1\r\n\r\n", cuts: [3])
        #expect(framing.isOpaque && !framing.isAtBoundary)
        Array("GET / HTTP/1.1\r\n\r\n".utf8).withUnsafeBytes { framing.consume($0) }
        #expect(framing.isOpaque && framing.heads == 0)
    }

    @Test("a head past the limit ends the following")
    func tooLong() {
        let framing = Self.framing(
            "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: RequestFraming.headLimit), cuts: [100, 30_000])
        #expect(framing.isOpaque)
    }
}
