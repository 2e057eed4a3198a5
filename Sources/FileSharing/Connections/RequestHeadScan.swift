/// An HTTP/1 request head read strictly from its bytes, for ``SmallReadLane``.
///
/// It accepts only heads whose meaning no two parsers can disagree on
/// (RFC 9112): a request line of a token, one space, a target of visible
/// ASCII, one space and `HTTP/1.0` or `HTTP/1.1`; field lines of a token
/// name, a colon right after it, and a value of visible characters, spaces
/// and tabs; every line ending in CR LF. Anything else — a bare CR or LF, a
/// folded line, a space before a colon, a control character, more than one
/// `Content-Length`, one that is not digits alone — makes ``init(_:)`` return
/// `nil`, and the lane then leaves the connection to NIO's decoder for good.
/// So the lane never reads a message's end where the decoder would not.
struct RequestHeadScan {
    /// The method's bytes (a token).
    let method: Range<Int>
    /// The request target (visible ASCII, not checked further).
    let target: Range<Int>
    /// `HTTP/1.1` (else `HTTP/1.0`).
    let isHTTP11: Bool
    /// Where the field lines start (``fields(in:)``).
    let fieldLines: Int
    /// How many field lines there are.
    let fieldCount: Int
    /// The one `Content-Length`, when there is one.
    let contentLength: Int?
    /// A `Transfer-Encoding` or `Upgrade` field is among them: their
    /// messages are the decoder's alone to frame.
    let needsDecoder: Bool
    /// An `Expect` field is among them: framed by its length all the same,
    /// but answered by the router (`ExpectContinueHandler`).
    let expects: Bool

    /// Reads `head`, which runs from the request line to the empty line
    /// that ends the head (its CR LF included); `nil` when it is not strict.
    init?(_ head: UnsafeRawBufferPointer) {
        let count = head.count
        guard count >= 4, head[count - 4] == cr, head[count - 3] == lf, head[count - 2] == cr, head[count - 1] == lf
        else { return nil }
        var i = 0
        // The request line.
        while i < count, Self.isToken(head[i]) { i += 1 }
        guard i > 0, i < count, head[i] == space else { return nil }
        method = 0..<i
        i += 1
        let targetStart = i
        while i < count, head[i] > space, head[i] < 0x7F { i += 1 }
        guard i > targetStart, i < count, head[i] == space else { return nil }
        target = targetStart..<i
        i += 1
        guard count - i >= 10, head[i] == UInt8(ascii: "H"), head[i + 1] == UInt8(ascii: "T"),
            head[i + 2] == UInt8(ascii: "T"), head[i + 3] == UInt8(ascii: "P"), head[i + 4] == UInt8(ascii: "/"),
            head[i + 5] == UInt8(ascii: "1"), head[i + 6] == UInt8(ascii: "."),
            head[i + 7] == UInt8(ascii: "0") || head[i + 7] == UInt8(ascii: "1"),
            head[i + 8] == cr, head[i + 9] == lf
        else { return nil }
        isHTTP11 = head[i + 7] == UInt8(ascii: "1")
        i += 10
        // The field lines, up to the empty line. Only checked and counted:
        // ``fields(in:)`` reads them again where they are wanted (an
        // array of them was an allocation for every head, the lane's and
        // the framing's).
        fieldLines = i
        var fieldCount = 0
        var contentLength: Int? = nil
        var lengths = 0
        var needsDecoder = false
        var expects = false
        while i < count - 2 {
            guard let (name, value, next) = Self.fieldLine(in: head, at: i) else { return nil }
            i = next
            fieldCount += 1
            switch Self.special(name, in: head) {
            case .contentLength:
                lengths += 1
                guard lengths == 1, let length = Self.digits(value, in: head) else { return nil }
                contentLength = length
            case .decoderOnly:
                needsDecoder = true
            case .expect:
                expects = true
            case .none:
                break
            }
        }
        guard i == count - 2 else { return nil }
        self.fieldCount = fieldCount
        self.contentLength = contentLength
        self.needsDecoder = needsDecoder
        self.expects = expects
    }

    /// The field line at `start` of `head`, strict (a token name, a colon
    /// right after it, a value of visible characters, spaces and tabs, CR
    /// LF): its name's bytes, its value's without the spaces around it, and
    /// where the next line starts; `nil` when it is not strict.
    private static func fieldLine(in head: UnsafeRawBufferPointer, at start: Int)
        -> (name: Range<Int>, value: Range<Int>, next: Int)?
    {
        let count = head.count
        var i = start
        while i < count, Self.isToken(head[i]) { i += 1 }
        guard i > start, i < count, head[i] == colon else { return nil }
        let name = start..<i
        i += 1
        while i < count, head[i] == space || head[i] == tab { i += 1 }
        let valueStart = i
        var valueEnd = i
        while i < count, head[i] != cr {
            let byte = head[i]
            guard byte >= space || byte == tab, byte != 0x7F else { return nil }
            i += 1
            if byte != space && byte != tab { valueEnd = i }
        }
        guard i + 1 < count, head[i + 1] == lf else { return nil }
        return (name, valueStart..<valueEnd, i + 2)
    }

    /// The field lines of `head`, the head this was read from: each one's
    /// name's bytes and value's, without the spaces around it.
    func fields(in head: UnsafeRawBufferPointer) -> FieldLines { FieldLines(head: head, line: fieldLines) }

    /// The field lines of a head read strictly, one after another.
    struct FieldLines: Sequence, IteratorProtocol {
        let head: UnsafeRawBufferPointer
        /// Where the next line starts.
        var line: Int

        mutating func next() -> (name: Range<Int>, value: Range<Int>)? {
            // Read whole already by ``RequestHeadScan/init(_:)``: every line is strict.
            guard line < head.count - 2, let (name, value, after) = RequestHeadScan.fieldLine(in: head, at: line)
            else { return nil }
            line = after
            return (name, value)
        }
    }

    /// Whether the method is `name` (compared exactly: methods are case-sensitive).
    func isMethod(_ name: StaticString, in head: UnsafeRawBufferPointer) -> Bool {
        guard method.count == name.utf8CodeUnitCount else { return false }
        return name.withUTF8Buffer { expected in
            var index = 0
            for byte in expected {
                guard head[method.lowerBound + index] == byte else { return false }
                index += 1
            }
            return true
        }
    }

    private enum Special { case contentLength, decoderOnly, expect, none }

    /// The fields that decide where a message ends, or that only the decoder may see.
    private static func special(_ name: Range<Int>, in head: UnsafeRawBufferPointer) -> Special {
        switch name.count {
        case 14 where equalsLowercased(name, "content-length", in: head): .contentLength
        case 17 where equalsLowercased(name, "transfer-encoding", in: head): .decoderOnly
        case 7 where equalsLowercased(name, "upgrade", in: head): .decoderOnly
        case 6 where equalsLowercased(name, "expect", in: head): .expect
        default: .none
        }
    }

    /// Whether the bytes at `range` are `lowercase` in any case (ASCII).
    static func equalsLowercased(_ range: Range<Int>, _ lowercase: StaticString, in head: UnsafeRawBufferPointer)
        -> Bool
    {
        guard range.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            var index = range.lowerBound
            for byte in expected {
                guard head[index].lowercasedASCII == byte else { return false }
                index += 1
            }
            return true
        }
    }

    /// A decimal number of 1 to 18 digits and nothing else.
    private static func digits(_ range: Range<Int>, in head: UnsafeRawBufferPointer) -> Int? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var value = 0
        for index in range {
            let byte = head[index]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// RFC 9110 `tchar`.
    static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// The end of the first head in `bytes` (just past its empty line), if it is whole there.
    static func headEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var i = start + 3
        while i < bytes.count {
            // Stepping by the last byte of CR LF CR LF, as a search for it does.
            switch bytes[i] {
            case lf:
                if bytes[i - 1] == cr, bytes[i - 2] == lf, bytes[i - 3] == cr { return i + 1 }
                i += 2
            case cr:
                i += 1
            default:
                i += 4
            }
        }
        return nil
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let colon = UInt8(ascii: ":")
