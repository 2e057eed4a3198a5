import DocumentTypes
import Testing

/// Names that clash with nothing, as the Inbox and corrected uploads choose them.
@Suite("Unique names")
struct UniqueNameTests {
    @Test("clash-free names: numbered, counting on from a number, double extensions kept, at most 255 bytes")
    func names() {
        let taken: Set<String> = ["Report.pdf", "Report 2.pdf", "archive.tar.gz", "README", "Scan 4.pdf", ".hidden"]
        #expect(UniqueName.make(for: "New.pdf") { taken.contains($0) } == "New.pdf")
        #expect(UniqueName.make(for: "Report.pdf") { taken.contains($0) } == "Report 3.pdf")
        #expect(UniqueName.make(for: "Report 2.pdf") { taken.contains($0) } == "Report 3.pdf")
        #expect(UniqueName.make(for: "archive.tar.gz") { taken.contains($0) } == "archive 2.tar.gz")
        #expect(UniqueName.make(for: "README") { taken.contains($0) } == "README 2")
        #expect(UniqueName.make(for: "Scan 4.pdf") { taken.contains($0) } == "Scan 5.pdf")
        #expect(UniqueName.make(for: ".hidden") { taken.contains($0) } == ".hidden 2")
        let long = String(repeating: "é", count: 126) + ".pdf"  // 256 bytes
        let made = UniqueName.make(for: long) { $0 == long || $0.utf8.count > 255 }
        #expect(made.utf8.count <= 255 && made.hasSuffix(" 2.pdf"))
    }
}
