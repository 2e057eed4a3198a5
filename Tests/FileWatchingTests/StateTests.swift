import Testing

@testable import FileWatching

/// The saved state: round trips, damage and other roots refused, and what
/// changed while the observer was stopped reported with ids kept.
@Suite("Saved state")
struct StateTests {
    static let identity = FileIdentity(device: 42, inode: 1, birth: 1)

    func sampleTree() -> (CoreHarness, [UInt8]) {
        var h = CoreHarness { fs in
            fs.mkdir("Comics")
            fs.write("Comics/Issue 1.cbz", bytes: 100)
            fs.mkdir("Comics/Old")
            fs.write("notes.txt", bytes: 5)
            fs.write(ItemPath(bytes: Array("caf".utf8) + [0xE9]), bytes: 1)
        }
        h.start()
        return (h, h.core.encodedState(rootIdentity: h.fs.metadata(of: 1).identity)!)
    }

    @Test("a state round-trips: paths, ids, kinds, sizes, times, identities")
    func roundTrip() throws {
        let (h, bytes) = sampleTree()
        let tree = try StateFile.decode(bytes, root: "/fake", rootIdentity: h.fs.metadata(of: 1).identity)
        var original: [ItemPath: (ItemID, FileMetadata)] = [:]
        h.core.tree.walk(from: Tree.rootIndex) {
            original[h.core.tree.path(of: $0)] = (h.core.tree.id(of: $0), h.core.tree.metadata(of: $0))
        }
        var restored: [ItemPath: (ItemID, FileMetadata)] = [:]
        tree.walk(from: Tree.rootIndex) { restored[tree.path(of: $0)] = (tree.id(of: $0), tree.metadata(of: $0)) }
        #expect(original.keys.sorted() == restored.keys.sorted())
        for (path, value) in original {
            #expect(restored[path]?.0 == value.0 && restored[path]?.1 == value.1, "\(path)")
        }
    }

    @Test(
        "damaged, truncated, foreign or other-root states are refused with a reason",
        arguments: ["flip", "truncate", "magic", "root-path", "root-identity", "empty"])
    func refused(damage: String) {
        let (h, original) = sampleTree()
        var bytes = original
        var root = "/fake"
        var identity = h.fs.metadata(of: 1).identity
        switch damage {
        case "flip": bytes[bytes.count / 2] ^= 0x40
        case "truncate": bytes.removeLast(20)
        case "magic": bytes[0] = UInt8(ascii: "X")
        case "root-path": root = "/elsewhere"
        case "root-identity": identity.inode += 1
        default: bytes = []
        }
        #expect(throws: StateFile.Unusable.self) { try StateFile.decode(bytes, root: root, rootIdentity: identity) }
    }

    @Test("what changed while stopped: renames and moves keep their ids, an earlier time is a modification")
    func changesWhileStopped() throws {
        var (h, _) = sampleTree()
        let issue = h.core.tree.id(of: try #require(h.core.tree.index(at: "Comics/Issue 1.cbz")))
        let comics = h.core.tree.id(of: try #require(h.core.tree.index(at: "Comics")))
        let notes = h.core.tree.id(of: try #require(h.core.tree.index(at: "notes.txt")))
        h.restart { fs in
            fs.rename("Comics", "Library")
            fs.rename("Library/Issue 1.cbz", "Issue 1.cbz")
            fs.open("notes.txt")
            fs.append("notes.txt", bytes: 0)
            fs.close("notes.txt")
            fs.touch("notes.txt", modified: 1_000)  // set back to long ago
            fs.remove("Library/Old")
            fs.write("new.pdf", bytes: 3)
        }
        let changes = h.newChanges()
        let summaries = changes.map(\.summary)
        #expect(summaries.first == "scan-started")
        #expect(summaries.last == "scan-completed 5")
        #expect(
            Set(summaries.dropFirst().dropLast()) == [
                // Root entries are settled in name order: the file leaves Comics before Comics is renamed.
                "moved Comics/Issue 1.cbz Issue 1.cbz", "renamed Comics Library", "modified notes.txt writing",
                "removed Library/Old", "added new.pdf",
            ])
        #expect(changes.first { $0.summary.hasPrefix("renamed") }?.id == comics)
        #expect(changes.first { $0.summary.hasPrefix("moved") }?.id == issue)
        #expect(changes.first { $0.summary.hasPrefix("modified") }?.id == notes)
        #expect(h.treeSnapshot == h.fs.snapshot())
    }

    @Test("a file being written when the state was saved gets its finished after the restart")
    func writingAcrossRestart() {
        var h = CoreHarness()
        h.start()
        h.fs.create("big.iso")
        h.fs.append("big.iso", bytes: 10)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added big.iso writing"])
        h.restart { fs in
            fs.append("big.iso", bytes: 10)
            fs.close("big.iso")
        }
        _ = h.newChanges()
        h.advance(by: .seconds(2))
        #expect(h.newChanges().map(\.summary) == ["finished big.iso 20"])
    }

    @Test("no state yet is an empty view: every item is added; an unusable one says why first")
    func emptyView() {
        var h = CoreHarness { fs in
            fs.mkdir("a"); fs.write("a/b", bytes: 1)
        }
        h.core.start = .empty(message: "state.bin: damaged")
        h.core.scan(at: h.now)
        let summaries = h.core.takeBatch(force: true).map(\.summary)
        #expect(summaries == ["scan-started", "error state.bin: damaged", "added a/", "added a/b", "scan-completed 2"])
    }
}
