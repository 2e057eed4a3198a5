import Testing

@testable import FileWatching

/// New files that are copies of existing ones, reported as `duplicated`.
@Suite("Duplicates")
struct DuplicateTests {
    static let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) }

    @Test("same size and content: duplicated with its source, once complete; different content: added")
    func sameContent() {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, detectsDuplicateContent: true)) { fs in
            fs.write("photo.jpg", content: DuplicateTests.big)
            fs.write("empty", content: [])
        }
        h.start()
        h.fs.copy("photo.jpg", "photo copy.jpg", preservingAttributes: false)
        // Same size and same samples (start, middle, end), one byte apart elsewhere.
        var almost = DuplicateTests.big
        almost[50_000] ^= 1
        h.fs.write("almost.jpg", content: almost)
        h.fs.write("another empty", content: [])
        h.process()
        #expect(h.newChanges().isEmpty, "new files wait until complete")
        h.advance(by: .seconds(2))
        #expect(
            Set(h.newChanges().map(\.summary)) == [
                "duplicated photo copy.jpg photo.jpg", "added almost.jpg", "added another empty",
            ])
    }

    @Test("a copy renamed or deleted before it is complete: reported where it ends, or not at all")
    func copyMovesBeforeComplete() {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, detectsDuplicateContent: true)) { fs in
            fs.write("a.txt", content: Array("hello".utf8))
            fs.mkdir("folder")
        }
        h.start()
        h.fs.copy("a.txt", "b.txt", preservingAttributes: false)
        h.fs.copy("a.txt", "gone.txt", preservingAttributes: false)
        h.process()
        h.fs.rename("b.txt", "folder/c.txt")
        h.fs.remove("gone.txt")
        h.process()
        #expect(h.newChanges().isEmpty)
        h.advance(by: .seconds(2))
        #expect(h.newChanges().map(\.summary) == ["duplicated folder/c.txt a.txt"])
    }

    @Test("the older of two items claiming one id keeps it, whatever the scan order", arguments: [false, true])
    func olderKeepsTheID(copySortsFirst: Bool) throws {
        let id = ItemID(rawValue: 0xABCDEF)
        let (original, copy): (ItemPath, ItemPath) =
            copySortsFirst ? ("z-original", "a-copy") : ("a-original", "z-copy")
        var h = CoreHarness(
            options: ObserverOptions(latency: .zero, reportsInitialItems: true, storesIdentityAttribute: true)
        ) { fs in
            let first = fs.write(original, bytes: 10)
            fs.attributes[first] = id
            let second = fs.copy(original, copy, preservingAttributes: true)
            fs.attributes[second] = id
        }
        h.start()
        let originalIndex = try #require(h.core.tree.index(at: original))
        let copyIndex = try #require(h.core.tree.index(at: copy))
        #expect(h.core.tree.id(of: originalIndex) == id)
        #expect(h.core.tree.id(of: copyIndex) != id)
        // What the scan reported agrees, and each file carries its own id.
        let added = Dictionary(
            uniqueKeysWithValues: h.delivered.compactMap { change -> (ItemPath, ItemID)? in
                if case .added(let item) = change { (item.path, item.id) } else { nil }
            })
        #expect(added[original] == id)
        #expect(added[copy] == h.core.tree.id(of: copyIndex))
        #expect(h.fs.attributes[h.fs.resolve(copy)!] == h.core.tree.id(of: copyIndex))
        #expect(h.fs.attributes[h.fs.resolve(original)!] == id)
    }

    @Test(
        "a copy made while the observer was stopped leaves its source the id, though its reused inode seems older",
        arguments: [false, true])
    func restoredHolderKeepsTheID(copySortsFirst: Bool) throws {
        let (original, copy): (ItemPath, ItemPath) =
            copySortsFirst ? ("z-doc", "a-copy") : ("a-doc", "z-copy")
        var h = CoreHarness(
            options: ObserverOptions(latency: .zero, reportsInitialItems: true, storesIdentityAttribute: true)
        ) { fs in
            // ext4 gives a freed number to the next file, with the freed
            // file's birth time within a tick: "old" lends the copy both.
            fs.reusesInodes = true
            fs.write("old", bytes: 1)
            fs.wall += 1_000_000_000
            fs.write(original, bytes: 10)
        }
        h.start()
        let id = h.core.tree.id(of: try #require(h.core.tree.index(at: original)))
        #expect(h.fs.attributes[h.fs.resolve(original)!] == id)
        _ = h.newChanges()
        h.restart { fs in
            fs.remove("old")
            fs.copy(original, copy, preservingAttributes: true)
        }
        // The test's premise: by birth time, the copy is the older.
        #expect(try h.fs.metadata(at: copy).get().created < h.fs.metadata(at: original).get().created)
        let copyID = h.core.tree.id(of: try #require(h.core.tree.index(at: copy)))
        #expect(h.core.tree.id(of: try #require(h.core.tree.index(at: original))) == id)
        #expect(copyID != id)
        let changes = h.newChanges()
        #expect(changes.map(\.summary).contains("duplicated \(copy) \(original)"), "\(changes.map(\.summary))")
        #expect(!changes.contains { $0.id == id }, "\(changes.map(\.summary))")
        #expect(h.fs.attributes[h.fs.resolve(copy)!] == copyID)
        #expect(h.fs.attributes[h.fs.resolve(original)!] == id)
    }
}
