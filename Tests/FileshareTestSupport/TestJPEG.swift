/// JPEG files made for tests, without an image library.
public enum TestJPEG {
    /// A JPEG of `padding` bytes of scan data with (or without) an EXIF
    /// block embedding `thumbnail`: enough for the EXIF reader, not an image
    /// a decoder accepts.
    public static func bytes(thumbnail: [UInt8]?, padding: Int) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        if let thumbnail {
            func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v & 0xFFFF) }
            var tiff: [UInt8] = Array("MM".utf8) + [0x00, 0x2A] + be32(8)
            tiff += be16(0) + be32(14)  // IFD0: no entries; IFD1 at 14
            tiff += be16(2)
            tiff += be16(0x0201) + be16(4) + be32(1) + be32(44)  // JPEGInterchangeFormat
            tiff += be16(0x0202) + be16(4) + be32(1) + be32(thumbnail.count)  // its length
            tiff += be32(0)
            tiff += thumbnail
            let payload = Array("Exif\0\0".utf8) + tiff
            bytes += [0xFF, 0xE1] + be16(payload.count + 2) + payload
        }
        bytes += [0xFF, 0xDA, 0x00, 0x02] + [UInt8](repeating: 0x55, count: padding) + [0xFF, 0xD9]
        return bytes
    }

    /// The width and height in a JPEG's start-of-frame marker.
    public static func size(of bytes: [UInt8]) -> (width: Int, height: Int)? {
        var offset = 2
        while offset + 9 < bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if (0xC0...0xC3).contains(marker) {
                return (
                    Int(bytes[offset + 7]) << 8 | Int(bytes[offset + 8]),
                    Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6])
                )
            }
            offset += 2 + length
        }
        return nil
    }
}
