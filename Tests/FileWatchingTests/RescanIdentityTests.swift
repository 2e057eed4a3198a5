import Testing

@testable import FileWatching

/// Names that change hands: an item moved away and a new one made at its
/// name, names swapped or rotated, a file renamed over another. Every way
/// the observer learns of changes (kernel events, a poll, the rescan after
/// a queue overflow, the start from a saved state) must report the same
/// thing: ids follow the disk's identities, whatever order the folders are
/// listed in.
@Suite("Names that change hands, found live or by a rescan")
struct RescanIdentityTests {
    enum Finding: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case live, poll, overflow, restart
        var testDescription: String { rawValue }
    }

    /// What the observer reported about `change`, found the `finding` way,
    /// after a start on what `setUp` made. Checks the stream's ids against
    /// the disk's identities.
    static func observe(
        _ finding: Finding, setUp: (FakeFileSystem) -> Void, change: (FakeFileSystem) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> (before: [ItemPath: ItemID], changes: [Change], replay: Replay) {
        let options = ObserverOptions(
            settleTime: .seconds(1), latency: .zero, pollingInterval: finding == .poll ? .seconds(1) : nil)
        var h = CoreHarness(options: options, setUp: setUp)
        h.start()
        let before = h.treeIDs
        var replay = Replay(initial: h.treeSnapshot, ids: before)
        var ledger = IdentityLedger<FakeFileSystem.Identity>()
        let fs = h.fs
        ledger.check(replay) { fs.identity($0) }
        switch finding {
        case .live:
            change(h.fs)
            h.process()
        case .poll:
            change(h.fs)
            h.advance(by: .milliseconds(1100))
        case .overflow:
            change(h.fs)
            h.fs.overflow()
            h.process()
        case .restart:
            h.restart { change($0) }
        }
        let changes = h.newChanges()
        replay.apply(changes)
        ledger.check(replay) { fs.identity($0) }
        let context = "\(finding): \(changes.map(\.summary))"
        #expect(replay.violations.isEmpty, "\(context): \(replay.violations)", sourceLocation: sourceLocation)
        #expect(ledger.violations.isEmpty, "\(context): \(ledger.violations)", sourceLocation: sourceLocation)
        #expect(replay.items == h.fs.snapshot(), "\(context)", sourceLocation: sourceLocation)
        #expect(h.treeSnapshot == h.fs.snapshot(), "\(context)", sourceLocation: sourceLocation)
        #expect(replay.ids == h.treeIDs, "the stream's ids are the tree's: \(context)", sourceLocation: sourceLocation)
        return (before, changes, replay)
    }

    /// The changes, without `writing` (a poll takes a recent file for one
    /// still being written) and without the scan's and rescan's own events.
    static func plain(_ changes: [Change]) -> Set<String> {
        Set(
            changes.compactMap { change in
                switch change {
                case .scanStarted, .scanCompleted, .rescanned: nil
                default: change.summary.replacingSuffix(" writing")
                }
            })
    }

    @Test(
        "a file moved away and a new file at its name: moved (old id) and added (new id)",
        arguments: Finding.allCases, [("C/f.txt", "A/f.txt"), ("A/f.txt", "C/f.txt")])
    func movedAwayThenCreated(finding: Finding, paths: (String, String)) {
        let (from, to) = (ItemPath(paths.0), ItemPath(paths.1))
        let (_, changes, _) = Self.observe(finding) { fs in
            fs.mkdir("A")
            fs.mkdir("C")
            fs.write(from, bytes: 5)
        } change: { fs in
            fs.rename(from, to)
            fs.write(from, bytes: 3)
        }
        #expect(Self.plain(changes) == ["moved \(from) \(to)", "added \(from)"], "\(finding)")
    }

    @Test(
        "a file deleted and another made with its inode number and birth time: removed, and added with a new id",
        arguments: Finding.allCases)
    func reusedInode(finding: Finding) {
        let (before, changes, replay) = Self.observe(finding) { fs in
            fs.reusesInodes = true
            fs.mkdir("C")
            fs.write("C/f.txt", bytes: 5)
        } change: { fs in
            let old = fs.identity("C/f.txt")!
            fs.remove("C/f.txt")
            fs.write("C/g.txt", bytes: 3)
            precondition(fs.identity("C/g.txt")!.inode == old.inode)
        }
        #expect(Self.plain(changes) == ["removed C/f.txt", "added C/g.txt"], "\(finding)")
        #expect(replay.ids["C/g.txt"] != before["C/f.txt"], "\(finding): \(changes.map(\.summary))")
    }

    @Test("a folder moved away and a new folder at its name", arguments: Finding.allCases)
    func folderMovedAwayThenMade(finding: Finding) {
        let (_, changes, _) = Self.observe(finding) { fs in
            fs.mkdir("A")
            fs.mkdir("C")
            fs.mkdir("C/d")
            fs.write("C/d/x", bytes: 5)
        } change: { fs in
            fs.rename("C/d", "A/d")
            fs.mkdir("C/d")
            fs.write("C/d/y", bytes: 3)
        }
        #expect(Self.plain(changes) == ["moved C/d A/d", "added C/d/", "added C/d/y"], "\(finding)")
    }

    @Test(
        "a file moved away and a folder made at its name, and the other way round",
        arguments: Finding.allCases, [false, true])
    func kindChangesHands(finding: Finding, folderFirst: Bool) {
        let (_, changes, _) = Self.observe(finding) { fs in
            fs.mkdir("A")
            fs.mkdir("C")
            if folderFirst { fs.mkdir("C/x") } else { fs.write("C/x", bytes: 5) }
        } change: { fs in
            fs.rename("C/x", "A/x")
            if folderFirst { fs.write("C/x", bytes: 3) } else { fs.mkdir("C/x") }
        }
        #expect(Self.plain(changes) == ["moved C/x A/x", folderFirst ? "added C/x" : "added C/x/"], "\(finding)")
    }

    @Test(
        "names swapped (through a temporary name) or rotated: each item keeps its id",
        arguments: Finding.allCases,
        [["a", "b"], ["A/a", "C/b"], ["A", "C"], ["a", "b", "c"], ["A/a", "C/b", "c"]])
    func namesChangeHands(finding: Finding, names: [String]) throws {
        let paths = names.map { ItemPath($0) }
        let (before, changes, replay) = Self.observe(finding) { fs in
            for path in paths where !path.parent.isRoot && !fs.exists(path.parent) { fs.mkdir(path.parent) }
            for path in paths {
                if path.isRootLevelFolder {
                    fs.mkdir(path)
                    fs.write(path.appending(Array("inside".utf8)), bytes: 1)
                } else {
                    fs.write(path, bytes: 4)
                }
            }
        } change: { fs in
            // Each item takes the name before its own; the first takes the last name.
            fs.rename(paths[0], "t")
            for i in 1..<paths.count { fs.rename(paths[i], paths[i - 1]) }
            fs.rename("t", paths[paths.count - 1])
        }
        #expect(!Self.plain(changes).contains { $0.hasPrefix("modified") }, "\(finding): \(changes.map(\.summary))")
        // Each name now has the id the name after it had (the ledger checked the identities too).
        for i in paths.indices {
            #expect(replay.ids[paths[i]] == before[paths[(i + 1) % paths.count]], "\(finding): \(paths[i])")
        }
    }

    @Test("a file renamed over another, and a new file at its name: a save, as live", arguments: Finding.allCases)
    func renamedOverThenCreated(finding: Finding) {
        let (before, changes, replay) = Self.observe(finding) { fs in
            fs.write("a", bytes: 5)
            fs.write("b", bytes: 4)
        } change: { fs in
            fs.rename("b", "a")
            fs.write("b", bytes: 3)
        }
        #expect(Self.plain(changes) == ["removed b", "modified a", "added b"], "\(finding)")
        #expect(replay.ids["a"] == before["a"])
        #expect(replay.ids["b"] != before["b"])
    }

    @Test(
        "a file moved into a folder made a moment before (not watched yet), and a new file at its name",
        arguments: Finding.allCases)
    func movedIntoNewFolderThenCreated(finding: Finding) {
        let (before, changes, replay) = Self.observe(finding) { fs in
            fs.mkdir("C")
            fs.write("C/f", bytes: 5)
        } change: { fs in
            // Live, the kernel reports the departure from C/f but no arrival:
            // N had no watch yet when f was moved in.
            fs.mkdir("N")
            fs.rename("C/f", "N/f")
            fs.write("C/f", bytes: 3)
        }
        #expect(Self.plain(changes) == ["added N/", "moved C/f N/f", "added C/f"], "\(finding)")
        #expect(replay.ids["N/f"] == before["C/f"])
    }

    @Test(
        "a file moved into a folder that then swaps names with a file, and a new file at its name",
        arguments: Finding.allCases)
    func movedIntoSwappedFolder(finding: Finding) {
        let (before, changes, replay) = Self.observe(finding) { fs in
            fs.mkdir("D")
            fs.write("e", bytes: 4)
            fs.write("f", bytes: 5)
        } change: { fs in
            fs.rename("f", "D/f")
            fs.write("f", bytes: 3)
            fs.rename("D", "t")
            fs.rename("e", "D")
            fs.rename("t", "e")
        }
        // A rescan lists the folder's new name only once the swap is settled:
        // f is found in it then, not taken for gone and its name for a save.
        #expect(!Self.plain(changes).contains("modified f"), "\(finding): \(changes.map(\.summary))")
        #expect(replay.ids["e/f"] == before["f"], "\(finding): \(changes.map(\.summary))")
        #expect(replay.ids["D"] == before["e"], "\(finding): \(changes.map(\.summary))")
    }

    @Test("a name reused within one read of events: the tree ends with the disk's items, all reported")
    func nameReusedWithinOneRead() {
        var h = CoreHarness(
            options: ObserverOptions(settleTime: .milliseconds(200), latency: .zero, detectsDuplicateContent: true))
        h.start()
        var replay = Replay(initial: h.treeSnapshot, ids: h.treeIDs)
        // Looked at after all three, the created name shows the second file:
        // the first, renamed, is moved under the second's identity.
        h.fs.write("a", bytes: 5)
        h.fs.rename("a", "b")
        h.fs.write("a", bytes: 3)
        h.process()
        h.advance(by: .seconds(1))
        h.process(force: true)
        replay.apply(h.newChanges())
        #expect(replay.violations.isEmpty, "\(replay.violations)")
        #expect(replay.items == h.fs.snapshot())
        #expect(h.treeSnapshot == h.fs.snapshot())
        #expect(replay.ids == h.treeIDs)
        #expect(h.core.tree.identity(of: h.core.tree.index(at: "b")!).inode == h.fs.resolve("b"))
    }

    @Test("a copy carrying a document's id, and the document saved anew, found at a start from state")
    func copyAndSaveWhileStopped() throws {
        var h = CoreHarness(
            options: ObserverOptions(settleTime: .seconds(1), latency: .zero, storesIdentityAttribute: true)
        ) { fs in
            fs.write("a", bytes: 5)
        }
        h.start()
        let id = try #require(h.treeIDs["a"])
        h.restart { fs in
            // The copy is older than the saved document, and carries its id;
            // the saved document does not (the saving program drops it).
            fs.copy("a", "c", preservingAttributes: true)
            fs.write(".tmp", bytes: 9)
            fs.rename(".tmp", "a")
        }
        let changes = h.newChanges()
        #expect(h.treeIDs["a"] == id, "\(changes.map(\.summary))")
        #expect(h.treeIDs["c"] != id)
        #expect(changes.contains { $0.summary == "duplicated c a" && $0.id != id }, "\(changes.map(\.summary))")
        #expect(changes.contains { $0.summary == "modified a" && $0.id == id }, "\(changes.map(\.summary))")
    }

    @Test(
        "a folder moved away and made anew at its name, then a swap and a rotation across folders: ids kept",
        arguments: Finding.allCases, [false, true])
    func folderRemadeThenRotated(finding: Finding, reusesInodes: Bool) {
        let (before, changes, replay) = Self.observe(finding) { fs in
            fs.reusesInodes = reusesInodes
            fs.mkdir("N")
            fs.mkdir("T")
            fs.write("T/a", bytes: 5)
            fs.mkdir("T/d")
            fs.write("T/d/c", bytes: 4)
            fs.mkdir("T/p")
            fs.mkdir("T/p/s")
            fs.write("T/p/s/f", bytes: 3)
            fs.write("T/p/b", bytes: 2)
            fs.write("x", bytes: 1)
        } change: { fs in
            fs.remove("x")
            fs.rename("T/d", "N/e")
            fs.mkdir("T/d")
            // T/a and T/p/s swap names.
            fs.rename("T/a", "T/t")
            fs.rename("T/p/s", "T/a")
            fs.rename("T/t", "T/p/s")
            // T/p, T/a and N/e/c rotate.
            fs.rename("T/p", "T/t")
            fs.rename("T/a", "T/p")
            fs.rename("N/e/c", "T/a")
            fs.rename("T/t", "N/e/c")
            fs.write("T/d/g", bytes: 6)
        }
        // Each item that moved keeps its id (the ledger checked the identities too).
        for (now, was) in [("N/e", "T/d"), ("N/e/c", "T/p"), ("N/e/c/s", "T/a"), ("T/p", "T/p/s"), ("T/a", "T/d/c")] {
            #expect(replay.ids[ItemPath(now)] == before[ItemPath(was)], "\(finding): \(now) \(changes.map(\.summary))")
        }
    }
}

extension ItemPath {
    /// A one-component name in capitals: the tests' folders.
    fileprivate var isRootLevelFolder: Bool {
        parent.isRoot && bytes.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}

extension String {
    fileprivate func replacingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
