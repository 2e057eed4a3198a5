import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Slow clients: each opens a connection, sends the start of a request and
/// then one more byte of its header every `interval`, never finishing it,
/// until the server answers or closes (or `lifetime` runs out, or ``stop()``).
/// One thread drives them all with non-blocking sockets and `poll`.
final class DrippingClients: Sendable {
    /// What the clients saw so far.
    struct Tally: Sendable {
        /// Connections the server has not closed.
        var open: Int
        /// Connections that got `408 Request Timeout` before being closed.
        var answered408: Int
        /// When each closed connection was closed, after the clients started.
        var closedAfter: [Duration]
    }

    private struct State {
        var descriptors: [Int32]
        var answered: Set<Int32> = []
        var closedAfter: [Duration] = []
        var stopped = false
    }

    private let state: Mutex<State>
    private let started = ContinuousClock.now

    /// Connects `count` clients to `port` on the loopback address and starts dripping.
    init(port: Int, count: Int, interval: Duration = .seconds(1), lifetime: Duration = .seconds(120)) throws {
        var descriptors: [Int32] = []
        for _ in 0..<count {
            let fd: Int32
            do {
                fd = try Self.connect(port: port)
            } catch {
                for fd in descriptors { close(fd) }
                throw error
            }
            Self.sendAll(fd, Array("GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ".utf8))
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            descriptors.append(fd)
        }
        state = Mutex(State(descriptors: descriptors))
        Thread.detachNewThread { [self] in drip(interval: interval, until: started.advanced(by: lifetime)) }
    }

    var tally: Tally {
        state.withLock {
            Tally(open: $0.descriptors.count, answered408: $0.answered.count, closedAfter: $0.closedAfter)
        }
    }

    /// Ends the clients: their thread closes every connection still open.
    /// Only that thread touches the sockets, so none is used once closed
    /// (its number may belong to another test by then).
    func stop() {
        state.withLock { $0.stopped = true }
    }

    private func drip(interval: Duration, until end: ContinuousClock.Instant) {
        var nextDrip = ContinuousClock.now
        while ContinuousClock.now < end {
            let descriptors = state.withLock { $0.stopped ? nil : $0.descriptors }
            guard let descriptors, !descriptors.isEmpty else { break }
            if ContinuousClock.now >= nextDrip {
                for fd in descriptors {
                    var byte = UInt8(ascii: "a")
                    _ = send(fd, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                nextDrip = nextDrip.advanced(by: interval)
            }
            var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let wait = max(0, (nextDrip - ContinuousClock.now).milliseconds)
            guard poll(&polled, nfds_t(polled.count), Int32(min(wait, 100))) > 0 else { continue }
            for entry in polled where entry.revents != 0 {
                receive(entry.fd)
            }
        }
        state.withLock { state in
            for fd in state.descriptors { close(fd) }
            state.descriptors = []
            state.stopped = true
        }
    }

    /// Reads what the server sent on `fd`; closes it at the end of the stream.
    private func receive(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
        state.withLock { state in
            guard let index = state.descriptors.firstIndex(of: fd) else { return }
            if count > 0 {
                if String(decoding: buffer[..<count], as: UTF8.self).hasPrefix("HTTP/1.1 408 ") {
                    state.answered.insert(fd)
                }
                return
            }
            // The end of the stream, or a reset.
            state.descriptors.remove(at: index)
            state.closedAfter.append(ContinuousClock.now - started)
            close(fd)
        }
    }

    static func connect(port: Int, receiveTimeout: Int = 30) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let failure = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return }
            offset += sent
        }
    }
}

/// One whole request on a new connection, as an ordinary client sends it:
/// the status line of the answer (empty if none came within
/// `receiveTimeout` seconds) and how long it took.
func timedRequest(port: Int, path: String = "/api/info", receiveTimeout: Int = 30) -> (
    status: String, elapsed: Duration
) {
    let start = ContinuousClock.now
    guard let fd = try? DrippingClients.connect(port: port, receiveTimeout: receiveTimeout) else {
        return ("", ContinuousClock.now - start)
    }
    defer { close(fd) }
    DrippingClients.sendAll(fd, Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !received.contains(UInt8(ascii: "\n")) {
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        received += buffer[..<count]
    }
    let text = String(decoding: received, as: UTF8.self)
    let status = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    return (status, ContinuousClock.now - start)
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// CPU time (user and system) a process has used, from `/proc/PID/stat`.
func cpuTime(of pid: Int32) -> Duration? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = text.lastIndex(of: ")")
    else { return nil }
    // After the command's name: state is field 3, utime 14 and stime 15.
    let fields = text[text.index(after: end)...].split(separator: " ")
    guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
    let ticks = Int64(sysconf(Int32(_SC_CLK_TCK)))
    return .milliseconds((user + system) * 1000 / ticks)
}

/// How many descriptors a process has open.
func openDescriptors(of pid: Int32) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
}
