import FileshareTestSupport
import Testing
import ZipStream

/// The slicing-by-16 CRC-32 against known values and the bit-by-bit definition.
@Suite("CRC-32")
struct CRC32Tests {
    @Test(
        "known check values",
        arguments: [
            ("", UInt32(0)), ("a", 0xE8B7_BE43), ("abc", 0x3524_41C2), ("123456789", 0xCBF4_3926),
            ("The quick brown fox jumps over the lazy dog", 0x414F_A339),
        ])
    func knownValues(text: String, crc: UInt32) {
        #expect(CRC32.checksum(of: Array(text.utf8)) == crc)
        #expect(referenceCRC32(Array(text.utf8)) == crc)
    }

    @Test("every length up to 100 at every alignment, and random splits, agree with the definition")
    func agreesWithDefinition() {
        var random = SeededBytes(seed: 1)
        let data = random.bytes(4096 + 16)
        for start in 0..<16 {
            for length in 0...100 {
                let slice = data[start..<(start + length)]
                #expect(CRC32.checksum(of: slice) == referenceCRC32(slice), "start \(start), length \(length)")
            }
        }
        let whole = referenceCRC32(data)
        for _ in 0..<50 {
            var crc = CRC32()
            var start = 0
            while start < data.count {
                let end = min(data.count, start + Int(random.next() as UInt64 % 300))
                crc.update(data[start..<end])
                start = end
            }
            #expect(crc.value == whole)
        }
    }

    @Test("sequences without contiguous storage give the same value")
    func nonContiguous() {
        var random = SeededBytes(seed: 2)
        let data = random.bytes(1000)
        #expect(CRC32.checksum(of: data.lazy.map { $0 }) == referenceCRC32(data))
        #expect(
            CRC32.checksum(of: repeatElement(UInt8(0), count: 100)) == referenceCRC32([UInt8](repeating: 0, count: 100))
        )
    }
}
