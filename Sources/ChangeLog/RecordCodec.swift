import ZipStream

/// The bytes of a log segment: a 16-byte header (`FSCHLOG1` and the first
/// record's number, little-endian), then framed records: the body's length
/// (4 bytes), its CRC-32 (4 bytes), and the body: number (8), time (8),
/// flags (1), the origin's face, client, method and user when present (each
/// 2 bytes of length and UTF-8), and the event's JSON text.
///
/// A frame that is cut short or whose checksum fails marks the end of what
/// was written whole: after a crash the tail is cut back there.
enum RecordCodec {
    static let magic: [UInt8] = Array("FSCHLOG1".utf8)
    static let headerSize = 16
    static let frameHeaderSize = 8
    /// A body larger than this is taken for damage, not a record.
    static let maxBodySize = 16 << 20

    enum Decoded {
        /// A whole record and the frame's size.
        case record(ChangeRecord, size: Int)
        /// The bytes end inside the frame.
        case incomplete
        /// The frame is not a record (bad length or checksum).
        case damaged
    }

    static func header(firstSeq: UInt64) -> [UInt8] {
        var bytes = magic
        append(firstSeq, to: &bytes)
        return bytes
    }

    /// The first record's number a header names, or `nil` when it is not a header.
    static func firstSeq(header bytes: ArraySlice<UInt8>) -> UInt64? {
        guard bytes.count >= headerSize, Array(bytes.prefix(8)) == magic else { return nil }
        return uint64(bytes, at: bytes.startIndex + 8)
    }

    /// Appends the framed record to `bytes`.
    static func encode(_ record: ChangeRecord, into bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: frameHeaderSize))
        append(record.seq, to: &bytes)
        append(UInt64(bitPattern: record.time), to: &bytes)
        if let origin = record.origin {
            bytes.append(origin.user == nil ? 1 : 3)
            for text in [origin.face, origin.client, origin.method] + (origin.user.map { [$0] } ?? []) {
                let utf8 = text.utf8.prefix(Int(UInt16.max))
                bytes.append(UInt8(utf8.count & 0xFF))
                bytes.append(UInt8(utf8.count >> 8))
                bytes.append(contentsOf: utf8)
            }
        } else {
            bytes.append(0)
        }
        bytes.append(contentsOf: record.event.utf8)
        let bodySize = bytes.count - start - frameHeaderSize
        let checksum = bytes.withUnsafeBytes { raw in
            var crc = CRC32()
            crc.update(UnsafeRawBufferPointer(rebasing: raw[(start + frameHeaderSize)...]))
            return crc.value
        }
        for shift in 0..<4 {
            bytes[start + shift] = UInt8(truncatingIfNeeded: bodySize >> (shift * 8))
            bytes[start + 4 + shift] = UInt8(truncatingIfNeeded: checksum >> (UInt32(shift) * 8))
        }
    }

    /// Decodes the frame at the start of `bytes`.
    static func decode(_ bytes: ArraySlice<UInt8>) -> Decoded {
        guard bytes.count >= frameHeaderSize else { return .incomplete }
        let base = bytes.startIndex
        let bodySize = Int(uint32(bytes, at: base))
        let checksum = uint32(bytes, at: base + 4)
        guard bodySize >= 17, bodySize <= maxBodySize else { return .damaged }
        guard bytes.count >= frameHeaderSize + bodySize else { return .incomplete }
        let body = bytes[(base + frameHeaderSize)..<(base + frameHeaderSize + bodySize)]
        let actual = body.withUnsafeBytes { raw in
            var crc = CRC32()
            crc.update(raw)
            return crc.value
        }
        guard actual == checksum else { return .damaged }
        let seq = uint64(body, at: body.startIndex)
        let time = Int64(bitPattern: uint64(body, at: body.startIndex + 8))
        let flags = body[body.startIndex + 16]
        var position = body.startIndex + 17
        var origin: ChangeOrigin? = nil
        if flags & 1 != 0 {
            var texts: [String] = []
            for _ in 0..<(flags & 2 != 0 ? 4 : 3) {
                guard position + 2 <= body.endIndex else { return .damaged }
                let count = Int(body[position]) | Int(body[position + 1]) << 8
                position += 2
                guard position + count <= body.endIndex else { return .damaged }
                texts.append(String(decoding: body[position..<(position + count)], as: UTF8.self))
                position += count
            }
            origin = ChangeOrigin(
                face: texts[0], client: texts[1], user: texts.count > 3 ? texts[3] : nil, method: texts[2])
        }
        let event = String(decoding: body[position...], as: UTF8.self)
        let record = ChangeRecord(seq: seq, entry: ChangeLogEntry(event: event, time: time, origin: origin))
        return .record(record, size: frameHeaderSize + bodySize)
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func uint64(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt64 {
        var value: UInt64 = 0
        for offset in 0..<8 { value |= UInt64(bytes[index + offset]) << UInt64(offset * 8) }
        return value
    }

    private static func uint32(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<4 { value |= UInt32(bytes[index + offset]) << UInt32(offset * 8) }
        return value
    }
}
