import Testing
import ZipStream

/// Names that could extract outside the destination folder, or that no
/// reader would take, are refused; ordinary names, however odd, pass.
@Suite("Entry names")
struct EntryNameTests {
    @Test(
        "refused names throw invalidName",
        arguments: [
            ("../evil.txt", ZipEntryKind.file), ("a/../../evil.txt", .file), ("a/..", .directory), ("..", .directory),
            ("/etc/passwd", .file), ("/", .directory), ("", .file), ("", .directory), ("a\0b", .file),
            ("a//b", .file), ("./a", .file), ("a/./b", .file), ("a/.", .directory), ("a\\..\\..\\evil", .file),
            ("..\\evil", .file), ("\\\\server\\share", .file), ("\\a", .file), ("C:/Windows/evil", .file),
            ("c:evil", .file), ("a:b", .file), ("dir/", .file), ("a//", .directory), ("a\\", .file),
            (String(repeating: "x", count: 65_536), .file), (String(repeating: "x", count: 65_535), .directory),
        ])
    func refused(name: String, kind: ZipEntryKind) {
        let error = #expect(throws: ZipStreamError.self) { try ZipStreamWriter.validate(name: name, kind: kind) }
        #expect(error?.code == .invalidName)
        #expect(error?.entryName == name)
        var zip = ZipStreamWriter()
        #expect(throws: ZipStreamError.self) { _ = try zip.beginEntry(name: name, kind: kind, modified: 0) }
    }

    @Test(
        "odd but harmless names pass",
        arguments: [
            ("..a", ZipEntryKind.file), ("a..", .file), ("...", .file), (".hidden", .file), ("a/b..c/d", .file),
            ("folder", .directory), ("folder/", .directory), ("12:30 meeting.txt", .file),
            ("Été/naïve ☃.txt", .file), (String(repeating: "x", count: 65_535), .file),
            (String(repeating: "x", count: 65_534), .directory),
        ])
    func accepted(name: String, kind: ZipEntryKind) throws {
        try ZipStreamWriter.validate(name: name, kind: kind)
        var zip = ZipStreamWriter()
        let header = try zip.beginEntry(name: name, kind: kind, modified: 0)
        let stored = kind == .directory && !name.hasSuffix("/") ? name + "/" : name
        #expect(Array(header[30..<(30 + stored.utf8.count)]) == Array(stored.utf8))
    }
}
