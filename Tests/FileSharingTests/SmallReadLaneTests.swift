import Accounts
import FileshareTestSupport
import Foundation
import HummingbirdTesting
import Testing

@testable import FileSharing

/// Small reads answered on a connection's bytes, ahead of NIO's decoder
/// (``SmallReadLane``), on a real socket: the same bytes as the encoder
/// writes, answers in the order asked whatever else is pipelined between
/// them, no request read where the decoder reads none, and the connection
/// deadlines as before.
@Suite("Small read lane, live", .timeLimit(.minutes(5)))
struct SmallReadLaneTests {
    /// One answer as read: its head (status line and fields) and its body.
    struct Answer: Equatable, CustomStringConvertible {
        var head: String
        var body: String
        var status: String { head.components(separatedBy: "\r\n")[0] }
        /// The head without its `Date` field (the one field that differs between two servers).
        var withoutDate: String {
            head.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") }.joined(separator: "\r\n")
        }
        var description: String { "\(head)\(body.prefix(40))" }
    }

    /// Reads `count` answers (bodies framed by `Content-Length`; none after
    /// a `HEAD`, a `304`, or where `bodiless` says so), or what came before
    /// the connection closed.
    static func receive(_ connection: RawConnection, heads: [Bool]) -> (answers: [Answer], closed: Bool) {
        var data: [UInt8] = []
        var answers: [Answer] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var closed = false
        while answers.count < heads.count {
            // Parse what is whole.
            if let end = data.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
                let head = String(decoding: data[..<end], as: UTF8.self)
                let length =
                    head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                let bodyLength = heads[answers.count] || head.hasPrefix("HTTP/1.1 304") ? 0 : length
                if data.count >= end + bodyLength {
                    answers.append(
                        Answer(head: head, body: String(decoding: data[end..<end + bodyLength], as: UTF8.self)))
                    data.removeFirst(end + bodyLength)
                    continue
                }
            }
            let count = recv(connection.fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                closed = count == 0
                break
            }
            data += buffer[..<count]
        }
        return (answers, closed)
    }

    static func request(_ method: String = "GET", _ target: String, _ fields: String...) -> String {
        "\(method) \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareFixture.authorization)\r\n"
            + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    @Test("its answers are the encoder's, to the byte: GET, HEAD, 304, ranges, WebDAV")
    func sameBytes() async throws {
        var results: [[Answer]] = []
        var root: String? = nil
        var kept: [ShareFixture] = []
        for smallReads in [true, false] {
            let share = try ShareFixture(root: root, smallReads: smallReads)
            kept.append(share)
            if root == nil {
                try share.write("Team/s.txt", String(repeating: "small text ", count: 300))
                try share.write("Team/page.html", "<p>hi</p>")
                try share.write("Team/empty.txt", "")
                root = share.root
            }
            let answers = try await share.test(.live) { client in
                let port = try #require(client.port)
                return try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    connection.blockingSend(Self.request("GET", "/api/files/Team/s.txt"))
                    let first = Self.receive(connection, heads: [false]).answers
                    let etag = try #require(
                        first.first?.head.components(separatedBy: "\r\n").first { $0.hasPrefix("ETag: ") }?
                            .dropFirst("ETag: ".count))
                    let asked: [(String, Bool)] = [
                        (Self.request("HEAD", "/api/files/Team/s.txt"), true),
                        (Self.request("GET", "/api/files/Team/s.txt", "If-None-Match: \(etag)"), false),
                        (Self.request("GET", "/api/files/Team/s.txt", "Range: bytes=10-19"), false),
                        (Self.request("GET", "/api/files/Team/s.txt", "Range: bytes=-5", "If-Range: \(etag)"), false),
                        (Self.request("GET", "/api/files/Team/page.html"), false),
                        (Self.request("GET", "/api/files/Team/empty.txt"), false),
                        (
                            Self.request(
                                "GET", "/api/files/Team/s.txt", "If-Modified-Since: Sun, 06 Nov 2050 08:49:37 GMT"),
                            false
                        ),
                        (Self.request("GET", "/dav/Team/s.txt"), false),
                        (Self.request("HEAD", "/dav/Team/s.txt"), true),
                        (Self.request("GET", "/api/files/Team/missing.txt"), false),
                        // PROPFIND of one item: live properties (the lane's), all (the
                        // lane's once the file's properties are kept), names, a folder,
                        // and what only the router answers (Depth 1, missing, malformed).
                        (Self.propfind("/dav/Team/s.txt", body: Self.liveProperties), false),
                        (Self.propfind("/dav/Team/", body: Self.liveProperties), false),
                        (Self.propfind("/dav/Team/s.txt"), false),
                        (Self.propfind("/dav/Team/s.txt", body: Self.allProperties), false),
                        (
                            Self.propfind("/dav/Team/s.txt", body: "<propfind xmlns=\"DAV:\"><propname/></propfind>"),
                            false
                        ),
                        (Self.propfind("/dav/Team/", depth: "1", body: Self.liveProperties), false),
                        (Self.propfind("/dav/Team/missing.txt"), false),
                        (Self.propfind("/dav/Team/s.txt", body: "<propfind"), false),
                    ]
                    var answers = first
                    for (text, head) in asked {
                        connection.blockingSend(text)
                        answers += Self.receive(connection, heads: [head]).answers
                    }
                    return answers
                }
            }
            results.append(answers)
            if smallReads { #expect(share.server.smallReadAheadTally.value >= 11) }
            share.stop()
        }
        #expect(results[0].count == 19 && results[1].count == 19)
        for (ahead, routed) in zip(results[0], results[1]) {
            #expect(ahead.withoutDate == routed.withoutDate)
            #expect(ahead.body == routed.body)
        }
        #expect(results[0].filter { $0.status == "HTTP/1.1 207 Multi-Status" }.count == 6)
        #expect(results[0].map(\.status).contains("HTTP/1.1 304 Not Modified"))
        #expect(results[0].map(\.status).contains("HTTP/1.1 206 Partial Content"))
        withExtendedLifetime(kept) {}
    }

    @Test("a file's fields kept between answers follow it: rewritten in place, replaced, renamed over")
    func keptFieldsFollowTheFile() async throws {
        let share = try ShareFixture()
        try share.write("Team/s.txt", "first text")
        try share.write("Team/other.txt", "other text")
        let path = share.root + "/Team/s.txt"
        let result = try await share.test(.live) { client in
            let port = try #require(client.port)
            return try await onOwnThread { () throws -> [Answer] in
                let connection = try RawConnection(port: port)
                func get(_ target: String = "/api/files/Team/s.txt") -> Answer? {
                    connection.blockingSend(Self.request("GET", target))
                    return Self.receive(connection, heads: [false]).answers.first
                }
                var answers: [Answer] = []
                // Twice the same (the second from what the first kept), and through WebDAV.
                answers += [get(), get(), get("/dav/Team/s.txt")].compactMap { $0 }
                // Rewritten in place, the same size, another time: same inode.
                try "other text".write(toFile: path, atomically: false, encoding: .utf8)
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: path)
                answers += [get(), get()].compactMap { $0 }
                // Replaced by a rename over it: another inode.
                try FileManager.default.removeItem(atPath: path)
                try FileManager.default.moveItem(atPath: share.root + "/Team/other.txt", toPath: path)
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: path)
                answers += [get(), get()].compactMap { $0 }
                return answers
            }
        }
        #expect(result.count == 7, "\(result)")
        guard result.count == 7 else { return }
        func field(_ answer: Answer, _ name: String) -> String? {
            answer.head.components(separatedBy: "\r\n").first { $0.hasPrefix(name + ": ") }?.dropFirst(name.count + 2)
                .description
        }
        #expect(result.allSatisfy { $0.status == "HTTP/1.1 200 OK" })
        #expect(result[0].withoutDate == result[1].withoutDate && result[1].withoutDate == result[2].withoutDate)
        #expect(result[0..<3].allSatisfy { $0.body == "first text" })
        // Each change is seen at the next answer: body, validator and date.
        #expect(result[3].body == "other text" && result[4].withoutDate == result[3].withoutDate)
        #expect(field(result[3], "ETag") != field(result[0], "ETag"))
        #expect(field(result[3], "Last-Modified") == "Sun, 09 Sep 2001 01:46:40 GMT")
        #expect(result[5].body == "other text" && result[6].withoutDate == result[5].withoutDate)
        #expect(field(result[5], "ETag") != field(result[3], "ETag"))
        #expect(share.server.smallReadAheadTally.value >= 6)
        share.stop()
    }

    /// A `PROPFIND` of `target`, with `body` (none: all properties).
    static func propfind(_ target: String, depth: String = "0", body: String = "") -> String {
        body.isEmpty
            ? request("PROPFIND", target, "Depth: \(depth)")
            : request(
                "PROPFIND", target, "Depth: \(depth)", "Content-Type: application/xml",
                "Content-Length: \(body.utf8.count)") + body
    }

    static let liveProperties =
        "<?xml version=\"1.0\"?><propfind xmlns=\"DAV:\"><prop><getetag/><getcontentlength/><resourcetype/>"
        + "<getlastmodified/></prop></propfind>"
    static let allProperties = "<?xml version=\"1.0\"?><propfind xmlns=\"DAV:\"><allprop/></propfind>"

    @Test(
        "PROPFIND of one item on the bytes: its dead properties once kept, the locks in the process, a change seen at once"
    )
    func propfindOfOneItem() async throws {
        let share = try ShareFixture()
        try share.write("Team/notes.txt", "notes")
        let set = { @Sendable (value: String) in
            let body =
                "<?xml version=\"1.0\"?><propertyupdate xmlns=\"DAV:\" xmlns:x=\"urn:x\"><set><prop><x:colour>"
                + value + "</x:colour></prop></set></propertyupdate>"
            return Self.request("PROPPATCH", "/dav/Team/notes.txt", "Content-Length: \(body.utf8.count)") + body
        }
        let result = try await share.test(.live) { client in
            let port = try #require(client.port)
            return try await onOwnThread { () throws -> [String] in
                let connection = try RawConnection(port: port)
                connection.blockingSend(set("red"))
                var seen = [Self.receive(connection, heads: [false]).answers.first?.status ?? "none"]
                // Kept once the file has settled (two seconds after its last
                // change) and a PROPFIND read them: then the lane answers.
                let before = share.server.smallReadAheadTally.value
                let start = Date()
                var kept = false
                var routed: Answer? = nil
                while Date().timeIntervalSince(start) < 20 {
                    connection.blockingSend(Self.propfind("/dav/Team/notes.txt"))
                    let answer = Self.receive(connection, heads: [false]).answers.first
                    guard let answer, answer.body.contains(">red</") else {
                        return ["no red in \(String(describing: answer))"]
                    }
                    if share.server.smallReadAheadTally.value > before {
                        // The same bytes as the router's answer just before.
                        kept = routed.map { $0.withoutDate == answer.withoutDate && $0.body == answer.body } == true
                        break
                    }
                    routed = answer
                    usleep(100_000)
                }
                seen.append(kept ? "kept" : "never answered on the bytes, or not as the router")
                // A lock taken through the router shows in the lane's answer.
                let lockInfo =
                    "<?xml version=\"1.0\"?><lockinfo xmlns=\"DAV:\"><lockscope><exclusive/></lockscope>"
                    + "<locktype><write/></locktype></lockinfo>"
                connection.blockingSend(
                    Self.request("LOCK", "/dav/Team/notes.txt", "Content-Length: \(lockInfo.utf8.count)") + lockInfo)
                let lock = Self.receive(connection, heads: [false]).answers.first
                let token = lock?.head.components(separatedBy: "\r\n").first { $0.hasPrefix("Lock-Token: <") }?
                    .dropFirst("Lock-Token: <".count).dropLast()
                let ahead = share.server.smallReadAheadTally.value
                connection.blockingSend(Self.propfind("/dav/Team/notes.txt"))
                let locked = Self.receive(connection, heads: [false]).answers.first?.body ?? ""
                seen.append(
                    token.map { locked.contains(String($0)) } == true && share.server.smallReadAheadTally.value > ahead
                        ? "lock shown" : "lock not shown: \(locked)")
                // Set again: the change time moved, so the new value shows at once.
                connection.blockingSend(
                    set("blue").replacingOccurrences(
                        of: "Content-Length", with: "If: (<\(token.map(String.init) ?? "")>)\r\nContent-Length"))
                seen.append(Self.receive(connection, heads: [false]).answers.first?.status ?? "none")
                connection.blockingSend(Self.propfind("/dav/Team/notes.txt"))
                let after = Self.receive(connection, heads: [false]).answers.first?.body ?? ""
                seen.append(after.contains(">blue</") && !after.contains(">red</") ? "blue" : "stale: \(after)")
                return seen
            }
        }
        #expect(result == ["HTTP/1.1 207 Multi-Status", "kept", "lock shown", "HTTP/1.1 207 Multi-Status", "blue"])
        share.stop()
    }

    @Test(
        "many pipelined in one write, past a batch of answers: each whole and in order, the rest to the router once the channel is full"
    )
    func manyPipelined() async throws {
        let share = try ShareFixture()
        let big = String(repeating: "0123456789abcdef", count: 256)  // 4 KiB
        try share.write("Team/a.bin", big)
        try share.write("Team/b.txt", "small text")
        let result = try await share.test(.live) { client in
            let port = try #require(client.port)
            return try await onOwnThread { () throws -> [Answer] in
                let connection = try RawConnection(port: port)
                // 60 answers, some 100 KiB: the lane gathers up to 64 KiB, writes
                // them (the channel is then full) and leaves the rest to the router.
                var text = ""
                var heads: [Bool] = []
                for index in 0..<60 {
                    switch index % 3 {
                    case 0: text += Self.request("GET", "/api/files/Team/a.bin")
                    case 1: text += Self.request("GET", "/dav/Team/b.txt")
                    default: text += Self.request("HEAD", "/api/files/Team/a.bin")
                    }
                    heads.append(index % 3 == 2)
                }
                connection.blockingSend(text)
                return Self.receive(connection, heads: heads).answers
            }
        }
        #expect(result.count == 60)
        for (index, answer) in result.enumerated() {
            #expect(answer.status == "HTTP/1.1 200 OK", "answer \(index)")
            #expect(answer.body == [big, "small text", ""][index % 3], "answer \(index)")
        }
        #expect(share.server.smallReadAheadTally.value >= 10)
        share.stop()
    }

    /// Small reads with writes and routed requests between them, all in
    /// one stream: a read after a write must see it.
    static let pipelined: [(text: String, head: Bool)] = [
        (request("GET", "/api/files/Team/s.txt"), false),
        (request("PUT", "/api/files/Team/new.txt", "Content-Length: 11") + "GET / HTTP/", false),
        (request("GET", "/api/files/Team/new.txt"), false),
        (request("HEAD", "/api/files/Team/s.txt"), true),
        (request("DELETE", "/api/files/Team/s.txt"), false),
        (request("GET", "/api/files/Team/s.txt"), false),
        (request("GET", "/api/files/Team/new.txt"), false),
        (
            request("POST", "/api/mkdir", "Content-Type: application/json", "Content-Length: 17")
                + "{\"path\":\"Team/d\"}", false
        ),
        (request("GET", "/api/files/Team/new.txt", "Range: bytes=0-2"), false),
    ]
    static let expected = [
        "200 small", "201", "200 GET / HTTP/", "200", "204", "404", "200 GET / HTTP/", "201", "206 GET",
    ]

    @Test(
        "pipelined with writes between, in one write and cut anywhere: every answer in order, each read sees the writes before it"
    )
    func pipelinedWithWrites() async throws {
        let stream = Array(Self.pipelined.map(\.text).joined().utf8)
        // Whole, byte by byte, and cut at a few places (each cut a separate send, read apart by the server).
        let cuttings: [[Int]] = [[], Array(1..<stream.count), [5, 40, 41, 120, 200, 333], [stream.count / 2]]
        // Requests answered on the lane in the cuttings whose first head is whole.
        var answeredAhead = 0
        for cuts in cuttings {
            let share = try ShareFixture()
            try share.write("Team/s.txt", "small text")
            let answers = try await share.test(.live) { client in
                let port = try #require(client.port)
                return try await onOwnThread {
                    let connection = try RawConnection(port: port)
                    var start = 0
                    for cut in cuts + [stream.count] {
                        connection.blockingSend(Array(stream[start..<cut]))
                        start = cut
                        // Let the server read each piece apart now and then.
                        if cuts.count < 10 { usleep(20_000) }
                    }
                    return Self.receive(connection, heads: Self.pipelined.map(\.head)).answers
                }
            }
            let seen = answers.map { answer in
                let code = answer.status.split(separator: " ")[1]
                let body = answer.body.prefix(15)
                return body.isEmpty || code == "201" || code == "204" || code == "404"
                    ? String(code) : "\(code) \(body.prefix(code == "206" ? 3 : 15))"
            }
            #expect(
                seen.map { $0.hasPrefix("200 small") ? "200 small" : $0 } == Self.expected, "cut at \(cuts.prefix(8))")
            // A head cut in two goes on to the decoder; the first is whole in these.
            if cuts.count < 2 { answeredAhead += share.server.smallReadAheadTally.value }
            share.stop()
        }
        // Summed over both: a kernel that cannot give the first file without
        // waiting (`openat2` or `preadv2` say EAGAIN: a page locked for
        // writeback on a busy machine) rightly sends its request to the
        // router, and all of that read goes after it (one CI run of 2026-11-28
        // had none answered here in the first cutting).
        #expect(answeredAhead >= 1)
    }

    @Test("a header cut where the rest looks like a request line is one request: no answer to the lookalike")
    func lookalike() async throws {
        let share = try ShareFixture()
        try share.write("Team/s.txt", "small text")
        try share.write("Private/diary.txt", "not to be sent")
        let answers = try await share.test(.live) { client in
            let port = try #require(client.port)
            return try await onOwnThread {
                let connection = try RawConnection(port: port)
                // The head without its empty line (one Character, "\r\n"), then a field cut after its name.
                connection.blockingSend(Self.request("GET", "/api/files/Team/s.txt").dropLast(1) + "X-A: ")
                usleep(50_000)
                connection.blockingSend("GET /api/files/Private/diary.txt HTTP/1.1\r\n\r\n")
                usleep(50_000)
                connection.blockingSend(Self.request("GET", "/api/files/Team/s.txt"))
                // The last asks to close: read until the server closes, so no answer more can hide.
                connection.blockingSend(Self.request("GET", "/api/files/Team/s.txt", "Connection: close"))
                return Self.receive(connection, heads: [false, false, false, false])
            }
        }
        #expect(answers.answers.count == 3 && answers.closed, "\(answers.answers)")
        #expect(answers.answers.allSatisfy { $0.body == "small text" }, "\(answers.answers)")
        share.stop()
    }

    /// What ``busyThenIdle(_:)`` saw. `lastGap` is how long the client let
    /// the connection rest before its last request, at most: from the
    /// previous answer (or from connecting) to the end of the send.
    typealias Outcome = (answered: Int, endedEarly: Bool, busyFor: Double, closedAfter: Double?, lastGap: Double)

    /// Three seconds of small reads on one connection, then idle until it closes.
    static func busyThenIdle(_ share: ShareFixture) async throws -> Outcome {
        try await share.test(.live) { client in
            let port = try #require(client.port)
            return try await onOwnThread { () -> Outcome in
                let connection = try RawConnection(port: port)
                // Three seconds of small reads, one every 100 ms: three
                // times Hummingbird's idle bound, five keep-alive bounds.
                var answered = 0
                var endedEarly = false
                let start = Date()
                var lastAnswer = start
                var lastGap = 0.0
                while Date().timeIntervalSince(start) < 3 {
                    connection.blockingSend(Self.request("GET", "/api/files/Team/s.txt"))
                    lastGap = Date().timeIntervalSince(lastAnswer)
                    let (answers, closed) = Self.receive(connection, heads: [false])
                    if closed || answers.first?.body != "small text" {
                        endedEarly = true
                        break
                    }
                    answered += 1
                    lastAnswer = Date()
                    usleep(100_000)
                }
                // Then idle: closed at the keep-alive bound after the last answer (and well before 20 s).
                let (_, closed) = Self.receive(connection, heads: [false])
                return (
                    answered, endedEarly, lastAnswer.timeIntervalSince(start),
                    closed ? Date().timeIntervalSince(lastAnswer) : nil, lastGap
                )
            }
        }
    }

    @Test(
        "deadlines: an idle connection is closed at the keep-alive bound; one busy with small reads past the idle bound is not"
    )
    func deadlines() async throws {
        func serving() throws -> ShareFixture {
            let share = try ShareFixture(
                limits: ConnectionLimits(keepAliveTimeout: .milliseconds(600), bodyIdleTimeout: .seconds(1)))
            try share.write("Team/s.txt", "small text")
            return share
        }
        var share = try serving()
        var result = try await Self.busyThenIdle(share)
        // Tried again, on a new server, when the connection ended before its
        // first answer, or after the client itself let it rest half the
        // keep-alive bound or more (three times the 100 ms it means to): the
        // server rightly closes a connection idle for the bound, and a client
        // thread on a CI machine busy with the rest of the suite was held up
        // that long, once before its first request and once (0.8 s for two
        // rounds) between two. A server that closes a connection resting
        // less than that still fails here.
        for _ in 0..<2 where result.endedEarly && (result.answered == 0 || result.lastGap >= 0.3) {
            share.stop()
            share = try serving()
            result = try await Self.busyThenIdle(share)
        }
        // The three seconds ran out with the connection open and every answer
        // right, the last of them past twice Hummingbird's idle bound. (How
        // many rounds fit in them depends on the machine's load: a loaded CI
        // machine fitted 17 once and 9 another time, so the time the
        // connection was kept busy is what is checked, not a count.)
        #expect(
            !result.endedEarly,
            "the connection ended after \(result.answered) answers, \(result.lastGap) s after the last")
        #expect(
            result.answered >= 3 && result.busyFor >= 2,
            "\(result.answered) answered, the last \(result.busyFor) s after the first request")
        let closedAfter = try #require(result.closedAfter)
        #expect(closedAfter >= 0.5 && closedAfter < 5, "closed \(closedAfter) s after the last answer")
        // Most went by the lane (one now and then goes to the router, so
        // Hummingbird's idle bound sees the connection busy).
        #expect(
            share.server.smallReadAheadTally.value * 2 >= result.answered,
            "\(share.server.smallReadAheadTally.value) of \(result.answered) answered by the lane")
        share.stop()
    }

    @Test("a users file: a connection's remembered sign-in ends when the password changes, at its next request")
    func rememberedSignInEnds() async throws {
        let folder = try TemporaryFolder()
        let share = try SignInLiveTests.share(in: folder)
        let usersFile = folder("users.json")
        let reader = "Basic " + Data("reader:reader-pw".utf8).base64EncodedString()
        let request = "GET /api/files/Team/plan.txt HTTP/1.1\r\nHost: x\r\nAuthorization: \(reader)\r\n\r\n"
        let result = try await share.test(.live) { client in
            let port = try #require(client.port)
            return try await onOwnThread { () throws -> (before: [String], after: String?) in
                let connection = try RawConnection(port: port)
                // The first through the router (bcrypt); the rest on the bytes, remembered.
                var before: [String] = []
                for _ in 0..<5 {
                    connection.blockingSend(request)
                    before.append(Self.receive(connection, heads: [false]).answers.first?.status ?? "none")
                }
                var directory = try #require(try UsersFile.read(usersFile))
                try directory.setPassword("reader", passwordHash: "another hash")
                try UsersFile.write(directory, to: usersFile)
                // The users file is looked at once a second: the same connection asks until refused.
                let start = Date()
                var after: String? = nil
                while Date().timeIntervalSince(start) < 10 {
                    connection.blockingSend(request)
                    let status = Self.receive(connection, heads: [false]).answers.first?.status ?? "none"
                    if status != "HTTP/1.1 200 OK" {
                        after = status
                        break
                    }
                    usleep(50_000)
                }
                return (before, after)
            }
        }
        #expect(result.before == Array(repeating: "HTTP/1.1 200 OK", count: 5))
        #expect(result.after == "HTTP/1.1 401 Unauthorized")
        #expect(share.server.smallReadAheadTally.value >= 4)
        share.stop()
    }
}
