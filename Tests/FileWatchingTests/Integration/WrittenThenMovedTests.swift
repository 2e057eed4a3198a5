import FileshareTestSupport
import Foundation
import Testing

@testable import FileWatching

/// A file written in place and moved at once, as an editor or a sync tool
/// does: the move keeps the file's id. Found by the Documents random test.
@Suite("A file written and moved at once, on a real folder", .holdsObservers)
struct WrittenThenMovedTests {
    @Test("saved atomically, written in place, then moved to another folder at once: one id, moved")
    func writtenThenMoved() async throws {
        let folder = try TemporaryFolder()
        try folder.write("start", to: "doc.txt")
        try FileManager.default.createDirectory(atPath: folder("sub"), withIntermediateDirectories: true)
        let probe = try ObserverProbe(folder.path)
        #expect(await probe.scanned())
        await probe.observer.sync()
        // An atomic save by an editor first: a new file renamed over it.
        try folder.write("saved", to: "doc.txt.tmp")
        #expect(rename(folder("doc.txt.tmp"), folder("doc.txt")) == 0)
        await probe.observer.sync()
        let id = try #require(probe.observer.item(at: "doc.txt")?.id)
        let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: folder("doc.txt")))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("rewritten".utf8))
        try handle.close()
        #expect(rename(folder("doc.txt"), folder("sub/moved.txt")) == 0)
        #expect(await probe.wait { _ in probe.observer.item(at: "sub/moved.txt") != nil })
        await probe.observer.sync()
        // Once a known fault: the observer looked at the name after the
        // write, found it gone (moved by then) and reported `removed` and
        // `added` anew; now the rename's own events say where it went.
        #expect(probe.observer.item(at: "sub/moved.txt")?.id == id)
        #expect(
            probe.liveChanges.contains {
                if case .moved(_, let to, let movedID, _) = $0 {
                    to == "sub/moved.txt" && movedID == id
                } else {
                    false
                }
            }, "\(probe.liveChanges)")
    }
}
