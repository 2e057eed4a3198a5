import Testing

@testable import FileWatching

/// The observer's logic as a state machine: kernel-like events from an
/// in-memory file system and an injected clock in, changes out.
@Suite("Observer logic")
struct ObserverCoreTests {
    @Test("the initial scan reports every item, parents first, when asked")
    func initialScan() {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, reportsInitialItems: true)) { fs in
            fs.mkdir("a")
            fs.mkdir("a/b")
            fs.write("a/b/c.txt", bytes: 5)
            fs.write("top.txt", bytes: 1)
            fs.write(".hidden", bytes: 1)
        }
        h.start()
        let summaries = h.delivered.map(\.summary)
        #expect(summaries.first == "scan-started")
        #expect(summaries.last == "scan-completed 4")
        #expect(summaries.firstIndex(of: "added a/")! < summaries.firstIndex(of: "added a/b/")!)
        #expect(summaries.firstIndex(of: "added a/b/")! < summaries.firstIndex { $0.hasPrefix("added a/b/c.txt") }!)
        #expect(!summaries.contains { $0.contains(".hidden") })
    }

    @Test("without --initial the scan says only when it starts and ends")
    func quietScan() {
        var h = CoreHarness { fs in fs.write("x", bytes: 1) }
        h.start()
        #expect(h.delivered.map(\.summary) == ["scan-started", "scan-completed 1"])
    }

    @Test("a new file is added while written and finished once closed and settled")
    func writeFinished() {
        var h = CoreHarness()
        h.start()
        h.fs.create("doc.pdf")
        h.fs.append("doc.pdf", bytes: 100)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added doc.pdf writing"])
        h.fs.append("doc.pdf", bytes: 100)
        h.advance(by: .milliseconds(500))
        #expect(h.newChanges().map(\.summary) == ["modified doc.pdf writing"], "each window with writes says so")
        h.fs.close("doc.pdf")
        h.advance(by: .milliseconds(900))
        #expect(h.newChanges().isEmpty, "not before the settle time")
        h.advance(by: .milliseconds(200))
        #expect(h.newChanges().map(\.summary) == ["finished doc.pdf 200"])
    }

    @Test("a writer that pauses longer than the settle time with the file open gets no early finished")
    func pausingWriter() {
        var h = CoreHarness()
        h.start()
        h.fs.create("big.iso")
        h.fs.append("big.iso", bytes: 1 << 20)
        h.process()
        _ = h.newChanges()
        h.advance(by: .seconds(30))
        #expect(h.newChanges().isEmpty, "the lease check sees the open writer")
        h.fs.append("big.iso", bytes: 1 << 20)
        h.fs.close("big.iso")
        h.advance(by: .seconds(2))
        #expect(h.newChanges().map(\.summary) == ["modified big.iso writing", "finished big.iso 2097152"])
    }

    @Test("without leases, finished waits for the kernel's close")
    func pausingWriterWithoutLeases() {
        var h = CoreHarness()
        h.fs.leasesWork = false
        h.start()
        h.fs.create("big.iso")
        h.fs.append("big.iso", bytes: 10)
        h.process()
        _ = h.newChanges()
        h.advance(by: .seconds(30))
        #expect(h.newChanges().isEmpty)
        h.fs.close("big.iso")
        h.advance(by: .seconds(2))
        #expect(h.newChanges().map(\.summary) == ["finished big.iso 10"])
    }

    @Test("a modified file is reported once while written, then finished")
    func modifyExisting() {
        var h = CoreHarness { fs in fs.write("notes.txt", bytes: 3) }
        h.start()
        h.fs.open("notes.txt")
        h.fs.append("notes.txt", bytes: 2)
        h.fs.append("notes.txt", bytes: 2)
        h.fs.close("notes.txt")
        h.process()
        #expect(h.newChanges().map(\.summary) == ["modified notes.txt writing"])
        h.advance(by: .seconds(2))
        #expect(h.newChanges().map(\.summary) == ["finished notes.txt 7"])
    }

    @Test("renames in a folder, moves across folders, one event for a folder with its content")
    func renamesAndMoves() throws {
        var h = CoreHarness { fs in
            fs.mkdir("a")
            fs.mkdir("b")
            fs.write("a/one.txt", bytes: 1)
            fs.mkdir("a/sub")
            for i in 0..<50 { fs.write(ItemPath("a/sub/f\(i)"), bytes: 1) }
        }
        h.start()
        let id = try #require(h.core.tree.index(at: "a/one.txt")).self
        let itemID = h.core.tree.id(of: id)
        h.fs.rename("a/one.txt", "a/uno.txt")
        h.fs.rename("a/uno.txt", "b/uno.txt")
        h.fs.rename("a/sub", "b/sub2")
        h.process()
        let changes = h.newChanges()
        #expect(
            changes.map(\.summary) == [
                "renamed a/one.txt a/uno.txt", "moved a/uno.txt b/uno.txt", "moved a/sub b/sub2",
            ])
        #expect(changes[0].id == itemID && changes[1].id == itemID)
        #expect(h.treeSnapshot == h.fs.snapshot())
        // The moved folder's watch still reports, under its new path.
        h.fs.write("b/sub2/new.txt", bytes: 1)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added b/sub2/new.txt writing"])
    }

    @Test("a folder moved out is one removed, and its watches go")
    func moveOut() {
        var h = CoreHarness { fs in
            fs.mkdir("d")
            fs.mkdir("d/e")
            fs.write("d/e/f", bytes: 1)
        }
        h.start()
        let watches = h.fs.watchCount
        h.fs.moveOut("d")
        h.process()
        #expect(h.newChanges().map(\.summary) == ["removed d"])
        #expect(h.fs.watchCount == watches - 2)
        #expect(h.treeSnapshot.isEmpty)
    }

    @Test("a folder moved in from outside is added with its content, complete")
    func moveIn() {
        var h = CoreHarness()
        h.start()
        h.fs.moveIn(directory: "album", files: ["1.jpg", "2.jpg"])
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added album/", "added album/1.jpg", "added album/2.jpg"])
    }

    @Test("the new-folder race: what was created before the watch is reported")
    func newFolderRace() {
        var h = CoreHarness()
        h.start()
        // mkdir -p x/y && echo > x/y/z, all before the observer reads its queue;
        // z is closed by then (complete), w is still being written.
        h.fs.mkdir("x")
        h.fs.mkdir("x/y")
        h.fs.write("x/y/z", bytes: 3)
        h.fs.create("x/y/w")
        h.fs.append("x/y/w", bytes: 5)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added x/", "added x/y/", "added x/y/w writing", "added x/y/z"])
        #expect(h.treeSnapshot == h.fs.snapshot())
    }

    @Test("an atomic save is modified of the target, which keeps its id", arguments: ["doc.txt.tmp", ".doc.txt.swp"])
    func atomicSave(temporary: String) throws {
        var h = CoreHarness { fs in fs.write("doc.txt", bytes: 10) }
        h.start()
        let before = try #require(h.core.tree.index(at: "doc.txt"))
        let id = h.core.tree.id(of: before)
        h.fs.write(ItemPath(temporary), bytes: 12)
        h.fs.rename(ItemPath(temporary), "doc.txt")
        h.process()
        #expect(h.newChanges().map(\.summary) == ["modified doc.txt"])
        #expect(h.core.tree.index(of: id) != nil)
        #expect(h.core.tree.identity(of: h.core.tree.index(of: id)!).inode == h.fs.resolve("doc.txt"))
    }

    @Test(
        "a folder exchanged with one from a hidden name (a package's atomic save) keeps its id, and so does what is in it, by name; after an overflow it is removed and added",
        arguments: [false, true])
    func folderSavedAnew(overflows: Bool) throws {
        var h = CoreHarness { fs in
            fs.mkdir("doc.pkg")
            fs.write("doc.pkg/index.xml", bytes: 10)
            fs.write("doc.pkg/old.png", bytes: 5)
            fs.mkdir("doc.pkg/Data")
            fs.write("doc.pkg/Data/a", bytes: 3)
            fs.mkdir(".staging")
        }
        h.start()
        let before = h.treeIDs
        // The new package, written whole under a hidden name, then exchanged with the old.
        h.fs.mkdir(".staging/new")
        h.fs.write(".staging/new/index.xml", bytes: 12)
        h.fs.write(".staging/new/new.png", bytes: 7)
        h.fs.mkdir(".staging/new/Data")
        h.fs.write(".staging/new/Data/a", bytes: 3)
        h.fs.wall += 3_600_000_000_000
        h.process()
        #expect(h.newChanges().isEmpty)
        h.fs.exchange(".staging/new", "doc.pkg")
        // (An overflow: the kernel's queue lost the events; a rescan cannot
        // tell where the old folder went, so it is removed and the new added.)
        if overflows { h.fs.overflow() }
        h.process()
        let reported = h.newChanges().map(\.summary).filter { !$0.hasPrefix("rescanned") }
        if overflows {
            #expect(
                reported == [
                    "removed doc.pkg", "added doc.pkg/", "added doc.pkg/Data/", "added doc.pkg/index.xml",
                    "added doc.pkg/new.png", "added doc.pkg/Data/a",
                ], "\(reported)")
            #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
            return
        }
        #expect(
            reported.sorted() == [
                "added doc.pkg/new.png", "modified doc.pkg/Data/a", "modified doc.pkg/index.xml",
                "removed doc.pkg/old.png",
            ])
        let after = h.treeIDs
        for path in ["doc.pkg", "doc.pkg/index.xml", "doc.pkg/Data", "doc.pkg/Data/a"] {
            #expect(after[ItemPath(path)] == before[ItemPath(path)], "\(path)")
        }
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
        let package = try #require(h.core.tree.index(at: "doc.pkg"))
        #expect(h.core.tree.identity(of: package).inode == h.fs.resolve("doc.pkg"))
        // The old package, now at the hidden name, goes: nothing to report.
        h.fs.removeTree(".staging/new")
        h.process()
        #expect(h.newChanges().isEmpty)
        // What happens in the package afterwards is seen (its new folders are watched).
        h.fs.write("doc.pkg/Data/b", bytes: 1)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added doc.pkg/Data/b writing"])
    }

    @Test(
        "a file written in place and moved before the observer looks keeps its id: modified, moved, finished",
        arguments: [false, true])
    func writtenThenMoved(twoReads: Bool) throws {
        var h = CoreHarness { fs in
            fs.write("doc.txt", bytes: 5)
            fs.mkdir("sub")
        }
        h.start()
        let id = h.core.tree.id(of: try #require(h.core.tree.index(at: "doc.txt")))
        h.fs.open("doc.txt")
        h.fs.append("doc.txt", bytes: 4)
        h.fs.close("doc.txt")
        if twoReads {
            // The write's events in one read, the rename's in the next; the disk has moved on by the first.
            let writes = h.fs.takeEvents()
            h.fs.rename("doc.txt", "sub/moved.txt")
            h.core.handle(writes, at: h.now)
        } else {
            h.fs.rename("doc.txt", "sub/moved.txt")
        }
        h.process()
        #expect(h.newChanges().map(\.summary) == ["modified doc.txt writing", "moved doc.txt sub/moved.txt"])
        h.advance(by: .seconds(2))
        #expect(h.newChanges().map(\.summary) == ["finished sub/moved.txt 9"])
        #expect(h.core.tree.index(at: "sub/moved.txt").map { h.core.tree.id(of: $0) } == id)
        #expect(h.treeSnapshot == h.fs.snapshot())
    }

    @Test("an atomic save whose temporary file was already reported removes it")
    func atomicSaveReported() {
        var h = CoreHarness { fs in fs.write("doc.txt", bytes: 10) }
        h.start()
        h.fs.write("doc.txt.tmp", bytes: 12)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added doc.txt.tmp writing"])
        h.fs.rename("doc.txt.tmp", "doc.txt")
        h.process()
        #expect(h.newChanges().map(\.summary) == ["removed doc.txt.tmp", "modified doc.txt"])
    }

    @Test("a temporary file created and deleted inside the latency window is not reported")
    func coalescedTemporary() {
        var h = CoreHarness(options: ObserverOptions(latency: .milliseconds(50)))
        h.start()
        h.fs.write("scratch", bytes: 1)
        h.process()
        h.fs.remove("scratch")
        h.advance(by: .milliseconds(60))
        #expect(h.liveChanges.isEmpty)
    }

    @Test("a file deleted and created again under its name is another item")
    func recreated() throws {
        var h = CoreHarness { fs in fs.write("a.txt", bytes: 1) }
        h.start()
        let old = h.core.tree.id(of: try #require(h.core.tree.index(at: "a.txt")))
        h.fs.remove("a.txt")
        h.fs.write("a.txt", bytes: 2)
        h.process()
        let changes = h.newChanges()
        #expect(changes.map(\.summary) == ["removed a.txt", "added a.txt writing"])
        #expect(changes[1].id != old)
    }

    @Test("hard links are two items with two ids")
    func hardLinks() {
        var h = CoreHarness()
        h.start()
        h.fs.write("one", bytes: 1)
        h.fs.link("one", "two")
        h.process()
        let added = h.newChanges().filter { if case .added = $0 { true } else { false } }
        #expect(added.count == 2)
        #expect(Set(added.compactMap(\.id)).count == 2)
    }

    @Test("hidden names and exclusion globs are left out with their subtrees")
    func filters() {
        var h = CoreHarness(
            options: ObserverOptions(excludedNames: ["*.tmp", "node_modules", "build/out"], latency: .zero))
        h.start()
        h.fs.mkdir("node_modules")
        h.fs.write("node_modules/x.js", bytes: 1)
        h.fs.write("a.tmp", bytes: 1)
        h.fs.write(".secret", bytes: 1)
        h.fs.mkdir("build")
        h.fs.mkdir("build/out")
        h.fs.write("build/keep", bytes: 1)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added build/", "added build/keep"])
    }

    @Test("--hidden includes names starting with a dot")
    func hiddenIncluded() {
        var h = CoreHarness(options: ObserverOptions(includesHidden: true, latency: .zero))
        h.start()
        h.fs.write(".config", bytes: 1)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["added .config writing"])
    }

    @Test("rm -rf ends with the folder's removed, which covers what is left under it")
    func removeTree() {
        var h = CoreHarness { fs in
            fs.mkdir("t")
            fs.write("t/a", bytes: 1)
            fs.mkdir("t/u")
        }
        h.start()
        h.fs.removeTree("t")
        h.process()
        // The events of the children are read when their folder is gone
        // already: the folder's one removed covers them.
        #expect(h.newChanges().map(\.summary) == ["removed t"])
        #expect(h.treeSnapshot.isEmpty)
        // Read one at a time, each child has its own.
        h.fs.mkdir("v")
        h.fs.write("v/a", bytes: 1)
        h.process()
        _ = h.newChanges()
        h.fs.remove("v/a")
        h.process()
        h.fs.remove("v")
        h.process()
        #expect(h.newChanges().map(\.summary) == ["removed v/a", "removed v"])
    }

    @Test("a queue overflow rescans, finds renames by identity, and says so")
    func overflow() throws {
        var h = CoreHarness { fs in
            fs.mkdir("a")
            fs.write("a/x", bytes: 1)
            fs.write("gone", bytes: 1)
        }
        h.start()
        let id = h.core.tree.id(of: try #require(h.core.tree.index(at: "a/x")))
        h.fs.mkdir("b")
        h.fs.rename("a/x", "b/y")
        h.fs.remove("gone")
        h.fs.write("b/new", bytes: 1)
        h.fs.overflow()
        h.process()
        let changes = h.newChanges()
        // b/new was closed before the rescan found it: complete.
        #expect(
            Set(changes.map(\.summary)) == [
                "added b/", "moved a/x b/y", "added b/new", "removed gone", "rescanned  overflow",
            ])
        #expect(changes.last?.summary == "rescanned  overflow")
        #expect(changes.first { $0.summary.hasPrefix("moved") }?.id == id)
        #expect(h.treeSnapshot == h.fs.snapshot())
    }

    @Test("the watch limit degrades a subtree to polling, which still sees its changes")
    func watchLimit() {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, degradedPollingInterval: .seconds(2))) { fs in
            fs.mkdir("a")
            fs.mkdir("b")
        }
        h.fs.watchLimit = 2  // the root and "a"
        h.start()
        let degraded = h.delivered.filter { if case .degraded = $0 { true } else { false } }
        #expect(degraded.map(\.summary) == ["degraded b watch-limit"])
        if case .degraded(_, _, let hint)? = degraded.first { #expect(hint.contains("max_user_watches")) }
        h.fs.write("b/inside", bytes: 1)
        h.process()
        #expect(h.newChanges().isEmpty, "no watch, no event")
        h.advance(by: .milliseconds(2100))
        #expect(h.newChanges().map(\.summary).first == "added b/inside")
    }

    @Test("an unreadable folder is degraded with a hint, not skipped silently")
    func unreadableFolder() {
        var h = CoreHarness { fs in fs.mkdir("private") }
        h.fs.unreadable = ["private"]
        h.start()
        #expect(h.delivered.map(\.summary).contains("degraded private permission"))
    }

    @Test("the root deleted or moved away ends the stream", arguments: [false, true])
    func rootRemoved(moved: Bool) {
        var h = CoreHarness()
        h.start()
        // The root's own watch reports it.
        h.core.handle([SourceEvent(watch: 1, kind: moved ? .selfMoved : .selfDeleted, isDirectory: true)], at: h.now)
        h.delivered += h.core.takeBatch(force: true)
        #expect(h.newChanges().map(\.summary).last == "root-removed")
        #expect(h.core.isRootRemoved)
    }

    @Test("touch of an existing file is modified, without writing")
    func touch() {
        var h = CoreHarness { fs in fs.write("t", bytes: 1) }
        h.start()
        h.fs.touch("t", modified: 12345)
        h.process()
        #expect(h.newChanges().map(\.summary) == ["modified t"])
    }

    @Test("several changes to one file in the window fold into one")
    func foldModifications() {
        var h = CoreHarness(options: ObserverOptions(latency: .milliseconds(50))) { fs in fs.write("t", bytes: 1) }
        h.start()
        h.fs.touch("t", modified: 1)
        h.process()
        h.fs.touch("t", modified: 2)
        h.advance(by: .milliseconds(60))
        #expect(h.liveChanges.map(\.summary) == ["modified t"])
    }

    @Test("polling finds additions, removals and renames by identity")
    func polling() {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, pollingInterval: .seconds(1))) { fs in
            fs.write("keep", bytes: 1)
            fs.write("old", bytes: 1)
        }
        h.start()
        #expect(h.fs.watchCount == 0)
        h.fs.rename("old", "new")
        h.fs.write("added", bytes: 1)
        h.advance(by: .milliseconds(1100))
        #expect(Set(h.newChanges().map(\.summary)) == ["renamed old new", "added added"])
        #expect(h.treeSnapshot == h.fs.snapshot())
    }

    @Test("a root on a network file system is polled, and says so")
    func remoteRoot() {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, degradedPollingInterval: .seconds(1)))
        h.fs.remote = [.root: "nfs"]
        h.start()
        #expect(h.delivered.map(\.summary).contains("degraded  unsupported-filesystem"))
        #expect(h.fs.watchCount == 0)
        h.fs.write("from-another-machine", bytes: 1)
        h.advance(by: .milliseconds(1100))
        #expect(h.newChanges().map(\.summary).first == "added from-another-machine")
    }

    @Test("opt-in identity attributes: kept on items, reused when an item comes back, never shared")
    func identityAttribute() throws {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, storesIdentityAttribute: true)) { fs in
            fs.write("original", bytes: 1)
        }
        h.start()
        let original = try #require(h.core.tree.index(at: "original"))
        let id = h.core.tree.id(of: original)
        #expect(h.fs.attributes[h.fs.resolve("original")!] == id, "written on first sight")
        // A copy that carries the attribute (cp -a writes it last) is reported
        // once complete, as a duplicate of the original, with its own id.
        let copy = h.fs.copy("original", "copy", preservingAttributes: true)
        h.process()
        #expect(h.newChanges().isEmpty, "not reported while being written")
        h.advance(by: .seconds(2))
        let reported = h.newChanges()
        #expect(reported.map(\.summary) == ["duplicated copy original"])
        let copyID = try #require(reported.first?.id)
        #expect(copyID != id)
        #expect(h.fs.attributes[copy] == copyID)
        // The original leaves and comes back from another file system (a new
        // inode, the attribute copied along): it gets its id back.
        h.fs.moveOut("original")
        h.process()
        let back = h.fs.write("restored", bytes: 1)
        h.fs.attributes[back] = id
        h.advance(by: .seconds(2))
        let changes = h.newChanges()
        #expect(changes.map(\.summary) == ["removed original", "added restored"])
        #expect(changes.last?.id == id)
    }

    @Test("a folder deleted during the scan: no error, and the stream repairs itself")
    func folderDeletedDuringScan() {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, reportsInitialItems: true)) { fs in
            fs.mkdir("a")
            fs.mkdir("a/gone")
            fs.write("a/gone/file", bytes: 1)
            fs.mkdir("b")
        }
        h.fs.vanishing = ["a/gone"]
        h.start()
        h.process()
        var replay = Replay()
        replay.apply(h.delivered)
        #expect(!h.delivered.contains { if case .error = $0 { true } else { false } })
        #expect(replay.violations.isEmpty)
        #expect(replay.items == h.fs.snapshot())
        #expect(h.treeSnapshot == h.fs.snapshot())
    }

    @Test(
        "a file made, then its name given to a folder by renames read with it: the folder and its items keep their ids"
    )
    func createdNameTakenByFolder() {
        var h = CoreHarness { fs in
            fs.mkdir("d")
            fs.mkdir("d/box")
            fs.write("d/box/a", bytes: 3)
            fs.write("d/box/b", bytes: 4)
        }
        h.start()
        let before = h.treeIDs
        // All read at once: the file's events are handled against the disk as
        // it ends up, where its name holds the folder.
        h.fs.write("new", bytes: 2)
        h.fs.rename("d/box", "d/spare")
        h.fs.rename("new", "d/box")
        h.fs.rename("d/spare", "new")
        h.fs.rename("new/b", "new/c")
        h.process()
        h.advance(by: .seconds(2))
        let after = h.treeIDs
        #expect(after["new"] == before["d/box"])
        #expect(after["new/a"] == before["d/box/a"])
        #expect(after["new/c"] == before["d/box/b"])
        #expect(after["d/box"] != nil && !before.values.contains(after["d/box"]!))
        #expect(Set(after.values).count == after.count, "one id on two items: \(after)")
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
    }

    @Test("a copy tool writing its source's id between the observer's read and write keeps it: the copy is duplicated")
    func identityAttributeRace() throws {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, storesIdentityAttribute: true)) { fs in
            fs.write("book.epub", bytes: 4)
        }
        h.start()
        let book = try #require(h.treeIDs["book.epub"])
        h.fs.attributesWrittenAfterRead["copy.epub"] = book
        h.fs.write("copy.epub", bytes: 4)
        h.process()
        h.advance(by: .seconds(3))
        let changes = h.newChanges().map(\.summary)
        #expect(changes.contains { $0.hasPrefix("duplicated copy.epub book.epub") }, "\(changes)")
        let copy = try #require(h.treeIDs["copy.epub"])
        #expect(copy != book)
        #expect(h.fs.identityAttribute(at: "copy.epub") == copy)
    }

    @Test("two items found with one id in their attributes: the older keeps it, and each attribute holds its own id")
    func identityAttributeConflictAtRestart() throws {
        var h = CoreHarness(options: ObserverOptions(latency: .zero, storesIdentityAttribute: true)) { _ in }
        h.start()
        let claimed = ItemID(rawValue: 0x1234_5678_9abc_def0)
        h.restart { fs in
            // "b" is the older; "a" is listed first and takes the id before "b" is seen.
            let older = fs.write("b", bytes: 5)
            let newer = fs.write("a", bytes: 5)
            fs.attributes[older] = claimed
            fs.attributes[newer] = claimed
        }
        h.advance(by: .seconds(3))
        let ids = h.treeIDs
        #expect(ids["b"] == claimed)
        #expect(ids["a"] != nil && ids["a"] != claimed)
        #expect(h.fs.identityAttribute(at: "b") == ids["b"])
        #expect(h.fs.identityAttribute(at: "a") == ids["a"])
        var reported: [String: ItemID] = [:]
        for change in h.delivered {
            switch change {
            case .added(let item), .duplicated(let item, _): reported[item.path.description] = item.id
            default: break
            }
        }
        #expect(reported["a"] == ids["a"] && reported["b"] == ids["b"], "\(reported)")
    }

    @Test(
        "a folder renamed through one not watched yet, in the read that swaps a file into it: it and its items keep their ids; nothing is lost from the folder that takes its name"
    )
    func renamedThroughUnwatchedFolder() {
        var h = CoreHarness(options: ObserverOptions(settleTime: .milliseconds(50), latency: .zero)) { fs in
            for folder in ["D", "T", "T/P", "T/P/sub", "T/M"] { _ = fs.mkdir(ItemPath(folder)) }
            for file in ["T/x", "T/P/sub/a", "T/P/b", "T/M/c"] { _ = fs.write(ItemPath(file), bytes: 3) }
        }
        h.start()
        let before = h.treeIDs
        // M moves away and is made anew (not watched until its event is
        // read); x and P/sub swap; P goes through the new M to D/m/c, as the
        // names P, x and D/m/c rotate. The kernel reports P leaving T and
        // arriving in D/m with no cookie to pair them.
        h.fs.rename("T/M", "D/m")
        _ = h.fs.mkdir("T/M")
        h.fs.rename("T/x", "D/t1")
        h.fs.rename("T/P/sub", "T/x")
        h.fs.rename("D/t1", "T/P/sub")
        h.fs.rename("T/P", "T/M/t2")
        h.fs.rename("T/x", "T/P")
        h.fs.rename("D/m/c", "T/x")
        h.fs.rename("T/M/t2", "D/m/c")
        h.catchUp()
        let changes = h.newChanges().map(\.summary)
        // P's departure is reported before x's old folder takes its name,
        // and P comes back where it landed, with its items.
        #expect(
            changes == [
                "moved T/M D/m", "added T/M/", "moved T/x D/t1", "moved T/P/sub T/x", "moved D/t1 T/P/sub",
                "removed T/P", "renamed T/x T/P", "moved D/m/c T/x", "added D/m/c/", "added D/m/c/b",
                "added D/m/c/sub",
            ], "\(changes)")
        let after = h.treeIDs
        #expect(after["D/m"] == before["T/M"])
        #expect(after["D/m/c"] == before["T/P"])
        #expect(after["D/m/c/b"] == before["T/P/b"])
        #expect(after["D/m/c/sub"] == before["T/x"])
        #expect(after["T/P"] == before["T/P/sub"])
        #expect(after["T/P/a"] == before["T/P/sub/a"])
        #expect(after["T/x"] == before["T/M/c"])
        #expect(after.count == before.count + 1, "\(after)")
    }

    /// A started observer that polls only when asked, on folders `A`
    /// and `B` and what `setUp` makes.
    static func polled(setUp: (FakeFileSystem) -> Void) -> CoreHarness {
        var h = CoreHarness(
            options: ObserverOptions(settleTime: .milliseconds(50), latency: .zero, pollingInterval: .seconds(3600))
        ) { fs in
            _ = fs.mkdir("A")
            _ = fs.mkdir("B")
            setUp(fs)
        }
        h.start()
        return h
    }

    @Test(
        "a poll that lists a tree while it changes: a folder renamed after its parent was listed keeps its id where it went"
    )
    func folderRenamedDuringPoll() {
        var h = Self.polled { fs in
            _ = fs.mkdir("X")
            _ = fs.write("X/f", bytes: 3)
        }
        let before = h.treeIDs
        // The poll lists the root (X is where the tree has it), then, before
        // it lists B, X is renamed into it.
        h.fs.wall += 1_000_000
        h.fs.beforeListing["B"] = { fs in fs.rename("X", "B/x") }
        h.catchUp()
        #expect(h.newChanges().map(\.summary) == ["moved X B/x"])
        #expect(h.treeIDs["B/x"] == before["X"])
        #expect(h.treeIDs["B/x/f"] == before["X/f"])
        h.catchUp()
        #expect(h.newChanges().isEmpty)
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
    }

    @Test(
        "a poll that lists a tree while a file is moved away and another made at its name: each keeps its own id"
    )
    func fileReplacedDuringPoll() {
        var h = Self.polled { fs in _ = fs.write("A/doc", bytes: 3) }
        let before = h.treeIDs
        // The poll lists B (folders are listed last name first); then A/doc
        // moves into B and a new file takes its name; then A is listed.
        // Settled on those listings, A/doc would be the same document
        // written anew, and the moved file a new one at the next poll.
        h.fs.wall += 1_000_000
        h.fs.beforeListing["A"] = { fs in
            fs.wall += 1_000_000
            fs.rename("A/doc", "B/doc")
            _ = fs.write("A/doc", bytes: 5)
        }
        h.catchUp()
        h.advance(by: .seconds(1))
        h.catchUp()
        let changes = h.newChanges().map(\.summary)
        #expect(h.treeIDs["B/doc"] == before["A/doc"], "\(changes)")
        #expect(h.treeIDs["A/doc"] != before["A/doc"], "\(changes)")
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
    }

    @Test(
        "a file in a folder a poll set aside, not found by that poll, keeps its id where the next one finds it"
    )
    func setAsideFileFoundByNextPoll() {
        var h = Self.polled { fs in
            _ = fs.mkdir("P")
            _ = fs.mkdir("P/D")
            _ = fs.write("P/D/z", bytes: 3)
            _ = fs.mkdir("Q")
        }
        // Saved anew: its id is no longer the one its inode gives.
        _ = h.fs.write("P/D/.t", bytes: 9)
        h.fs.rename("P/D/.t", "P/D/z")
        h.catchUp()
        let before = h.treeIDs
        // P and Q swap names: the poll sets P's folder aside to free its
        // name. Before it lists D again, z leaves D for a folder it has
        // listed already (A), so this poll does not find it; the next does.
        h.fs.rename("P", "t")
        h.fs.rename("Q", "P")
        h.fs.rename("t", "Q")
        h.fs.wall += 1_000_000
        h.fs.beforeListing["Q/D"] = { fs in fs.rename("Q/D/z", "A/z") }
        h.catchUp()
        h.catchUp()
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
        #expect(h.treeIDs["Q"] == before["P"])
        #expect(h.treeIDs["Q/D"] == before["P/D"])
        #expect(h.treeIDs["A/z"] == before["P/D/z"], "\(h.treeIDs)")
    }

    @Test(
        "a poll finds a known file where an unreported one was saved over and swapped away: the known file keeps its id"
    )
    func knownFileOverUnreported() {
        var h = CoreHarness(
            options: ObserverOptions(
                settleTime: .seconds(1), latency: .zero, pollingInterval: .seconds(3600),
                detectsDuplicateContent: true)
        ) { fs in
            _ = fs.mkdir("F")
            _ = fs.write("F/a", bytes: 3)
        }
        h.start()
        let a = h.treeIDs["F/a"]
        // A new file, still settling (not reported yet: copies are told
        // apart once complete), saved over by a temporary file, then a
        // and w swap names through a third.
        _ = h.fs.write("F/w", bytes: 4)
        h.catchUp()
        h.fs.saveThenSwap(in: "F/")
        h.catchUp()
        #expect(h.treeIDs["F/w"] == a, "\(h.newChanges().map(\.summary))")
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false))
    }

    @Test(
        "an item moved out of the tree and another renamed onto its name in the same read: the newcomer keeps its id and its items",
        arguments: [ItemKind.directory, .file])
    func movedOutThenRenamedOnto(kind: ItemKind) {
        var h = CoreHarness(options: ObserverOptions(settleTime: .milliseconds(50), latency: .zero)) { fs in
            if kind == .directory {
                _ = fs.mkdir("P")
                _ = fs.write("P/old", bytes: 3)
                _ = fs.mkdir("x")
                _ = fs.write("x/a", bytes: 3)
            } else {
                _ = fs.write("P", bytes: 3)
                _ = fs.write("x", bytes: 4)
            }
        }
        h.start()
        let before = h.treeIDs
        // The current one away, the new one in its place (a deployment, a
        // rotation of backups).
        h.fs.moveOut("P")
        h.fs.rename("x", "P")
        h.catchUp()
        let changes = h.newChanges().map(\.summary)
        #expect(changes == ["removed P", "renamed x P"])
        #expect(h.treeIDs["P"] == before["x"], "\(changes)")
        if kind == .directory { #expect(h.treeIDs["P/a"] == before["x/a"], "\(changes)") }
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false), "\(changes)")
    }

    @Test(
        "a file saved over through a hidden name, then swapped with another, all in one read: each inode keeps its id"
    )
    func savedThenSwapped() {
        var h = CoreHarness(options: ObserverOptions(settleTime: .milliseconds(50), latency: .zero)) { fs in
            _ = fs.write("a", bytes: 3)
            _ = fs.write("w", bytes: 4)
        }
        h.start()
        let before = h.treeIDs
        // w saved atomically (its new inode takes its name from a hidden
        // one: the document keeps its id), then a and w swap names through t.
        h.fs.saveThenSwap(in: "")
        h.catchUp()
        let changes = h.newChanges().map(\.summary)
        #expect(h.treeIDs["w"] == before["a"], "\(changes)")
        #expect(h.treeIDs["a"] == before["w"], "\(changes)")
        #expect(h.treeSnapshot == h.fs.snapshot(includeHidden: false), "\(changes)")
    }
}

extension FakeFileSystem {
    /// `w` in `folder` (empty, or ending in `/`) saved atomically (a new
    /// file renamed over it from the hidden name `.t`), then `a` and `w`
    /// swapped through the name `t`.
    func saveThenSwap(in folder: String) {
        let path = { (name: String) in ItemPath(folder + name) }
        _ = write(path(".t"), bytes: 6)
        rename(path(".t"), path("w"))
        rename(path("a"), path("t"))
        rename(path("w"), path("a"))
        rename(path("t"), path("w"))
    }
}
