import HTTPTypes
import NIOCore
import NIOHTTP1

/// Answers small reads on a connection's bytes, ahead of NIO's HTTP/1
/// decoder and encoder: the lane a request takes when nothing else is under
/// way on its connection.
///
/// The profile of a small GET answered by ``SmallReadHandler`` (after the
/// decoder) put a third of the server's time in what carried the request
/// and its answer rather than in answering: the decoder making an
/// `HTTPRequestHead`, the conversion to `HTTPTypes`, six handlers each way,
/// the answer converted back and encoded. Here a request whose head is
/// whole in the bytes read and strict (``RequestHeadScan``) is given to
/// ``SmallReads/answer(_:client:)`` — the same authentication, rights,
/// path rules, validators, audit and metrics — and its answer is written as
/// bytes, as NIO's encoder writes it (the same status line, fields in the
/// same order, the same framing). Whatever it does not answer goes on to
/// the decoder unchanged, as does everything after it in that read.
///
/// It answers only where that cannot change what the decoder sees or the
/// order of answers: the decoder is between messages with nothing held
/// back (``RequestFraming`` follows every byte passed on, and the
/// connection is the decoder's alone for good once a head is not strict),
/// every request passed on has been answered (``ResponseEnds``), and the
/// connection can take more to write (a client that pipelines requests and
/// reads nothing meets the decoder's back-pressure, not a growing buffer).
///
/// The handlers it passes by are told what they must know: the connection
/// deadlines that a request came and was answered
/// (``ConnectionDeadlineHandler/requestAnsweredAhead(context:now:)``); and
/// Hummingbird's idle bound, which sees only what passes through it, gets a
/// request passed on at least every `routeAtLeastEvery`, so a connection
/// busy with small reads is never taken for an idle one.
///
/// A read whose bytes it answered whole stops here, read-complete
/// included, and the lane asks for the next read itself: the handlers
/// behind saw nothing since they last asked for one, so their wish stands.
/// Carrying both events through the dozen handlers behind (one way the
/// read-complete, the other way the read that `autoRead` sends from the
/// tail) cost a small GET about a tenth of its time in user space, for
/// nothing done. The deadlines, which need the read-complete, are told
/// directly (``ConnectionDeadlineHandler/readCompleted(context:)``).
final class SmallReadLane: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Responses written by the handlers behind the encoder, counted by
    /// their ends (``ResponseEndCounter``, between the encoder and the decoder).
    final class ResponseEnds {
        var count = 0
    }

    private let reads: SmallReads
    private let ends: ResponseEnds
    private let routeAtLeastEvery: TimeAmount
    private let deadlines: (handler: ConnectionDeadlineHandler, context: ChannelHandlerContext)?
    private var framing = RequestFraming()
    private var client = SmallReads.Client(address: "unknown")
    /// When a request last went on to the router (or the connection began).
    private var lastRouted = NIODeadline.now()
    /// Answers written in the read under way, not yet flushed (flushed once
    /// the read completes, so requests pipelined in one read are answered in one write).
    private var unflushed = false
    /// The answers of the read under way not yet written, one after another
    /// (``batchBytes`` at most): written once the read is answered, or before
    /// anything goes on to the decoder. Pipelined answers copied together
    /// go down the pipeline as one write; each written alone cost NIO's
    /// outbound handlers and pending writes about 1.3 µs of user time,
    /// a tenth of a pipelined answer's (`perf`), where the copy of a small
    /// file's answer costs a tenth of that.
    private var batch: ByteBuffer?
    /// The most bytes of answers gathered before they are written: the
    /// writability checked before each answer is the channel's once they are.
    static let batchBytes = 64 * 1024
    /// Where each answer's head is put together (``bytes(of:scratch:allocator:)``).
    private var scratch: [UInt8] = []
    /// The handlers behind asked for a read, and no byte has gone on to them since.
    private var readWantedBehind = false
    /// Bytes went on to the handlers behind in the read under way.
    private var passedOnInRead = false

    init(
        reads: SmallReads, ends: ResponseEnds, routeAtLeastEvery: TimeAmount,
        deadlines: (handler: ConnectionDeadlineHandler, context: ChannelHandlerContext)?
    ) {
        self.reads = reads
        self.ends = ends
        self.routeAtLeastEvery = routeAtLeastEvery
        self.deadlines = deadlines
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if let remote = context.channel.remoteAddress { client.address = remote.ipAddress ?? "?" }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Answers gathered are written whatever takes the lane out.
        writeBatch(context: context)
        if unflushed { context.flush() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if framing.isOpaque {
            passOn(data, context: context)
            return
        }
        var buffer = unwrapInboundIn(data)
        if ends.count > framing.heads {
            // An answer to no request passed on whole (a 408 for a head cut
            // short, say): the connection is closing; leave it to the decoder.
            framing.stopFollowing()
            passOn(data, context: context)
            return
        }
        if framing.isAtBoundary, ends.count == framing.heads {
            answerAhead(&buffer, context: context)
            guard buffer.readableBytes > 0 else { return }
        }
        buffer.withUnsafeReadableBytes { framing.consume($0) }
        lastRouted = .now()
        passOn(wrapInboundOut(buffer), context: context)
    }

    private func passOn(_ data: NIOAny, context: ChannelHandlerContext) {
        // The answers before it leave before the router's to it.
        writeBatch(context: context)
        passedOnInRead = true
        readWantedBehind = false
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writeBatch(context: context)
        // Answers written, nothing passed on: the read was answered whole.
        let answeredWhole = unflushed && !passedOnInRead
        passedOnInRead = false
        if unflushed {
            unflushed = false
            context.flush()
        }
        guard answeredWhole else {
            context.fireChannelReadComplete()
            return
        }
        // Nothing went on: the handlers behind have nothing to complete,
        // and still want the read they asked for (``SmallReadLane``).
        if let deadlines { deadlines.handler.readCompleted(context: deadlines.context) }
        if readWantedBehind { context.read() }
    }

    func read(context: ChannelHandlerContext) {
        readWantedBehind = true
        context.read()
    }

    /// Answers the requests at the front of `buffer` that it can, one after
    /// another, and moves the buffer past them.
    private func answerAhead(_ buffer: inout ByteBuffer, context: ChannelHandlerContext) {
        while buffer.readableBytes > 0, context.channel.isWritable {
            // One clock reading for the request: the routing bound and the deadlines.
            let now = NIODeadline.now()
            if now - lastRouted >= routeAtLeastEvery { return }
            var answered: (length: Int, answer: SmallReads.Answer)? = buffer.withUnsafeReadableBytes { bytes in
                guard let end = RequestHeadScan.headEnd(in: bytes, from: 0) else { return nil }
                let head = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
                // A body (a PROPFIND's) is answered only when it came whole with its head.
                guard let (request, bodyLength) = Self.request(head), bodyLength <= bytes.count - end,
                    let answer = reads.answer(
                        request, body: UnsafeRawBufferPointer(rebasing: bytes[end..<end + bodyLength]),
                        client: &client)
                else {
                    return nil
                }
                return (end + bodyLength, answer)
            }
            // Moved out, not copied: the body's buffer must be the answer's
            // alone for its head to be written in front of it (``bytes(of:scratch:allocator:)``).
            guard let (length, answer) = answered.take() else { return }
            buffer.moveReaderIndex(forwardBy: length)
            let allocator = context.channel.allocator
            let bytes = Self.bytes(of: consume answer, scratch: &scratch, allocator: allocator)
            if let full = gather(bytes, allocator: allocator) {
                context.write(wrapOutboundOut(full), promise: nil)
                unflushed = true
            }
            reads.answeredAhead.add()
            if let deadlines { deadlines.handler.requestAnsweredAhead(context: deadlines.context, now: now) }
        }
    }

    /// Adds `answer` to ``batch``: the first of a read is kept as it is
    /// (no copy when it is the only one), the next ones copied after it.
    /// Returns the answers gathered before it when it would take them past
    /// ``batchBytes``: they are to be written now.
    private func gather(_ answer: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard var gathered = batch.take() else {
            batch = answer
            return nil
        }
        if gathered.readableBytes + answer.readableBytes > Self.batchBytes {
            batch = answer
            return gathered
        }
        if gathered.writableBytes < answer.readableBytes {
            // The first answer's own buffer: copied into one with room for the next.
            var room = allocator.buffer(capacity: Self.batchBytes)
            room.writeImmutableBuffer(gathered)
            gathered = room
        }
        gathered.writeImmutableBuffer(answer)
        batch = gathered
        return nil
    }

    /// Writes the answers gathered (``batch``), if any.
    private func writeBatch(context: ChannelHandlerContext) {
        guard let gathered = batch.take() else { return }
        context.write(wrapOutboundOut(gathered), promise: nil)
        unflushed = true
    }

    /// The request `head` asks, with the fields `HTTPTypes` makes of it
    /// (as ``OriginFormCodec`` converts them), and the length of its body,
    /// when it may be answered here: a strict HTTP/1.1 `GET` or `HEAD` of
    /// an origin-form target without a body, or a `PROPFIND` with a small one (up to
    /// ``SmallReads/maximumBody``), and with field values in ASCII (bytes
    /// past it are decoded by NIO's own rules).
    static func request(_ head: UnsafeRawBufferPointer) -> (SmallReads.Request, bodyLength: Int)? {
        guard let scan = RequestHeadScan(head), scan.isHTTP11, !scan.needsDecoder, !scan.expects,
            head[scan.target.lowerBound] == UInt8(ascii: "/")
        else { return nil }
        let bodyLength = scan.contentLength ?? 0
        let method: HTTPRequest.Method
        if scan.isMethod("GET", in: head) {
            method = .get
        } else if scan.isMethod("HEAD", in: head) {
            method = .head
        } else if scan.isMethod("PROPFIND", in: head) {
            method = .propfind
        } else {
            return nil
        }
        guard bodyLength == 0 || (method == .propfind && bodyLength <= SmallReads.maximumBody) else {
            return nil
        }
        var fields = HTTPFields()
        fields.reserveCapacity(scan.fieldCount)
        var authority: String? = nil
        for (name, value) in scan.fields(in: head) {
            let valueBytes = UnsafeRawBufferPointer(rebasing: head[value])
            guard !valueBytes.contains(where: { $0 >= 0x80 }) else { return nil }
            let valueText = String(decoding: valueBytes, as: UTF8.self)
            if authority == nil, RequestHeadScan.equalsLowercased(name, "host", in: head) {
                authority = valueText
                continue
            }
            guard
                let fieldName = HTTPField.Name(
                    String(decoding: UnsafeRawBufferPointer(rebasing: head[name]), as: UTF8.self))
            else { return nil }
            fields.append(HTTPField(name: fieldName, value: valueText))
        }
        let request = SmallReads.Request(
            method: method,
            target: String(decoding: UnsafeRawBufferPointer(rebasing: head[scan.target]), as: UTF8.self),
            authority: authority, fields: fields)
        return (request, bodyLength)
    }

    /// `answer` as NIO's HTTP/1 encoder writes it: the status line, the
    /// fields in order (a `304` without `Content-Length`, as it has no
    /// body), the empty line and the body. The head is put together in
    /// `scratch` (the connection's, kept between answers) and copied out at
    /// once: a buffer's write checks its room and uniqueness each time. It
    /// goes into the room the body's buffer keeps before the body
    /// (``SmallReads/headroom``) when there is room, so the body is not copied.
    static func bytes(
        of answer: consuming SmallReads.Answer, scratch: inout [UInt8], allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: "HTTP/1.1 ".utf8)
        let code = answer.status.code
        scratch.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: code / 100 % 10))
        scratch.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: code / 10 % 10))
        scratch.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: code % 10))
        scratch.append(UInt8(ascii: " "))
        scratch.append(contentsOf: answer.status.reasonPhrase.utf8)
        scratch.append(contentsOf: "\r\n".utf8)
        // A 304's fields have no length (``FileResponses/plan(named:request:download:metadata:)``).
        answer.fields.write(into: &scratch)
        scratch.append(contentsOf: "Date: ".utf8)
        scratch.append(contentsOf: answer.date.utf8)
        scratch.append(contentsOf: "\r\nServer: ".utf8)
        scratch.append(contentsOf: answer.server.utf8)
        scratch.append(contentsOf: "\r\n\r\n".utf8)
        // Taken out of the answer (one binding, no copy), the body's buffer
        // is this one's alone: written to, it is not copied.
        guard var body = answer.body.take() else {
            var out = allocator.buffer(capacity: scratch.count)
            out.writeBytes(scratch)
            return out
        }
        if body.readerIndex >= scratch.count {
            let start = body.readerIndex - scratch.count
            body.setBytes(scratch, at: start)
            body.moveReaderIndex(to: start)
            return body
        }
        var out = allocator.buffer(capacity: scratch.count + body.readableBytes)
        out.writeBytes(scratch)
        out.writeBuffer(&body)
        return out
    }
}

/// Counts the responses that handlers behind NIO's encoder write, by their
/// ends, for ``SmallReadLane``: between the encoder and the decoder.
final class ResponseEndCounter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let ends: SmallReadLane.ResponseEnds

    init(_ ends: SmallReadLane.ResponseEnds) { self.ends = ends }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { ends.count += 1 }
        context.write(data, promise: promise)
    }
}
