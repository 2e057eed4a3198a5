/// The thumbnail cameras and phones embed in a JPEG's EXIF block (IFD1's
/// JPEGInterchangeFormat), found by reading the file's first bytes only:
/// no decoding, so a 12-megapixel photo gets its thumbnail at once.
package enum ExifThumbnail {
    /// How much of the start of the file the EXIF block can take.
    package static let headerBytes = 128 * 1024

    /// The embedded thumbnail's bytes, if `head` (the start of a JPEG file) has one.
    package static func extract(from head: [UInt8]) -> [UInt8]? {
        exifBlock(in: head).flatMap(thumbnail(inTIFF:))
    }

    /// The orientation (EXIF tag 0x0112, 1 to 8) that `head`, the start of
    /// a JPEG file, declares; `nil` without one.
    package static func orientation(from head: [UInt8]) -> Int? {
        exifBlock(in: head).flatMap(orientation(inTIFF:))
    }

    /// The TIFF block of the JPEG's APP1 EXIF segment, found by walking its markers.
    private static func exifBlock(in head: [UInt8]) -> [UInt8]? {
        guard head.count > 4, head[0] == 0xFF, head[1] == 0xD8 else { return nil }
        var offset = 2
        while offset + 4 <= head.count, head[offset] == 0xFF {
            let marker = head[offset + 1]
            if marker == 0xD9 || marker == 0xDA { return nil }  // end of image, or the scan: no EXIF before it
            let length = Int(head[offset + 2]) << 8 | Int(head[offset + 3])
            guard length >= 2 else { return nil }
            let start = offset + 4
            let end = offset + 2 + length
            if marker == 0xE1, end <= head.count, end - start > 6,
                Array(head[start..<start + 6]) == Array("Exif\0\0".utf8)
            {
                return Array(head[(start + 6)..<end])
            }
            offset = end
        }
        return nil
    }

    /// IFD0's orientation in a TIFF block (a JPEG's EXIF, a PNG's eXIf).
    package static func orientation(inTIFF tiff: [UInt8]) -> Int? {
        guard let reader = TIFFReader(tiff), let ifd0 = reader.u32(4), let count = reader.u16(ifd0), count < 1000
        else { return nil }
        for index in 0..<count {
            let entry = ifd0 + 2 + index * 12
            guard let tag = reader.u16(entry) else { return nil }
            if tag == 0x0112, let value = reader.u16(entry + 8), (1...8).contains(value) { return value }
        }
        return nil
    }

    /// Walks a TIFF block: IFD0, then IFD1's thumbnail offset and length.
    private static func thumbnail(inTIFF tiff: [UInt8]) -> [UInt8]? {
        guard let reader = TIFFReader(tiff), let ifd0 = reader.u32(4), let count0 = reader.u16(ifd0),
            let ifd1 = reader.u32(ifd0 + 2 + count0 * 12), ifd1 > 0, let count1 = reader.u16(ifd1), count1 < 1000
        else { return nil }
        var offset: Int? = nil
        var length: Int? = nil
        for index in 0..<count1 {
            let entry = ifd1 + 2 + index * 12
            guard let tag = reader.u16(entry) else { return nil }
            if tag == 0x0201 { offset = reader.u32(entry + 8) }
            if tag == 0x0202 { length = reader.u32(entry + 8) }
        }
        guard let offset, let length, length > 4, offset + length <= tiff.count,
            tiff[offset] == 0xFF, tiff[offset + 1] == 0xD8
        else { return nil }
        return Array(tiff[offset..<offset + length])
    }

    /// Numbers in a TIFF block, in the byte order its header says; `nil` past its end.
    private struct TIFFReader {
        let tiff: [UInt8]
        let little: Bool

        init?(_ tiff: [UInt8]) {
            guard tiff.count >= 8 else { return nil }
            switch (tiff[0], tiff[1]) {
            case (0x49, 0x49): little = true
            case (0x4D, 0x4D): little = false
            default: return nil
            }
            self.tiff = tiff
        }

        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }

        func u32(_ at: Int) -> Int? {
            guard let low = u16(little ? at : at + 2), let high = u16(little ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
    }
}
