import Testing

@testable import FileWatching

/// Reads of the kernel's queue that end while programs go on changing the
/// folder: a rename's halves in two reads, renames queued behind the read,
/// a look at the disk that sees what the queue has not said yet, a queue
/// that overflows after a rename's first half. Each case is a sequence the
/// random simulation found (shortened), with the ids it must keep.
@Suite("Observer logic, reads that end while programs go on")
struct SplitReadTests {
    /// A started observer whose reads go through the rename pairing.
    static func started(setUp: (FakeFileSystem) -> Void) -> CoreHarness {
        var h = CoreHarness(options: ObserverOptions(settleTime: .milliseconds(50), latency: .zero), setUp: setUp)
        h.pairing = MovePairing()
        h.start()
        return h
    }

    /// Folders P and Q with files a and b, then Q, P/a and P/b rotated
    /// through a temporary name (not read yet); the ids before.
    static func rotated() -> (CoreHarness, [ItemPath: ItemID]) {
        let h = Self.started { fs in
            for folder in ["P", "Q"] {
                _ = fs.mkdir(ItemPath(folder))
                for file in ["a", "b"] { _ = fs.write(ItemPath("\(folder)/\(file)"), bytes: 3) }
            }
        }
        let before = h.treeIDs
        h.fs.rename("Q", "t")
        h.fs.rename("P/a", "Q")
        h.fs.rename("P/b", "P/a")
        h.fs.rename("t", "P/b")
        return (h, before)
    }

    /// A started observer with `P/file`, saved once through a hidden
    /// temporary name: its id is no longer the one its inode gives.
    static func savedOnce() -> CoreHarness {
        var h = Self.started { fs in
            _ = fs.mkdir("P")
            _ = fs.write("P/file", bytes: 3)
        }
        _ = h.fs.write("P/.t", bytes: 9)
        h.fs.rename("P/.t", "P/file")
        h.catchUp()
        return h
    }

    static func expectRotated(_ after: [ItemPath: ItemID], from before: [ItemPath: ItemID]) {
        #expect(after["Q"] == before["P/a"])
        #expect(after["P/a"] == before["P/b"])
        #expect(after["P/b"] == before["Q"])
        #expect(after["P/b/a"] == before["Q/a"])
        #expect(after.count == before.count)
    }

    @Test("names a read could not settle wait while more events are queued")
    func settledOnceQueueIsRead() {
        var (h, before) = Self.rotated()
        // The first read ends after the first rename: the disk has no `t`
        // any more. Looked at now, the folder would run ahead of the queue.
        h.process(atMost: 3)
        h.catchUp()
        Self.expectRotated(h.treeIDs, from: before)
    }

    @Test("a rename the tree already shows, after a look that ran ahead, is old news")
    func renameAlreadyApplied() {
        var (h, before) = Self.rotated()
        // The queue looked empty after the first rename's events were read:
        // the program renamed on just after, and the check of the name `t`
        // (gone from disk) rescanned the folder as the disk is now.
        let events = h.fs.takeEvents()
        h.core.handle(Array(events.prefix(3)), at: h.now)
        h.core.handle(Array(events.dropFirst(3)), at: h.now)
        h.catchUp()
        Self.expectRotated(h.treeIDs, from: before)
        #expect(!h.newChanges().contains { if case .removed = $0 { true } else { false } })
    }

    @Test("a rescan of a folder finds an item moved in from outside it by its identity")
    func rescanFindsItemFromOutside() {
        var h = Self.started { fs in
            for folder in ["P", "Q"] { _ = fs.mkdir(ItemPath(folder)) }
            _ = fs.write("Q/b", bytes: 3)
        }
        let before = h.treeIDs
        h.fs.rename("Q/b", "P/n")
        let events = h.fs.takeEvents()
        // Only P is rescanned (its events were lost); Q's departure comes later.
        let watch = events.first { if case .movedTo = $0.kind { true } else { false } }!.watch
        h.core.handle([SourceEvent(watch: watch, kind: .rescan)], at: h.now)
        h.core.handle(events, at: h.now)
        h.catchUp()
        #expect(h.treeIDs["P/n"] == before["Q/b"])
        #expect(h.treeIDs["Q/b"] == nil)
    }

    @Test("a rename's first half before an overflow leaves the item to the rescan")
    func departureBeforeOverflow() {
        var h = Self.savedOnce()
        let before = h.treeIDs
        // The folder renamed and made anew at its name.
        h.fs.rename("P", "R")
        _ = h.fs.mkdir("P")
        // The read ends after the first half; the kernel then drops the rest.
        h.process(atMost: 1)
        h.fs.overflow()
        h.advance(by: .milliseconds(100))
        h.catchUp()
        let after = h.treeIDs
        #expect(after["R"] == before["P"])
        #expect(after["R/file"] == before["P/file"])
        #expect(after["P"] != nil && after["P"] != before["P"])
    }

    @Test("a write to a name that renames queued behind the read gave to another file, then an overflow")
    func writeBeforeQueuedSwap() {
        var h = Self.started { fs in
            for file in ["A", "B"] { _ = fs.write(ItemPath(file), bytes: 3) }
        }
        let before = h.treeIDs
        h.fs.open("B")
        h.fs.append("B", bytes: 5)
        h.fs.close("B")
        // A and B swap names through a temporary one.
        h.fs.rename("A", "t")
        h.fs.rename("B", "A")
        h.fs.rename("t", "B")
        // The read ends after the write: the disk has A's file at B by now,
        // and the kernel then drops the renames. Taken for B written anew,
        // B's id would go to A's file, and the rescan would keep it there.
        h.process(atMost: 1)
        h.fs.overflow()
        h.advance(by: .milliseconds(100))
        h.catchUp()
        let after = h.treeIDs
        #expect(after["A"] == before["B"])
        #expect(after["B"] == before["A"])
    }

    @Test("an item renamed into a new folder is found there while its departure is held for its partner")
    func arrivalBeforeHeldDeparture() {
        var h = Self.savedOnce()
        let before = h.treeIDs
        // Into a folder made a moment before, not watched yet: the kernel
        // reports the departure alone, and the pairing holds it back while
        // the folder's creation is handled.
        _ = h.fs.mkdir("N")
        h.fs.rename("P/file", "N/x")
        h.process()
        h.advance(by: .milliseconds(100))
        h.catchUp()
        #expect(h.treeIDs["N/x"] == before["P/file"])
        #expect(h.treeIDs["P/file"] == nil)
    }

    @Test("a hard link made in a new folder is not its file, moved, when the file's folder is renamed later")
    func linkWhileFolderRenamed() {
        var h = Self.started { fs in
            _ = fs.mkdir("P")
            _ = fs.write("P/file", bytes: 3)
        }
        let before = h.treeIDs
        h.fs.rename("P", "R")
        _ = h.fs.mkdir("P")
        h.fs.link("R/file", "P/link")
        h.fs.rename("R", "S")
        h.catchUp()
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
        #expect(h.treeIDs["S/file"] == before["P/file"])
        #expect(h.treeIDs["P/link"] != nil && h.treeIDs["P/link"] != before["P/file"])
    }
}
