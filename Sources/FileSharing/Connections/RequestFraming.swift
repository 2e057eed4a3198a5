/// Where each request on a connection ends, followed over the bytes that
/// ``SmallReadLane`` hands to NIO's HTTP/1 decoder.
///
/// The lane may answer a request itself only where the decoder is between
/// two messages with nothing held back: otherwise the two would read the
/// stream differently (bytes the lane took for a request line could be the
/// rest of a header the decoder holds), one request could be answered twice
/// or smuggled past the checks, and answers would leave out of order. So
/// every byte passed on is followed here: a head up to its empty line, read
/// by ``RequestHeadScan``, then its body of `Content-Length` bytes. A head
/// that is not strict, or whose body the decoder alone can frame (a
/// `Transfer-Encoding`, an `Upgrade`, a `CONNECT`), or that grows past
/// ``headLimit``, ends the following: the connection is the decoder's from
/// then on (``isOpaque``), as it was before the lane existed.
///
/// Pure: bytes in, state out.
struct RequestFraming {
    enum Phase: Equatable {
        /// Reading a head: ``partial`` holds what came of it so far.
        case head
        /// Reading a body: this many bytes are still to come.
        case body(remaining: Int)
        /// Not followed any more: the decoder alone reads the connection.
        case opaque
    }

    /// The largest head followed; a longer one is the decoder's to refuse.
    static let headLimit = 64 * 1024

    private(set) var phase = Phase.head
    /// The bytes of the head being read.
    private var partial: [UInt8] = []
    /// Request heads passed on whole, since the connection began.
    private(set) var heads = 0

    /// Between two messages, with no byte of the next one passed on yet.
    var isAtBoundary: Bool { phase == .head && partial.isEmpty }
    /// Not followed any more.
    var isOpaque: Bool { phase == .opaque }

    /// Follows `bytes`, the next ones passed on to the decoder.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            switch phase {
            case .opaque:
                return
            case .body(let remaining):
                let taken = min(remaining, bytes.count - index)
                index += taken
                phase = remaining == taken ? .head : .body(remaining: remaining - taken)
            case .head:
                // The rest appended, and the head's end looked for as the
                // lane looks for it (from where a CR LF CR LF could begin);
                // the bytes past it go back to the loop: a body, or the next message.
                let searchFrom = max(0, partial.count - 3)
                partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index...]))
                guard let end = partial.withUnsafeBytes({ RequestHeadScan.headEnd(in: $0, from: searchFrom) }) else {
                    if partial.count > Self.headLimit { becomeOpaque() }
                    return
                }
                let past = partial.count - end
                partial.removeLast(past)
                index = bytes.count - past
                headEnded()
            }
        }
    }

    /// The head in ``partial`` is whole: where its message ends.
    private mutating func headEnded() {
        let framing: Phase = partial.withUnsafeBytes { head in
            guard let scan = RequestHeadScan(head), !scan.needsDecoder, !scan.isMethod("CONNECT", in: head) else {
                return .opaque
            }
            if let length = scan.contentLength, length > 0 { return .body(remaining: length) }
            return .head
        }
        partial.removeAll(keepingCapacity: true)
        if framing == .opaque {
            becomeOpaque()
            return
        }
        heads += 1
        phase = framing
    }

    /// Stops following: the connection is the decoder's alone from now on.
    mutating func stopFollowing() { becomeOpaque() }

    private mutating func becomeOpaque() {
        phase = .opaque
        partial = []
    }
}
