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

    @Test("a departure whose name a folder the tree holds elsewhere took meanwhile leaves it to that folder's rename")
    func departureOntoFolderRenamedLater() {
        var h = Self.started { fs in
            _ = fs.mkdir("D")
            _ = fs.write("f", bytes: 3)
        }
        let before = h.treeIDs
        // f goes into a folder made a moment before (so its departure is
        // alone in the queue), D takes its name, and a file is made in D.
        _ = h.fs.mkdir("N")
        h.fs.rename("f", "N/f")
        h.fs.rename("D", "f")
        _ = h.fs.write("f/new", bytes: 3)
        // Taken for a folder made at f, D would be in the tree twice, its
        // watch lost with the copy, and f/new never reported.
        h.catchUp()
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
        #expect(h.treeIDs["f"] == before["D"])
        #expect(h.treeIDs["N/f"] == before["f"])
        #expect(h.treeIDs["f/new"] != nil)
    }

    @Test("a write read at a name a saved document was renamed to, before its rename, is not the document made anew")
    func writeAtNameOfSavedDocument() {
        var h = Self.savedOnce()
        let before = h.treeIDs
        // A new file is written at g and renamed to h; the document (whose
        // id is not the one its inode gives) takes the name g. The read
        // ends after the write; the kernel then drops the rest.
        _ = h.fs.write("P/g", bytes: 3)
        h.fs.rename("P/g", "P/h")
        h.fs.rename("P/file", "P/g")
        h.process(atMost: 3)
        h.fs.overflow()
        h.advance(by: .milliseconds(100))
        h.catchUp()
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
        #expect(h.treeIDs["P/g"] == before["P/file"])
        #expect(h.treeIDs["P/h"] != nil && h.treeIDs["P/h"] != before["P/file"])
    }

    @Test("a folder renamed into another and on to a folder made meanwhile, both in one read, keeps its ids")
    func folderRenamedTwiceInOneRead() {
        var h = Self.started { fs in
            _ = fs.mkdir("A")
            _ = fs.write("A/x", bytes: 3)
            _ = fs.mkdir("B")
        }
        let before = h.treeIDs
        // A goes into B (both watched), N is made, A goes on into N (not
        // watched yet: its departure from B is alone), and B is renamed,
        // so A's path in the tree leads nowhere when N is listed.
        h.fs.rename("A", "B/A2")
        _ = h.fs.mkdir("N")
        h.fs.rename("B/A2", "N/A3")
        h.fs.rename("B", "C")
        h.catchUp()
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
        #expect(h.treeIDs["N/A3"] == before["A"])
        #expect(h.treeIDs["N/A3/x"] == before["A/x"])
        #expect(h.treeIDs["C"] == before["B"])
    }

    @Test("a file whose folder this read renames away is found where an arrival read before it is")
    func fileOfDepartingFolderAtArrival() {
        var h = Self.started { fs in
            _ = fs.mkdir("D")
            _ = fs.write("D/f", bytes: 3)
        }
        let before = h.treeIDs
        // M comes from outside (not watched yet), D goes into it, f goes
        // on from D to g, and M and g swap names through t: by the time
        // M's arrival is read, f is at M.
        h.fs.moveIn(directory: "M", files: ["a"])
        h.fs.rename("D", "M/D2")
        h.fs.rename("M/D2/f", "g")
        h.fs.rename("M", "t")
        h.fs.rename("g", "M")
        h.fs.rename("t", "g")
        h.catchUp()
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
        #expect(h.treeIDs["M"] == before["D/f"])
        #expect(h.treeIDs["g/D2"] == before["D"])
    }

    @Test("a copy carrying a file's id is listed before the file, set aside by a rescan, comes back")
    func copyBeforeSetAsideFile() {
        var h = CoreHarness(
            options: ObserverOptions(settleTime: .milliseconds(50), latency: .zero, storesIdentityAttribute: true)
        ) { fs in
            _ = fs.mkdir("P")
            _ = fs.mkdir("P/D")
            _ = fs.write("P/D/b", bytes: 3)
            _ = fs.mkdir("Q")
        }
        h.start()
        let before = h.treeIDs
        // `cp -a` beside D (the id in the copy's attribute), then P and Q
        // swap names; the kernel drops the events. The rescan sets P's
        // folder aside to free its name; back at Q, its listing has the
        // copy, and D, whose own listing comes after.
        h.fs.copy("P/D/b", "P/c", preservingAttributes: true)
        h.fs.rename("P", "t")
        h.fs.rename("Q", "P")
        h.fs.rename("t", "Q")
        h.fs.overflow()
        h.advance(by: .milliseconds(100))
        h.catchUp()
        #expect(h.treeIDs["Q/D/b"] == before["P/D/b"])
        #expect(h.treeIDs["Q/c"] != nil && h.treeIDs["Q/c"] != before["P/D/b"])
        #expect(h.treeIDs["Q"] == before["P"])
    }
}
