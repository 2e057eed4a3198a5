import Accounts
import ChangeLog
import DocumentTypes
import FileWatching
import FileshareTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// A shared temporary folder and a server over it.
final class ShareFixture: @unchecked Sendable {
    let root: String
    let server: ShareServer
    /// The changes' JSON lines, as `fileshare serve` prints them.
    let printed = PrintedLines()
    static let authorization = "Basic " + Data("alice:secret".utf8).base64EncodedString()

    init(
        readOnly: Bool = false, maxUpload: Int64? = nil, credentials: Bool = true, root: String? = nil,
        acceptedTypes: AcceptedTypes? = nil, misleadingNames: MisleadingNames = .refuse,
        changeLog: FileChangeLog.Options = FileChangeLog.Options(), limits: ConnectionLimits = ConnectionLimits(),
        users: String? = nil, signInLimits: SignInThrottle.Limits = SignInThrottle.Limits(),
        history: HistoryOptions = HistoryOptions(), smallReads: Bool = true
    ) throws {
        if let root {
            self.root = root
        } else {
            var template = Array("/tmp/fileshare-share-XXXXXX".utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
            self.root = String(cString: made!)
        }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let printed = self.printed
        var configuration = ShareConfiguration(
            root: self.root, port: 0, credentials: credentials ? .init(user: "alice", password: "secret") : nil,
            readOnly: readOnly, maxUploadBytes: maxUpload, acceptedTypes: acceptedTypes,
            misleadingNames: misleadingNames,
            observerOptions: ObserverOptions(settleTime: .milliseconds(100), latency: .zero), changeLog: changeLog,
            limits: limits)
        // Real bcrypt, at its lowest cost: tests sign in many times.
        configuration.usersFile = users
        configuration.passwordHasher = BcryptHasher(cost: 4)
        configuration.signInLimits = signInLimits
        configuration.history = history
        configuration.smallReadsOnEventLoop = smallReads
        server = try ShareServer(
            configuration: configuration,
            logger: logger,
            changePrinter: { line in printed.append(line) })
        // The server starts nothing when made; the tests through the router need the observer running.
        try server.start()
    }

    /// Stops the server's observer and closes its change log, as a server
    /// that stops does: another may then open the folder.
    func stop() { server.stop() }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    func write(_ relative: String, _ text: String) throws {
        let full = path(relative)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try writeFile(text.utf8, to: full)
    }

    func read(_ relative: String) -> String? {
        FileManager.default.contents(atPath: path(relative)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The visible content of the folder (the server's private folder left out).
    func visibleTree() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var result: [String] = []
        while let item = enumerator?.nextObject() as? String {
            if item.hasPrefix(".fileshare") { continue }
            result.append(item)
        }
        return result.sorted()
    }

    /// What the staging folder holds (should be empty once uploads end).
    func stagingContent() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: root + "/.fileshare/staging")) ?? []
    }

    func test<T>(
        _ setup: TestingSetup = .router, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        try await server.application().test(setup, body)
    }
}

/// Lines printed by the server, kept for a test to read.
final class PrintedLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// Every line so far.
    var all: [String] { lines.withLock { $0 } }
}

extension TestClientProtocol {
    /// A request with the fixture's credentials.
    @discardableResult
    func request(
        _ uri: String, _ method: HTTPRequest.Method = .get, headers: HTTPFields = [:], body: String? = nil,
        authorized: Bool = true
    ) async throws -> TestResponse {
        var headers = headers
        if authorized { headers[.authorization] = ShareFixture.authorization }
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
}

/// A raw TCP connection to the live server, for what HTTP clients will not send.
///
/// Its sends and receives block, so they run on a thread of their own
/// (``onOwnThread(_:)``): on the cooperative pool they would hold a thread the
/// in-process server needs to answer them. Each times out after 20 seconds.
final class RawConnection: @unchecked Sendable {
    // @unchecked: a test uses its connection from one task at a time; `fd`
    // changes only in `disconnect`.
    private(set) var fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw CocoaError(.fileReadUnknown) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { disconnect() }

    /// Closes the connection (once: a second close could hit a descriptor reused since).
    func disconnect() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    // Blocking, for code already on a thread of its own (`onOwnThread`).
    func blockingSend(_ text: String) { blockingSend(Array(text.utf8)) }

    func blockingSend(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads until the peer closes or `until` appears (or the timeout).
    func blockingReceive(until marker: String? = nil) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data += buffer[..<count]
            if let marker, String(decoding: data, as: UTF8.self).contains(marker) { break }
        }
        return String(decoding: data, as: UTF8.self)
    }

    // The same from async code: on a thread of its own, never on the cooperative pool.
    func send(_ text: String) async { await onOwnThread { self.blockingSend(text) } }

    func send(_ bytes: [UInt8]) async { await onOwnThread { self.blockingSend(bytes) } }

    func receive(until marker: String? = nil) async -> String {
        await onOwnThread { self.blockingReceive(until: marker) }
    }
}
