import FileWatching
import FileshareTestSupport
import Foundation
import Testing

@testable import Documents

/// A seeded random run of a package document and outside programs changing
/// files inside it (in place, atomically, added, removed) and moving it:
/// every tree a save replaced that someone else had touched is its conflict
/// version, whole; the disk and the document hold what they should after
/// every step; the states seen form a chain. `FILESHARE_SEEDS=N` runs N seeds (default 12).
@Suite("Package documents, random", .serialized, .holdsObservers, .timeLimit(.minutes(10)))
struct PackageRandomTests {
    /// What the package should hold, as the steps go.
    struct Model {
        var path: ItemPath = "Story.pages"
        var disk: PackageContents
        var document: PackageContents
        /// Whether someone else changed the tree since the document last read or saved.
        var touched = false
    }

    static let names = ["index.xml", "Data/image.png", "Data/Sub/note.txt", "extra.txt"]

    @Test("nothing is lost, whatever the order", arguments: DocumentRandomTests.seeds)
    func random(seed: UInt64) async throws {
        let setup = try DocumentTests.Setup(autosave: .seconds(3600))
        try FileManager.default.createDirectory(atPath: setup.folder("sub"), withIntermediateDirectories: true)
        let start = try PackageContents(files: ["index.xml": Array("start".utf8)], folders: ["Data"])
        let folder = setup.workspace.folder
        _ = try folder.savePackage(start, to: "Story.pages", id: nil, known: nil, creating: true)
        let document = try await setup.workspace.open("Story.pages")
        let events = DocumentTests.Events(document)
        let keeper = try #require(folder.keeper as? ConflictCopies)
        var generator = SeededRandom(seed: seed)
        var model = Model(disk: start, document: start)
        var log: [String] = []

        func onDisk() throws -> PackageContents { try folder.readPackage(model.path).contents }

        for step in 1...30 {
            // Sizes grow every step (see DocumentRandomTests).
            let mine = "doc-" + String(repeating: "d", count: step)
            let theirs = "out-" + String(repeating: "o", count: step) + "!"
            let name = Self.names[Int.random(in: 0..<Self.names.count, using: &generator)]
            let inner = model.path.description + "/" + name
            switch Int.random(in: 0..<9, using: &generator) {
            case 0, 1:
                log.append("edit \(name) \(mine)")
                try model.document.setFile(name, Array(mine.utf8))
                try await document.update(model.document)
            case 2, 3:
                log.append("save")
                let before = model.disk
                let outcome = try await document.save()
                if model.touched {
                    guard case .conflict(let version) = outcome else {
                        Issue.record("seed \(seed): expected a conflict, got \(outcome): \(log)")
                        return
                    }
                    let fd = open(keeper.path(of: version), O_RDONLY | O_DIRECTORY)
                    defer { close(fd) }
                    let kept = try PackageTree.read(fd, limits: PackageLimits(), path: "kept")
                    #expect(kept == before, "seed \(seed): their tree is the conflict version, whole: \(log)")
                    try await document.resolveConflict()
                } else {
                    #expect(outcome == .clean, "seed \(seed): \(log)")
                }
                model.disk = model.document
                model.touched = false
                // Its own save never comes back as someone else's: once the
                // observer has seen it through (a write after it, seen too),
                // no report arrived since it ended.
                let reports = Self.reports(events)
                try setup.folder.write("\(step)", to: "marker.txt")
                await setup.observer.sync()
                #expect(Self.reports(events) == reports, "seed \(seed) step \(step): an echo: \(log) \(events.all)")
            case 4 where model.disk[file: name] != nil:
                log.append("their write in place of \(name)")
                let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: setup.folder(inner)))
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: Data(theirs.utf8))
                try handle.close()
                try model.disk.setFile(name, Array(theirs.utf8))
                model.touched = true
            case 5
            where model.disk.folders.contains(String(name.split(separator: "/").dropLast().joined(separator: "/")))
                || !name.contains("/"):
                log.append("their atomic save of \(name)")
                try setup.saveAtomically(theirs, to: inner)
                try model.disk.setFile(name, Array(theirs.utf8))
                model.touched = true
            case 6 where model.disk[file: name] != nil:
                log.append("they remove \(name)")
                #expect(unlink(setup.folder(inner)) == 0)
                model.disk.remove(name)
                model.touched = true
            case 7:
                let target: ItemPath = model.path == "Story.pages" ? "sub/Moved.pages" : "Story.pages"
                log.append("they move it to \(target)")
                #expect(rename(setup.folder(model.path.description), setup.folder(target.description)) == 0)
                model.path = target
                await setup.observer.sync()
                #expect(await eventually { await document.path == target }, "seed \(seed): \(log)")
                guard await document.path == target else { return }
            default:
                log.append("revert")
                try await document.revert()
                model.document = model.disk
                model.touched = false
            }
            #expect(try onDisk() == model.disk, "seed \(seed) step \(step): \(log)")
            #expect(await document.package == model.document, "seed \(seed) step \(step): \(log)")
        }
        await setup.observer.sync()
        await document.close()
        #expect(await eventually { events.ended })
        var state = DocumentState.normal
        for case .stateChanged(let from, let to) in events.all {
            #expect(from == state, "seed \(seed): \(events.all)")
            state = to
        }
        #expect(state == .closed)
        // Nothing was left in the staging folder.
        #expect(try folderNames(setup.folder(".fileshare/staging")).isEmpty, "seed \(seed)")
    }

    static func reports(_ events: DocumentTests.Events) -> Int {
        events.all.filter { if case .changedBySomeoneElse = $0 { true } else { false } }.count
    }
}
