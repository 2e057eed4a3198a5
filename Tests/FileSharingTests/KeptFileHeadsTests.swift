import FileWatching
import HTTPTypes
import Testing

@testable import FileSharing

/// The fields of answers to files kept between answers (``KeptFileHeads``):
/// given back only for the name and status they were worked out for,
/// bounded, and the same bytes as worked out afresh.
@Suite("Kept file heads")
struct KeptFileHeadsTests {
    static func status(inode: UInt64 = 7, size: Int64 = 4096, modified: Int64 = 1_700_000_000_123_456_789)
        -> FileStatus
    {
        FileStatus(
            kind: .file, device: 1, inode: inode, size: size, modified: modified, changed: modified, born: nil,
            permissions: 0o644, linkCount: 1, owner: 0)
    }

    static func base(_ name: String, _ status: FileStatus) -> FileAnswerFields {
        FileResponses.baseFields(named: name, download: false, metadata: status)
    }

    static func written(_ fields: FileAnswerFields) -> [UInt8] {
        var bytes: [UInt8] = []
        fields.write(into: &bytes)
        return bytes
    }

    @Test("kept fields come back, as bytes the same as planned afresh, while the name and status have not moved")
    func sameStatus() throws {
        let heads = KeptFileHeads()
        let status = Self.status()
        #expect(heads.head(named: "s.txt", status: status) == nil)
        heads.keep(Self.base("s.txt", status), named: "s.txt", status: status)
        let kept = try #require(heads.head(named: "s.txt", status: status))
        // The whole file's answer and a 304's, as the plan makes them.
        guard
            case .send(.ok, let whole, 0, 4096) = FileResponses.plan(
                named: "s.txt", request: [:], download: false, metadata: status),
            case .notModified(let notModified) = FileResponses.plan(
                named: "s.txt", request: [.ifNoneMatch: status.entityTag], download: false, metadata: status)
        else {
            Issue.record("unexpected plans")
            return
        }
        #expect(kept.wholeBytes == Self.written(whole))
        #expect(kept.whole.httpFields == whole.httpFields)
        #expect(kept.baseBytes == Self.written(notModified))
        #expect(kept.base.httpFields == notModified.httpFields)
        #expect(kept.base.entityTag == status.entityTag)
        // Another status of the file (rewritten, replaced, grown): nothing.
        #expect(heads.head(named: "s.txt", status: Self.status(inode: 8)) == nil)
        #expect(heads.head(named: "s.txt", status: Self.status(size: 4097)) == nil)
        #expect(heads.head(named: "s.txt", status: Self.status(modified: 1_700_000_000_123_456_790)) == nil)
        // Nor the same file under another name (a hard link, a rename: the name gives the type).
        #expect(heads.head(named: "s.html", status: status) == nil)
        // Kept again for the new status, the old one is gone.
        let rewritten = Self.status(modified: 1_800_000_000_000_000_000)
        heads.keep(Self.base("s.txt", rewritten), named: "s.txt", status: rewritten)
        #expect(heads.head(named: "s.txt", status: status) == nil)
        #expect(heads.head(named: "s.txt", status: rewritten)?.base.entityTag == rewritten.entityTag)
    }

    @Test("at most its capacity: the files answered last are kept, one found in the older generation is carried on")
    func bounded() {
        let heads = KeptFileHeads(capacity: 8)
        let statuses = (0..<20).map { Self.status(inode: UInt64(100 + $0)) }
        func keep(_ range: Range<Int>) {
            for status in statuses[range] { heads.keep(Self.base("f.bin", status), named: "f.bin", status: status) }
        }
        func isKept(_ index: Int) -> Bool { heads.head(named: "f.bin", status: statuses[index]) != nil }
        keep(0..<6)
        #expect(heads.count <= 8)
        // The newest half (4) is always kept.
        for index in 2..<6 { #expect(isKept(index)) }
        // The third, found in the older generation, is carried into the newer
        // one: still kept after four more.
        #expect(isKept(2))
        keep(6..<10)
        #expect(heads.count <= 8)
        #expect(isKept(2))
        #expect(!isKept(0))
        keep(10..<20)
        #expect(heads.count <= 8)
        for index in 16..<20 { #expect(isKept(index)) }
    }

    @Test(
        "a plan from kept base fields is the plan from the file: conditions and ranges judged the same",
        arguments: [
            [:], [.ifNoneMatch: "\"other\""], [.ifNoneMatch: "*"],
            [.ifModifiedSince: "Sun, 06 Nov 2050 08:49:37 GMT"], [.ifModifiedSince: "Sun, 06 Nov 1994 08:49:37 GMT"],
            [.range: "bytes=10-19"], [.range: "bytes=5000-"], [.range: "bytes=-5", .ifRange: "\"other\""],
        ] as [HTTPFields])
    func samePlan(request: HTTPFields) {
        let status = Self.status()
        let fresh = FileResponses.plan(named: "s.txt", request: request, download: false, metadata: status)
        let fromBase = FileResponses.plan(request: request, metadata: status, base: Self.base("s.txt", status))
        #expect(String(describing: fresh) == String(describing: fromBase))
    }
}
