// nio-floor FOLDER PORT
//
// A reference for the small-requests benchmark, not a server to use: the
// least a SwiftNIO server does to answer `GET /NAME` with the file NAME
// under FOLDER, on 127.0.0.1. Its bytes are scanned for the end of the
// head, the file is opened, stat'ed and read into the answer's buffer, the
// answer written and flushed once the read is answered — the same system
// calls as fileshare's small reads' lane, on the same event loops, with
// none of its HTTP types, rights, audit, metrics or validators.
//
// Beside fileshare and nginx in one run, it says how much of the CPU an
// answer costs is NIO's and the kernel's, and how much is fileshare's own
// path (README, "Small requests").
//
// It answers a GET of a regular file (200), a name it cannot open or that
// is not a file (404), a name with a `..` part or a NUL (400); anything
// else, or a head over 8 KiB, gets a 400 and the connection is closed.

#if canImport(Glibc)
    import Glibc
#endif
import NIOCore
import NIOPosix

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[2]) else {
    FileHandleOutput.standardError("usage: nio-floor FOLDER PORT\n")
    exit(2)
}
let folder = open(arguments[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC)
guard folder >= 0 else {
    FileHandleOutput.standardError("nio-floor: cannot open the folder \(arguments[1]): errno \(errno)\n")
    exit(1)
}

enum FileHandleOutput {
    static func standardError(_ text: String) {
        var text = text
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}

/// The `Date` field's value, worked out again once a second.
struct DateField {
    private var second = 0
    private(set) var value = ""

    mutating func now() -> String {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        if clock.tv_sec != second {
            second = clock.tv_sec
            var seconds = time_t(second)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            value = "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
                + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
        }
        return value
    }
}

final class Floor: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let longestHead = 8 * 1024
    /// What a request for a name starts with: made once, not an allocation per request.
    static let getPrefix = Array("GET /".utf8)
    /// Bytes of a head not whole yet.
    private var pending: ByteBuffer?
    private var unflushed = false
    private var date = DateField()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if var held = pending.take() {
            held.writeBuffer(&buffer)
            buffer = held
        }
        while buffer.readableBytes > 0 {
            guard let (length, name) = Self.request(in: buffer) else {
                if buffer.readableBytes > Self.longestHead {
                    refuse(context: context)
                } else {
                    pending = buffer
                }
                return
            }
            buffer.moveReaderIndex(forwardBy: length)
            guard let name else {
                refuse(context: context)
                return
            }
            context.write(wrapOutboundOut(answer(name, allocator: context.channel.allocator)), promise: nil)
            unflushed = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
    }

    /// The length of the head at the front of `buffer` and the name a GET
    /// asks for (`nil` for another request); `nil` while the head is not whole.
    private static func request(in buffer: ByteBuffer) -> (Int, String?)? {
        buffer.withUnsafeReadableBytes { bytes -> (Int, String?)? in
            guard bytes.count >= 4 else { return nil }
            var end = -1
            for i in 0..<(bytes.count - 3)
            where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
                end = i + 4
                break
            }
            guard end > 0 else { return nil }
            let get = Self.getPrefix
            guard end > get.count, bytes.prefix(get.count).elementsEqual(get) else { return (end, nil) }
            var stop = get.count
            while stop < end && bytes[stop] != UInt8(ascii: " ") { stop += 1 }
            return (end, String(decoding: UnsafeRawBufferPointer(rebasing: bytes[get.count..<stop]), as: UTF8.self))
        }
    }

    private func answer(_ name: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        if name.isEmpty || name.utf8.contains(0) || name.split(separator: "/").contains("..") {
            return short("400 Bad Request", allocator: allocator)
        }
        let file = openat(folder, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { return short("404 Not Found", allocator: allocator) }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            return short("404 Not Found", allocator: allocator)
        }
        let size = Int(status.st_size)
        var out = allocator.buffer(capacity: size + 256)
        out.writeString(
            "HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\nContent-Type: application/octet-stream\r\n"
                + "Date: \(date.now())\r\nServer: nio-floor\r\n\r\n")
        let read = out.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { room in
            max(0, pread(file, room.baseAddress, size, 0))
        }
        // A file cut short while read: the length said cannot be kept.
        if read != size { return short("500 Internal Server Error", allocator: allocator) }
        return out
    }

    private func short(_ status: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        var out = allocator.buffer(capacity: 128)
        out.writeString("HTTP/1.1 \(status)\r\nContent-Length: 0\r\nDate: \(date.now())\r\nServer: nio-floor\r\n\r\n")
        return out
    }

    private func refuse(context: ChannelHandlerContext) {
        // Written at once by the flush (the socket takes a short answer whole), then closed.
        context.writeAndFlush(wrapOutboundOut(short("400 Bad Request", allocator: context.channel.allocator)), promise: nil)
        context.close(promise: nil)
        unflushed = false
    }
}

do {
    let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Floor()) }
        }
        .bind(host: "127.0.0.1", port: port).wait()
    print("nio-floor at http://127.0.0.1:\(channel.localAddress?.port ?? port)/")
    try channel.closeFuture.wait()
} catch {
    FileHandleOutput.standardError("nio-floor: \(error)\n")
    exit(1)
}
