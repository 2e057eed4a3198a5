import FileWatching
import HTTPTypes
import Testing

@testable import FileSharing

/// The fields of plain answers kept between answers (``KeptFileHeads``):
/// given back only for the status they were worked out for, bounded, and
/// the same bytes as worked out afresh.
@Suite("Kept file heads")
struct KeptFileHeadsTests {
    static func status(inode: UInt64 = 7, size: Int64 = 4096, modified: Int64 = 1_700_000_000_123_456_789)
        -> FileStatus
    {
        FileStatus(
            kind: .file, device: 1, inode: inode, size: size, modified: modified, changed: modified, born: nil,
            permissions: 0o644, linkCount: 1, owner: 0)
    }

    /// The fields the plan gives a plain request for `name` with `status`.
    static func planned(_ name: String, _ status: FileStatus) throws -> FileAnswerFields {
        guard
            case .send(.ok, let fields, 0, status.size) =
                FileResponses.plan(named: name, request: [:], download: false, metadata: status)
        else {
            Issue.record("a plain request is not planned as the whole file")
            throw CancellationError()
        }
        return fields
    }

    @Test("kept fields come back, as bytes the same as written afresh, while the name and status have not moved")
    func sameStatus() throws {
        let heads = KeptFileHeads()
        let status = Self.status()
        #expect(heads.head(named: "s.txt", status: status) == nil)
        heads.keep(try Self.planned("s.txt", status), named: "s.txt", status: status)
        let kept = try #require(heads.head(named: "s.txt", status: status))
        var afresh: [UInt8] = []
        try Self.planned("s.txt", status).write(into: &afresh)
        #expect(kept.bytes == afresh)
        #expect(kept.fields.entityTag == status.entityTag)
        #expect(kept.fields.httpFields == (try Self.planned("s.txt", status)).httpFields)
        // Another status of the file (rewritten, replaced, grown): nothing.
        #expect(heads.head(named: "s.txt", status: Self.status(inode: 8)) == nil)
        #expect(heads.head(named: "s.txt", status: Self.status(size: 4097)) == nil)
        #expect(heads.head(named: "s.txt", status: Self.status(modified: 1_700_000_000_123_456_790)) == nil)
        // Nor the same file under another name (a hard link, a rename: the name gives the type).
        #expect(heads.head(named: "s.html", status: status) == nil)
        // Kept again for the new status, the old one is gone.
        let rewritten = Self.status(modified: 1_800_000_000_000_000_000)
        heads.keep(try Self.planned("s.txt", rewritten), named: "s.txt", status: rewritten)
        #expect(heads.head(named: "s.txt", status: status) == nil)
        #expect(heads.head(named: "s.txt", status: rewritten)?.fields.entityTag == rewritten.entityTag)
    }

    @Test("at most its capacity: the files answered last are kept, one found in the older generation is carried on")
    func bounded() throws {
        let heads = KeptFileHeads(capacity: 8)
        let statuses = (0..<20).map { Self.status(inode: UInt64(100 + $0)) }
        func keep(_ range: Range<Int>) throws {
            for status in statuses[range] {
                heads.keep(try Self.planned("f.bin", status), named: "f.bin", status: status)
            }
        }
        func isKept(_ index: Int) -> Bool { heads.head(named: "f.bin", status: statuses[index]) != nil }
        try keep(0..<6)
        #expect(heads.count <= 8)
        // The newest half (4) is always kept.
        for index in 2..<6 { #expect(isKept(index)) }
        // The third, found in the older generation, is carried into the newer
        // one: still kept after four more.
        #expect(isKept(2))
        try keep(6..<10)
        #expect(heads.count <= 8)
        #expect(isKept(2))
        #expect(!isKept(0))
        try keep(10..<20)
        #expect(heads.count <= 8)
        for index in 16..<20 { #expect(isKept(index)) }
    }

    @Test("only a request without condition or range asks plainly")
    func plainly() {
        #expect(FileResponses.asksPlainly([:]))
        #expect(FileResponses.asksPlainly([.authorization: "Basic eDp5", .accept: "*/*"]))
        #expect(!FileResponses.asksPlainly([.ifNoneMatch: "\"x\""]))
        #expect(!FileResponses.asksPlainly([.ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT"]))
        #expect(!FileResponses.asksPlainly([.range: "bytes=0-1"]))
        #expect(!FileResponses.asksPlainly([.range: "bytes=0-1", .ifRange: "\"x\""]))
    }
}
