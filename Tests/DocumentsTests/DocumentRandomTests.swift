import FileWatching
import FileshareTestSupport
import Foundation
import Testing

@testable import Documents

/// A seeded random run of a document and outside writers on one file:
/// whatever the order, nothing anyone wrote is lost — every outside write a
/// save replaced is its conflict version — and the states seen form a chain.
/// `FILESHARE_SEEDS=N` runs N seeds (default 12); `FILESHARE_SEED=S` runs
/// seed S alone (to trace one).
@Suite("Documents, random", .holdsObservers)
struct DocumentRandomTests {
    static var seeds: [UInt64] {
        if let one = ProcessInfo.processInfo.environment["FILESHARE_SEED"].flatMap(UInt64.init) { return [one] }
        let count = ProcessInfo.processInfo.environment["FILESHARE_SEEDS"].flatMap(Int.init) ?? 12
        return (0..<UInt64(count)).map { $0 &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
    }

    /// What the file should hold, as the steps go.
    struct Model {
        /// Where the document's file is.
        var path: ItemPath = "doc.txt"
        /// What is on disk at `path` (`nil`: deleted).
        var disk: String? = "start"
        /// What the document holds.
        var document = "start"
        /// Whether someone else wrote since the document last read or saved.
        var touched = false
        var outsideWrites = 0
    }

    @Test("nothing is lost, whatever the order", arguments: seeds)
    func random(seed: UInt64) async throws {
        let setup = try DocumentTests.Setup(autosave: .seconds(3600))
        try FileManager.default.createDirectory(atPath: setup.folder("sub"), withIntermediateDirectories: true)
        try setup.folder.write("start", to: "doc.txt")
        let document = try await setup.workspace.open("doc.txt")
        let events = DocumentTests.Events(document)
        let keeper = try #require(setup.workspace.folder.keeper as? ConflictCopies)
        var generator = SeededRandom(seed: seed)
        var model = Model()
        var log: [String] = []
        var reported = 0

        for step in 1...40 {
            // The events seen so far, before each step: a failure shows which
            // step each event followed.
            let seen = events.all
            if seen.count > reported {
                log.append("(events: \(seen[reported...].map { "\($0)" }.joined(separator: ", ")))")
                reported = seen.count
            }
            // Sizes grow every step, so a rewrite in place is never the same
            // size within the file system's time granularity (the one case a
            // stamp cannot see; ContentStamp says so).
            let mine = "doc-" + String(repeating: "d", count: step)
            let theirs = "out-" + String(repeating: "o", count: step) + "!"
            switch Int.random(in: 0..<8, using: &generator) {
            case 0, 1:
                log.append("edit \(mine)")
                try await document.update(Array(mine.utf8))
                model.document = mine
            case 2, 3:
                log.append("save")
                let before = model.disk
                let outcome = try await document.save()
                switch (before, model.touched) {
                case (nil, _):
                    #expect(outcome == .created, "seed \(seed): \(log)")
                case (let previous?, true):
                    guard case .conflict(let version) = outcome else {
                        Issue.record("seed \(seed): expected a conflict, got \(outcome): \(log)")
                        return
                    }
                    let kept = FileManager.default.contents(atPath: keeper.path(of: version))
                    #expect(kept == Data(previous.utf8), "seed \(seed): their content is the conflict version: \(log)")
                    try await document.resolveConflict()
                case (_?, false):
                    #expect(outcome == .clean, "seed \(seed): \(log)")
                }
                model.disk = model.document
                model.touched = false
            case 4 where model.disk != nil:
                log.append("their atomic save \(theirs)")
                try setup.saveAtomically(theirs, to: model.path.description)
                model.disk = theirs
                model.touched = true
                model.outsideWrites += 1
                guard await settle(setup, document, model.path) else { return lostTrack(seed: seed, log) }
            case 5 where model.disk != nil:
                log.append("their write in place \(theirs)")
                let handle = try #require(
                    FileHandle.closingOnExec(forWritingAtPath: setup.folder(model.path.description)))
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data(theirs.utf8))
                try handle.close()
                model.disk = theirs
                model.touched = true
                model.outsideWrites += 1
                guard await settle(setup, document, model.path) else { return lostTrack(seed: seed, log) }
            case 6 where model.disk != nil:
                let target: ItemPath = model.path == "doc.txt" ? "sub/moved.txt" : "doc.txt"
                log.append("they move it to \(target)")
                #expect(rename(setup.folder(model.path.description), setup.folder(target.description)) == 0)
                model.path = target
                await setup.observer.sync()
                guard await eventually({ await document.path == target }) else { return lostTrack(seed: seed, log) }
                // Every change before the move judged too (the last save's
                // `finished`, say): judged during the next step's write in
                // place, it would read the file truncated and report that.
                await setup.workspace.sync()
            case 7 where model.disk != nil:
                log.append("they delete it")
                #expect(unlink(setup.folder(model.path.description)) == 0)
                model.disk = nil
                model.touched = false
                await setup.observer.sync()
                #expect(
                    await eventually { events.contains { $0 == .deleted(path: model.path) } }, "seed \(seed): \(log)")
            default:
                log.append("revert")
                if model.disk != nil {
                    try await document.revert()
                    model.document = model.disk!
                    model.touched = false
                }
            }
            // The disk holds what the model says, at the path it says.
            #expect(setup.text(model.path.description) == model.disk, "seed \(seed) step \(step): \(log)")
            #expect(await document.contents == Array(model.document.utf8), "seed \(seed) step \(step): \(log)")
        }
        await setup.observer.sync()
        await document.close()
        #expect(await eventually { events.ended })
        // Its own saves never came back as someone else's.
        let echoes = events.all.filter { if case .changedBySomeoneElse = $0 { true } else { false } }.count
        #expect(echoes <= model.outsideWrites, "seed \(seed): \(log), then \(events.all[reported...])")
        // The states seen form a chain, ending closed.
        var state = DocumentState.normal
        for case .stateChanged(let from, let to) in events.all {
            #expect(from == state, "seed \(seed): \(events.all)")
            state = to
        }
        #expect(state == .closed)
    }

    /// After someone else's write: the observer has seen it through (the
    /// file is no longer being written), the document holds the file's id,
    /// and every change so far has reached the document. Returns whether it
    /// does. (The document takes the new id before it judges the change
    /// that brought it, and the observer speaks of one write more than once:
    /// without the last wait, the next step's write in place could begin
    /// before the last of those was judged, which then read the file
    /// truncated and reported that too; CI saw 13 reports of 12 writes.)
    func settle(_ setup: DocumentTests.Setup, _ document: Document, _ path: ItemPath) async -> Bool {
        await setup.observer.sync()
        let settled = await eventually {
            guard let item = setup.observer.item(at: path), !item.isWriting else { return false }
            return await document.id == item.id
        }
        await setup.workspace.sync()
        return settled
    }

    /// The document lost track of its file: the seed ends there (what it
    /// checked until then held). Once a known fault: a file replaced a moment
    /// before had its inode number given to the next program's temporary
    /// file, and the document claimed that file for its own (it now checks
    /// the birth time too, `ContentStamp.isSameFile(as:)`).
    func lostTrack(seed: UInt64, _ log: [String]) {
        Issue.record("seed \(seed): the document lost track of its file: \(log)")
    }
}
