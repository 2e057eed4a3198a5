/// Progressive JPEGs made by hand, byte by byte, to cost a decoder what a
/// hostile file would: an all-zero greyscale image whose frame declares
/// any size, in any number of scans, a few hundred bytes or a few KiB
/// whatever the size declared.
///
/// The scans are a DC scan, a first AC pass over coefficients 1 to 63, then
/// AC refinements of that band (libjpeg warns that the refinements repeat,
/// and decodes them). With `withData`, each AC scan is end-of-band runs over
/// every block, so a refinement walks every block's 63 coefficients (the
/// costliest scan per byte); without, the scans are empty and libjpeg skips
/// their blocks after warning that the data ran out.
public enum HostileJPEG {
    /// The file's bytes.
    /// - Parameters:
    ///   - width: The width the frame declares.
    ///   - height: The height the frame declares.
    ///   - scans: How many scans (at least 2).
    ///   - withData: Whether the AC scans hold end-of-band runs over every block.
    public static func progressive(width: Int, height: Int, scans: Int, withData: Bool = false) -> [UInt8] {
        var bytes = head(width: width, height: height)
        let blocks = ((width + 7) / 8) * ((height + 7) / 8)
        // The DC scan: successive approximation, the low bit left for later.
        bytes += scanHeader(start: 0, end: 0, high: 0, low: 1)
        if withData { bytes += [UInt8](repeating: 0, count: (blocks + 7) / 8) }
        for index in 1..<max(2, scans) {
            bytes += scanHeader(start: 1, end: 63, high: index == 1 ? 0 : 1, low: index == 1 ? 1 : 0)
            if withData { bytes += endOfBandRuns(blocks) }
        }
        return bytes + [0xFF, 0xD9]
    }

    /// A progressive greyscale JPEG of an all-zero image in a valid
    /// progression, so libjpeg warns of nothing: DC and AC (1 to 63) each
    /// a first pass keeping 13 bits back, then 13 refinements of a bit each,
    /// every scan holding data for every block (28 scans). With
    /// `failingLast`, a last scan libjpeg refuses (a refinement skipping a
    /// bit): a fatal error, after the work of the others.
    public static func successive(width: Int, height: Int, failingLast: Bool = false) -> [UInt8] {
        var bytes = head(width: width, height: height)
        let blocks = ((width + 7) / 8) * ((height + 7) / 8)
        // A bit a block: DC's category 0, or a refinement's bit 0.
        let bitPerBlock = [UInt8](repeating: 0, count: (blocks + 7) / 8)
        bytes += scanHeader(start: 0, end: 0, high: 0, low: 13) + bitPerBlock
        for bit in (0..<13).reversed() {
            bytes += scanHeader(start: 0, end: 0, high: UInt8(bit + 1), low: UInt8(bit)) + bitPerBlock
        }
        let runs = endOfBandRuns(blocks)
        bytes += scanHeader(start: 1, end: 63, high: 0, low: 13) + runs
        for bit in (0..<13).reversed() {
            bytes += scanHeader(start: 1, end: 63, high: UInt8(bit + 1), low: UInt8(bit)) + runs
        }
        if failingLast { bytes += scanHeader(start: 1, end: 63, high: 3, low: 0) }
        return bytes + [0xFF, 0xD9]
    }

    /// SOI, the tables and the frame (SOF2) of a greyscale image.
    private static func head(width: Int, height: Int) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        // Quantization table 0: all ones.
        bytes += segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
        // SOF2: 8 bits, the size, one component (id 1, 1×1 sampling, table 0).
        bytes += segment(0xC2, [8] + be16(height) + be16(width) + [1, 1, 0x11, 0])
        // DC table 0: one symbol (category 0) of one bit.
        bytes += segment(0xC4, [0x00] + [1] + [UInt8](repeating: 0, count: 15) + [0])
        // AC table 0: 0x00 (end of band) of one bit, 0xE0 (a run of 2^14 to 2^15 - 1 bands) of two.
        bytes += segment(0xC4, [0x10] + [1, 1] + [UInt8](repeating: 0, count: 14) + [0x00, 0xE0])
        return bytes
    }

    private static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    private static func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xFF, marker] + be16(body.count + 2) + body
    }

    private static func scanHeader(start: UInt8, end: UInt8, high: UInt8, low: UInt8) -> [UInt8] {
        segment(0xDA, [1, 1, 0x00, start, end, high << 4 | low])
    }

    /// End-of-band runs covering `blocks` blocks: runs of 2^14 + 14 bits
    /// (up to 32,767 blocks each), then single ends of band; padded with
    /// ones, 0xFF stuffed with 0x00.
    private static func endOfBandRuns(_ blocks: Int) -> [UInt8] {
        var bits: [Bool] = []
        var left = blocks
        while left >= 16_384 {
            let run = min(left, 32_767)
            bits += [true, false] + (0..<14).reversed().map { (run - 16_384) >> $0 & 1 == 1 }
            left -= run
        }
        bits += [Bool](repeating: false, count: left)
        while bits.count % 8 != 0 { bits.append(true) }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: bits.count, by: 8) {
            let byte = bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
            bytes.append(byte)
            if byte == 0xFF { bytes.append(0) }
        }
        return bytes
    }
}
