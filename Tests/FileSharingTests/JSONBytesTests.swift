import FileWatching
import Foundation
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("JSON bytes")
struct JSONBytesTests {
    @Test("times (RFC 3339 and HTTP dates) agree with the C library's gmtime for dates across four centuries")
    func times() {
        var random = SystemRandomNumberGenerator()
        let samples: [Int64] =
            [0, 951_782_400, 4_102_444_800, 1_700_000_000, -1, 1_709_164_800, 9_000_000_000]
            + (0..<2000).map { _ in Int64.random(in: -2_208_988_800...4_102_444_800, using: &random) }
        for seconds in samples {
            var json = JSONBytes(capacity: 32)
            json.time(nanoseconds: seconds * 1_000_000_000 + 123)
            #expect(
                String(decoding: json.bytes, as: UTF8.self) == "\"" + JSONBytesTests.gmtimeRFC3339(seconds) + "\"",
                "\(seconds)")
            #expect(
                HTTPDate.format(nanoseconds: seconds * 1_000_000_000 + 123) == JSONBytesTests.strftimeHTTPDate(seconds),
                "\(seconds)")
            #expect(
                HTTPDate.parse(HTTPDate.format(nanoseconds: seconds * 1_000_000_000)) == seconds * 1_000_000_000,
                "\(seconds)")
        }
    }

    @Test(
        "HTTP dates a client sends that are not dates, or lie where nanoseconds overflow, are nil, never a crash",
        arguments: [
            "Tue, 22 Aug 0209 00:35:49 GMT", "Tue, 22 Aug 9999 00:35:49 GMT", "Tue, 22 Aug -2147483648 00:35:49 GMT",
            "Tue, 99 Aug 2020 00:35:49 GMT", "Tue, 22 Aug 2020 99:35:49 GMT", "Tue, 22 Aug 2020 00:35 GMT",
            "Tue, 22 Aug 2020 00:35:49 UTC", "yesterday", "",
        ])
    func badHTTPDates(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("strings and numbers come back through a JSON parser as they went in")
    func roundTrip() throws {
        let texts = ["plain", "quote \" and \\ backslash", "tab\tnew\nline\r", "\u{01}\u{1F}", "Été ☃ 𝄞", ""]
        var json = JSONBytes(capacity: 256)
        json.raw("[")
        for (index, text) in texts.enumerated() {
            if index > 0 { json.raw(",") }
            json.string(text)
        }
        for value in [Int64(0), 7, 1_234_567_890_123, -42] {
            json.raw(",")
            json.integer(value)
        }
        json.raw("]")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [Any])
        #expect(parsed.prefix(texts.count).compactMap { $0 as? String } == texts)
        #expect(parsed.suffix(4).compactMap { ($0 as? NSNumber)?.int64Value } == [0, 7, 1_234_567_890_123, -42])
    }

    @Test(
        "a listing's fields written from bytes are the text the plain forms write: names, paths (not UTF-8 too), ids, entity tags"
    )
    func fromBytes() {
        let names: [[UInt8]] = [
            Array("file-00001.txt".utf8), Array("a b/c d".utf8), Array("quote \" and \\".utf8), Array("tab\t".utf8),
            Array("Été ☃ 𝄞".utf8), [], [0x66, 0xFF, 0x6F], [0xC3], [0x7F, 0x41], [0x1F], Array("ok~".utf8),
        ]
        for bytes in names {
            var fast = JSONBytes(capacity: 64)
            fast.string(utf8: bytes[...])
            var plain = JSONBytes(capacity: 64)
            plain.string(String(decoding: bytes, as: UTF8.self))
            #expect(fast.bytes == plain.bytes, "\(bytes)")
        }
        for raw: UInt64 in [0, 1, 0xABC, 0x743d_54a5_fe19_d30f, .max] {
            var json = JSONBytes(capacity: 32)
            json.id(ItemID(rawValue: raw))
            #expect(String(decoding: json.bytes, as: UTF8.self) == "\"\(ItemID(rawValue: raw).description)\"")
        }
        for (inode, size, modified) in [
            (UInt64(0), Int64(0), Int64(0)), (0xfc9ff4, 8, 1_764_058_363_000_000_000), (.max, -1, .min),
        ] {
            var json = JSONBytes(capacity: 64)
            json.entityTag(inode: inode, size: size, modified: modified)
            var plain = JSONBytes(capacity: 64)
            plain.string(FileStatus.entityTag(inode: inode, size: size, modified: modified))
            #expect(json.bytes == plain.bytes)
        }
    }

    /// The C library's HTTP date (in the C locale), as the reference.
    static func strftimeHTTPDate(_ value: Int64) -> String {
        var seconds = time_t(value)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The C library's answer, as the reference.
    static func gmtimeRFC3339(_ value: Int64) -> String {
        var seconds = time_t(value)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
