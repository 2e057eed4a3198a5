import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// The short ways of small requests: a file read from the kernel's caches
/// without a trip to the thread pool, and each connection's requests on its
/// event loop. Whatever way a request takes, the answer is the same.
@Suite("Small requests", .timeLimit(.minutes(10)))
struct SmallRequestTests {
    static let logger = Logger(label: "test")

    /// 4 KiB that differ at every offset that matters to a range.
    static let small: [UInt8] = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }

    @Test("a cached read gives the whole file, says when it grew, and when it must wait")
    func cachedRead() throws {
        let temporary = try TemporaryFolder()
        let file = try temporary.write(SmallRequestTests.small, to: "s.bin")
        let fd = open(file, O_RDONLY)
        defer { close(fd) }
        // Just written: in the page cache.
        guard case .whole(let buffer) = FileResponses.readCached(fd, size: 4096) else {
            Issue.record("a file just written is not read whole from the cache")
            return
        }
        #expect(Array(buffer.readableBytesView) == SmallRequestTests.small)
        // With room kept before the content: the same content, after the room.
        guard case .whole(let roomy) = FileResponses.readCached(fd, size: 4096, headroom: 100) else {
            Issue.record("a file just written is not read whole from the cache, with room before it")
            return
        }
        #expect(roomy.readerIndex == 100 && Array(roomy.readableBytesView) == SmallRequestTests.small)
        // Bigger than its stat said: grown since.
        guard case .changed = FileResponses.readCached(fd, size: 4000) else {
            Issue.record("a file longer than its stat is not seen as changed")
            return
        }
        // Shorter than its stat said: the waiting read decides (it sends it as it is read).
        guard case .wouldWait = FileResponses.readCached(fd, size: 5000) else {
            Issue.record("a short read is not left to the waiting read")
            return
        }
    }

    @Test(
        "opening with and without the caches gives the same file",
        arguments: [(4096, true), (4096, false), (300_000, true), (0, true)])
    func sameEitherWay(size: Int, wantContent: Bool) async throws {
        let temporary = try TemporaryFolder()
        let folder = try SharedFolder(rootPath: temporary.path, logger: SmallRequestTests.logger)
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try temporary.write(bytes, to: "f.bin")
        let path = try SharePath(plain: "f.bin")
        let open: @Sendable () throws -> Int32 = { try folder.open(path, flags: O_RDONLY | O_NONBLOCK) }
        // Opened once the waiting way first, so the names are in the kernel's cache.
        let waiting = try await FileResponses.opened(path, wantContent: wantContent, open: open, openCached: nil)
        defer { close(waiting.fd) }
        let cached = try await FileResponses.opened(
            path, wantContent: wantContent, open: open,
            openCached: { try folder.openCached(path, flags: O_RDONLY | O_NONBLOCK) })
        defer { close(cached.fd) }
        #expect(cached.metadata.entityTag == waiting.metadata.entityTag)
        #expect(cached.metadata.size == Int64(size))
        #expect(
            cached.content.map { Array($0.readableBytesView) } == waiting.content.map { Array($0.readableBytesView) })
        let expectContent = wantContent && Int64(size) <= FileResponses.smallFileBytes
        #expect(cached.content.map { Array($0.readableBytesView) } == (expectContent ? bytes : nil))
    }

    @Test("the cached open keeps the path rules: no symbolic link is followed, out or inside")
    func cachedOpenKeepsRules() throws {
        let temporary = try TemporaryFolder()
        let outside = try TemporaryFolder()
        let secret = try outside.write("secret", to: "secret.txt")
        let folder = try SharedFolder(rootPath: temporary.path, logger: SmallRequestTests.logger)
        try temporary.write("inside", to: "inside.txt")
        #expect(symlink(secret, temporary("out")) == 0)
        #expect(symlink("inside.txt", temporary("in")) == 0)
        let out = try SharePath(plain: "out")
        let expected: FolderError.Code
        do throws(FolderError) {
            close(try folder.open(out))
            Issue.record("the waiting open followed a link out")
            return
        } catch {
            expected = error.code
        }
        // The names are now cached; the cached open refuses the same way
        // (and where it would wait, the waiting open refuses it).
        do throws(FolderError) {
            if let fd = try folder.openCached(out) {
                close(fd)
                Issue.record("the cached open followed a link out")
            }
        } catch {
            #expect(error.code == expected)
        }
        // Nothing there: not found, or (a name never looked up is not in the
        // cache) left to the waiting open; never a descriptor.
        let missing = try SharePath(plain: "missing.txt")
        do throws(FolderError) {
            #expect(try folder.openCached(missing) == nil)
        } catch {
            #expect(error.code == .notFound)
        }
        // A link that stays inside is not followed either, by either open.
        let inPath = try SharePath(plain: "in")
        #expect(throws: FolderError.self) { close(try folder.open(inPath)) }
        do throws(FolderError) {
            if let fd = try folder.openCached(inPath) {
                close(fd)
                Issue.record("the cached open followed a link inside")
            }
        } catch {
            #expect(error.code == .symbolicLink)
        }
        let fd = try #require(try folder.openCached(try SharePath(plain: "inside.txt")))
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(read(fd, &buffer, 16) == 6)
    }

    @Test("GET, HEAD, 304 and ranges of a small file answer the same from the caches and from the disk")
    func sameAnswers() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let file = share.path("s.bin")
            try writeFile(Data(SmallRequestTests.small), to: file)
            try await share.test(.live) { client in
                var first: [String] = []
                for round in 0..<2 {
                    if round == 1 {
                        // Out of the page cache (where the file system lets it go): the waiting way.
                        let fd = open(file, O_RDONLY)
                        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
                        close(fd)
                    }
                    let get = try await client.request("/api/files/s.bin")
                    #expect(get.status == .ok)
                    #expect(Array(get.body.readableBytesView) == SmallRequestTests.small)
                    let etag = try #require(get.headers[.eTag])
                    #expect(get.headers[.contentLength] == "4096")
                    #expect(get.headers[.contentType] == "application/octet-stream")
                    #expect(get.headers[.cacheControl] == "no-cache")
                    #expect(get.headers[.lastModified] != nil)
                    #expect(get.headers[.contentSecurityPolicy]?.hasPrefix("sandbox;") == true)
                    let head = try await client.request("/api/files/s.bin", .head)
                    #expect(head.status == .ok)
                    #expect(head.body.readableBytes == 0)
                    #expect(head.headers[.eTag] == etag)
                    #expect(head.headers[.contentLength] == "4096")
                    let notModified = try await client.request("/api/files/s.bin", headers: [.ifNoneMatch: etag])
                    #expect(notModified.status == .notModified)
                    #expect(notModified.body.readableBytes == 0)
                    #expect(notModified.headers[.eTag] == etag)
                    let since = try #require(get.headers[.lastModified])
                    let unchanged = try await client.request("/api/files/s.bin", headers: [.ifModifiedSince: since])
                    #expect(unchanged.status == .notModified)
                    let range = try await client.request("/api/files/s.bin", headers: [.range: "bytes=10-19"])
                    #expect(range.status == .partialContent)
                    #expect(range.headers[.contentRange] == "bytes 10-19/4096")
                    #expect(Array(range.body.readableBytesView) == Array(SmallRequestTests.small[10...19]))
                    let dav = try await client.request("/dav/s.bin")
                    #expect(dav.status == .ok)
                    #expect(dav.headers[.eTag] == etag)
                    #expect(Array(dav.body.readableBytesView) == SmallRequestTests.small)
                    let missing = try await client.request("/dav/none.bin")
                    #expect(missing.status == .notFound)
                    let folderGet = try await client.request("/api/files/.")
                    #expect(folderGet.status.code >= 400)
                    let answers = [get, head, notModified, unchanged, range, dav].map { answer in
                        "\(answer.status.code) "
                            + answer.headers.filter { $0.name != .date }.map(\.description)
                            .joined(separator: "|")
                    }
                    if round == 0 { first = answers } else { #expect(answers == first) }
                }
            }
        }
    }

    @Test("pipelined requests on one connection are answered in order")
    func pipelined() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("a.txt", "alpha-content")
            try share.write("b.txt", "bravo-content")
            try share.write("c.txt", "charlie-content")
            try await share.test(.live) { client in
                let port = try #require(client.port)
                let auth = "Authorization: \(ShareFixture.authorization)\r\n"
                // Four requests in one write; the last answer's body ends the reading. On a
                // thread of its own: a blocking read must not hold the cooperative pool the
                // server's accept loop runs on.
                let answer = try await onOwnThread { () throws -> String in
                    let connection = try RawConnection(port: port)
                    connection.blockingSend(
                        "GET /api/files/a.txt HTTP/1.1\r\nHost: x\r\n\(auth)\r\n"
                            + "HEAD /dav/c.txt HTTP/1.1\r\nHost: x\r\n\(auth)\r\n"
                            + "GET /dav/b.txt HTTP/1.1\r\nHost: x\r\n\(auth)\r\n"
                            + "GET /api/files/c.txt HTTP/1.1\r\nHost: x\r\n\(auth)\r\n")
                    return connection.blockingReceive(until: "charlie-content")
                }
                #expect(answer.components(separatedBy: "HTTP/1.1 200 OK").count == 5, "\(answer)")
                let alpha = try #require(answer.range(of: "alpha-content"))
                let bravo = try #require(answer.range(of: "bravo-content"))
                let charlie = try #require(answer.range(of: "charlie-content"))
                #expect(alpha.upperBound < bravo.lowerBound && bravo.upperBound < charlie.lowerBound)
                // The HEAD answer (between alpha and bravo) has no body.
                #expect(answer.components(separatedBy: "charlie-content").count == 2)
                // All four were answered on the event loop, flushed once their read was done.
                #expect(share.server.smallReadTally.value == 4)
            }
        }
    }

    @Test("a connection's requests run on its event loop, also after a trip to the thread pool")
    func onTheEventLoop() async throws {
        let router = Router()
        router.get("/where") { _, _ -> String in
            let before = MultiThreadedEventLoopGroup.currentEventLoop != nil
            _ = await runBlocking { 1 }
            let after = MultiThreadedEventLoopGroup.currentEventLoop != nil
            return "\(before) \(after)"
        }
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in EventLoopChildChannel(base: HTTP1Channel(responder: responder)) },
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            for _ in 0..<3 {
                let answer = try await client.execute(uri: "/where", method: .get)
                #expect(String(buffer: answer.body) == "true true")
            }
        }
    }
}
