import ZipStream

/// Bytes written in order, with the integer encodings file formats use.
struct Bytes {
    var bytes: [UInt8] = []

    init() {}

    init(_ build: (inout Bytes) -> Void) {
        build(&self)
    }

    mutating func add(_ more: [UInt8]) { bytes += more }
    mutating func add(_ text: String) { bytes += Array(text.utf8) }
    mutating func zeros(_ count: Int) { bytes += [UInt8](repeating: 0, count: count) }
    mutating func le16(_ value: Int) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    mutating func le32(_ value: Int) {
        le16(value & 0xFFFF)
        le16(value >> 16 & 0xFFFF)
    }
    mutating func le64(_ value: Int) {
        le32(value & 0xFFFF_FFFF)
        le32(value >> 32)
    }
    mutating func be16(_ value: Int) { bytes += [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    mutating func be32(_ value: Int) {
        be16(value >> 16 & 0xFFFF)
        be16(value & 0xFFFF)
    }
}

/// Deflate data in stored (uncompressed) blocks: valid input for any inflater.
func deflateStored(_ data: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var start = 0
    repeat {
        let end = min(data.count, start + 65_535)
        let isLast = end == data.count
        let length = end - start
        out.append(isLast ? 1 : 0)
        out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
        out += data[start..<end]
        start = end
    } while start < data.count
    return out
}

/// A zlib stream (RFC 1950) of stored deflate blocks.
func zlibStored(_ data: [UInt8]) -> [UInt8] {
    var a: UInt32 = 1
    var b: UInt32 = 0
    for byte in data {
        a = (a + UInt32(byte)) % 65_521
        b = (b + a) % 65_521
    }
    let adler = b << 16 | a
    return [0x78, 0x01] + deflateStored(data)
        + [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
}

/// A gzip file (RFC 1952) of `data`, which `gzip -t` accepts.
func gzip(_ data: [UInt8]) -> [UInt8] {
    Bytes { out in
        out.add([0x1F, 0x8B, 0x08, 0x00])
        out.le32(1_700_000_000)
        out.add([0x00, 0x03])
        out.add(deflateStored(data))
        out.le32(Int(CRC32.checksum(of: data)))
        out.le32(data.count)
    }.bytes
}

/// A POSIX (ustar) tar archive of files, which `tar -t` accepts.
func tar(_ files: [(name: String, content: [UInt8])]) -> [UInt8] {
    var out: [UInt8] = []
    for file in files {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int) {
            for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte }
        }
        put(file.name, at: 0)
        put("0000644", at: 100)
        put("0001750", at: 108)
        put("0001750", at: 116)
        put(octal(file.content.count, width: 11), at: 124)
        put("14533767400", at: 136)
        put("        ", at: 148)
        header[156] = 0x30
        put("ustar", at: 257)
        put("00", at: 263)
        put("user", at: 265)
        put("user", at: 297)
        let sum = header.reduce(0) { $0 + Int($1) }
        put(octal(sum, width: 6), at: 148)
        header[154] = 0
        header[155] = 0x20
        out += header
        out += file.content
        out += [UInt8](repeating: 0, count: (512 - file.content.count % 512) % 512)
    }
    return out + [UInt8](repeating: 0, count: 1024)
}

/// `value` in octal, with leading zeros to `width` digits.
private func octal(_ value: Int, width: Int) -> String {
    let digits = String(value, radix: 8)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// A PNG chunk: length, type, data, CRC of type and data.
func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    Bytes { out in
        out.be32(data.count)
        out.add(type)
        out.add(data)
        out.be32(Int(CRC32.checksum(of: Array(type.utf8) + data)))
    }.bytes
}

/// A valid 1×1 RGB PNG image.
func pngImage() -> [UInt8] {
    Bytes { out in
        out.add([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        out.add(
            pngChunk(
                "IHDR",
                Bytes {
                    $0.be32(1); $0.be32(1); $0.add([8, 2, 0, 0, 0])
                }.bytes))
        out.add(pngChunk("IDAT", zlibStored([0, 0xFF, 0x80, 0x00])))
        out.add(pngChunk("IEND", []))
    }.bytes
}

/// A JPEG's start: SOI, a JFIF APP0 segment, a comment, and EOI.
func jpegImage(padding: Int = 0) -> [UInt8] {
    Bytes { out in
        out.add([0xFF, 0xD8, 0xFF, 0xE0])
        out.be16(16)
        out.add("JFIF")
        out.add([0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00])
        out.add([0xFF, 0xFE])
        out.be16(2 + 11)
        out.add("sample file")
        out.zeros(padding)
        out.add([0xFF, 0xD9])
    }.bytes
}
