import FileWatching
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing
import Versions

@testable import Documents

/// Package documents (a folder saved whole) over a real folder, watched by a
/// real observer. One at a time, as ``DocumentTests``: each holds an inotify instance.
@Suite("Package documents", .serialized, .holdsObservers, .timeLimit(.minutes(5)))
struct PackageDocumentTests {
    /// A folder with a version store, its observer, and a workspace keeping versions in the store.
    final class Setup: Sendable {
        let folder: TemporaryFolder
        let observer: FileObserver
        let store: VersionStore
        let workspace: DocumentWorkspace

        init(
            limits: PackageLimits = PackageLimits(), autosave: Duration = .seconds(60), function: String = #function
        ) throws {
            folder = try TemporaryFolder(function: function)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            observer = try FileObserver(
                root: folder.path, options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero),
                logger: logger)
            try observer.start()
            try FileManager.default.createDirectory(atPath: folder(".fileshare"), withIntermediateDirectories: true)
            store = try VersionStore(path: folder(".fileshare/versions"), logger: logger)
            let keeper = try VersionStoreKeeper(store: store, origin: nil, root: folder.path)
            workspace = DocumentWorkspace(
                folder: try DocumentFolder(root: folder.path, keeper: keeper, packageLimits: limits),
                observer: observer, options: DocumentWorkspace.Options(autosaveDelay: autosave), logger: logger)
        }

        deinit { observer.stop() }

        /// `Story.pages/` with `index.xml`, `Data/image.png` and an empty `Empty/`.
        func makeStory(_ relative: String = "Story.pages") throws {
            try FileManager.default.createDirectory(
                atPath: folder(relative + "/Data"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                atPath: folder(relative + "/Empty"), withIntermediateDirectories: true)
            try folder.write("<story/>", to: relative + "/index.xml")
            try folder.write("PNG1", to: relative + "/Data/image.png")
        }

        func text(_ relative: String) -> String? {
            FileManager.default.contents(atPath: folder(relative)).map { String(decoding: $0, as: UTF8.self) }
        }

        /// The package on disk, read by the library's own reader of trees.
        func tree(_ relative: String) throws -> PackageContents {
            let fd = open(folder(relative), O_RDONLY | O_DIRECTORY)
            #expect(fd >= 0)
            defer { close(fd) }
            return try PackageTree.read(fd, limits: PackageLimits(), path: ItemPath(relative))
        }
    }

    static func story(index: String, image: String) throws -> PackageContents {
        try PackageContents(
            files: ["index.xml": Array(index.utf8), "Data/image.png": Array(image.utf8)], folders: ["Empty"])
    }

    @Test("open reads the tree; a save writes it whole; reopened it is the same; no echo; versions follow the id")
    func saveAndReopen() async throws {
        let setup = try Setup()
        try setup.makeStory()
        let document = try await setup.workspace.open("Story.pages")
        let events = DocumentTests.Events(document)
        let opened = try #require(await document.id)
        #expect(await document.package == (try Self.story(index: "<story/>", image: "PNG1")))
        var edited = try #require(await document.package)
        try edited.setFile("index.xml", Array("<story>two</story>".utf8))
        try edited.setFile("Data/Sub/note.txt", Array("new".utf8))
        edited.remove("Data/image.png")
        try await document.update(edited)
        #expect(try await document.save() == .clean)
        #expect(try setup.tree("Story.pages") == edited)
        #expect(!FileManager.default.fileExists(atPath: setup.folder("Story.pages/Data/image.png")))
        // The observer sees a new folder take the old one's place: the same
        // package saved anew, under the same id, as an atomic save of a file.
        await setup.observer.sync()
        #expect(await eventually { await document.id == setup.observer.item(at: "Story.pages")?.id })
        let id = try #require(await document.id)
        #expect(id == opened)
        #expect(await eventually { setup.store.versions(of: id).count == 1 })
        let version = try #require(setup.store.versions(of: id).first)
        #expect(version.kind == .directory && !version.conflict)
        #expect(version.size == Int64("<story/>".utf8.count + "PNG1".utf8.count))
        // A second save: a second version; nothing of its own comes back as someone else's.
        try edited.setFile("index.xml", Array("<story>three</story>".utf8))
        try await document.update(edited)
        #expect(try await document.save() == .clean)
        await setup.observer.sync()
        try await setup.folder.write("x", to: "marker.txt")
        await setup.observer.sync()
        #expect(await eventually { await document.id == setup.observer.item(at: "Story.pages")?.id })
        let newID = try #require(await document.id)
        #expect(newID == opened)
        #expect(await eventually { setup.store.versions(of: newID).count == 2 })
        #expect(!events.contains { if case .changedBySomeoneElse = $0 { true } else { false } }, "\(events.all)")
        await document.close()
        let again = try await setup.workspace.open("Story.pages")
        #expect(await again.package == edited)
        await again.close()
    }

    @Test("autosave, change counting and close work for a package as for bytes; a bytes document inside it is its own")
    func autosaveAndCounting() async throws {
        let setup = try Setup(autosave: .milliseconds(50))
        try setup.makeStory()
        let document = try await setup.workspace.open("Story.pages")
        let events = DocumentTests.Events(document)
        // A bytes document open on a file inside the package: the package's
        // saves replace its file, and it reads the new one.
        let inner = try await setup.workspace.open("Story.pages/index.xml")
        var edited = try #require(await document.package)
        try edited.setFile("index.xml", Array("<auto/>".utf8))
        try await document.update(edited)
        #expect(await document.hasUnsavedChanges)
        #expect(await eventually { setup.text("Story.pages/index.xml") == "<auto/>" })
        #expect(await eventually { await !document.hasUnsavedChanges })
        // What happened instead, when it fails (seen once under CI's load: a conflict).
        #expect(await eventually { events.contains { $0 == .saved(.clean) } }, "\(events.all)")
        #expect(await document.state == .normal, "\(events.all)")
        // Done and undone: nothing to save.
        await document.updateChangeCount(.done)
        await document.updateChangeCount(.undone)
        #expect(await !document.hasUnsavedChanges)
        try await inner.revert()
        #expect(await inner.contents == Array("<auto/>".utf8))
        // Close saves what is unsaved.
        try edited.setFile("index.xml", Array("<closed/>".utf8))
        try await document.update(edited)
        await document.close()
        #expect(setup.text("Story.pages/index.xml") == "<closed/>")
        #expect(await document.state == .closed)
        #expect(await eventually { events.ended })
        await inner.close()
    }

    @Test("an outside program writing one file inside during an edit: changed by someone else, then a conflict version")
    func innerWriteIsAConflict() async throws {
        let setup = try Setup()
        try setup.makeStory()
        let document = try await setup.workspace.open("Story.pages")
        let events = DocumentTests.Events(document)
        var mine = try #require(await document.package)
        try mine.setFile("index.xml", Array("<story>mine</story>".utf8))
        try await document.update(mine)
        // In place, as a program that opens the file and appends.
        let handle = try #require(
            FileHandle.closingOnExec(forWritingAtPath: setup.folder("Story.pages/Data/image.png")))
        handle.seekToEndOfFile()
        handle.write(Data(" theirs".utf8))
        try handle.close()
        #expect(
            await eventually { events.contains { $0 == .changedBySomeoneElse(path: "Story.pages") } }, "\(events.all)")
        guard case .conflict(let version) = try await document.save() else {
            Issue.record("expected a conflict")
            return
        }
        #expect(await document.state == .inConflict)
        #expect(try setup.tree("Story.pages") == mine)
        // Theirs is whole in the conflict version: their write and the rest of the tree.
        let record = try #require(setup.store.allVersions.first { $0.version == version })
        #expect(record.conflict && record.kind == .directory)
        let fd = try setup.store.openContent(version, of: record.id)
        defer { close(fd) }
        let kept = try PackageTree.read(fd, limits: PackageLimits(), path: "kept")
        #expect(kept == (try Self.story(index: "<story/>", image: "PNG1 theirs")))
        try await document.resolveConflict()
        #expect(await document.state == .normal)
        await document.close()
    }

    @Test("a package renamed by someone else stays open; it saves at its new path")
    func followsRename() async throws {
        let setup = try Setup()
        try setup.makeStory()
        let document = try await setup.workspace.open("Story.pages")
        let events = DocumentTests.Events(document)
        #expect(rename(setup.folder("Story.pages"), setup.folder("Renamed.pages")) == 0)
        #expect(await eventually { await document.path == "Renamed.pages" })
        #expect(await eventually { events.contains { $0 == .moved(from: "Story.pages", to: "Renamed.pages") } })
        var edited = try #require(await document.package)
        try edited.setFile("index.xml", Array("<moved/>".utf8))
        try await document.update(edited)
        // What the document heard, should the save find anything but its own package there.
        let outcome = try await document.save()
        #expect(outcome == .clean, "\(outcome); events: \(events.all)")
        #expect(setup.text("Renamed.pages/index.xml") == "<moved/>")
        #expect(!FileManager.default.fileExists(atPath: setup.folder("Story.pages")))
        await document.close()
    }

    @Test("create makes the folder appear whole; a file where a package is expected is refused")
    func createAndKinds() async throws {
        let setup = try Setup()
        let package = try Self.story(index: "<new/>", image: "P")
        let document = try await setup.workspace.create("New.pages", package: package)
        #expect(try setup.tree("New.pages") == package)
        await #expect(throws: DocumentsError.self) { try await document.update(Array("bytes".utf8)) }
        await #expect(throws: DocumentsError.self) {
            _ = try await setup.workspace.create("New.pages", package: package)
        }
        try setup.folder.write("plain", to: "plain.txt")
        #expect(throws: DocumentsError.self) { _ = try setup.workspace.folder.readPackage("plain.txt") }
        // A file takes the package's place: the save refuses and puts the file back.
        #expect(rename(setup.folder("New.pages"), setup.folder("Gone.pages")) == 0)
        await setup.observer.sync()
        try setup.folder.write("a file", to: "Other")
        let folder = setup.workspace.folder
        do {
            _ = try folder.savePackage(package, to: "Other", id: nil, known: nil)
            Issue.record("a package saved over a file")
        } catch {
            #expect(error.code == .notPackage)
        }
        #expect(setup.text("Other") == "a file")
        await document.close()
    }

    @Test("packages beyond the limits are refused, with a typed error, at open and at save")
    func limits() async throws {
        let setup = try Setup(limits: PackageLimits(maximumItems: 3, maximumBytes: 10))
        try setup.makeStory()  // 4 items
        await #expect(throws: DocumentsError.self) { _ = try await setup.workspace.open("Story.pages") }
        do {
            _ = try setup.workspace.folder.readPackage("Story.pages")
        } catch {
            #expect(error.code == .tooLarge)
        }
        let big = try PackageContents(files: ["a": [UInt8](repeating: 1, count: 11)])
        do {
            _ = try setup.workspace.folder.savePackage(big, to: "Big.pages", id: nil, known: nil, creating: true)
            Issue.record("a package over the byte limit was saved")
        } catch {
            #expect(error.code == .tooLarge)
        }
        #expect(!FileManager.default.fileExists(atPath: setup.folder("Big.pages")))
    }

    @Test(
        "what a crash left half-written in the staging folder is removed at the next open; a swapped-out tree is kept")
    func halfWrittenStaging() throws {
        let folder = try TemporaryFolder()
        _ = try DocumentFolder(root: folder.path)
        let staging = ".fileshare/staging/"
        for name in ["package-dead", "package-swapped", "package-busy"] {
            try FileManager.default.createDirectory(atPath: folder(staging + name), withIntermediateDirectories: true)
        }
        try folder.write("half", to: staging + "package-dead/index.xml")
        try folder.write("", to: staging + "package-dead.partial")
        try folder.write("theirs", to: staging + "package-swapped/index.xml")
        // A mark as old as a crash's (a fresh one may be a save under way in another process).
        let old = Date(timeIntervalSinceNow: -3600)
        try FileManager.default.setAttributes(
            [.modificationDate: old], ofItemAtPath: folder(staging + "package-dead.partial"))
        try folder.write("", to: staging + "package-busy.partial")
        try folder.write("busy", to: staging + "package-busy/index.xml")
        _ = try DocumentFolder(root: folder.path)
        #expect(!FileManager.default.fileExists(atPath: folder(staging + "package-dead")))
        #expect(!FileManager.default.fileExists(atPath: folder(staging + "package-dead.partial")))
        #expect(FileManager.default.fileExists(atPath: folder(staging + "package-swapped/index.xml")))
        #expect(FileManager.default.fileExists(atPath: folder(staging + "package-busy/index.xml")))
    }

    @Test("a reader of the package path sees one whole package at a time, never a mix, while saves run")
    func readersNeverSeeAMix() async throws {
        let folder = try TemporaryFolder()
        let documents = try DocumentFolder(root: folder.path)
        @Sendable func generation(_ number: Int) throws -> PackageContents {
            var files: [String: [UInt8]] = [:]
            for index in 0..<20 { files["Part \(index % 4)/file\(index)"] = Array("generation \(number)".utf8) }
            return try PackageContents(files: files)
        }
        let (_, first) = try documents.savePackage(
            try generation(0), to: "Busy.pages", id: nil, known: nil, creating: true)
        let stop = Atomic<Bool>(false)
        let wholeReads = Atomic<Int>(0)
        let path = folder("Busy.pages")
        // Both loops on threads of their own: neither ever waits, and on the
        // cooperative pool (two threads on CI) they would stall every other test.
        let reader = Task {
            await onOwnThread { () -> (whole: Int, mixed: Int) in
                var whole = 0
                var mixed = 0
                while !stop.load(ordering: .relaxed) {
                    // The folder opened once pins one tree, old or new.
                    let fd = open(path, O_RDONLY | O_DIRECTORY)
                    guard fd >= 0 else { continue }
                    defer { close(fd) }
                    guard let tree = try? PackageTree.read(fd, limits: PackageLimits(), path: "Busy.pages") else {
                        continue  // the old tree was removed while read: it is gone, not mixed
                    }
                    // Fewer files: the old tree was being removed (it is gone, not mixed).
                    if tree.files.count == 20 {
                        whole += 1
                        wholeReads.add(1, ordering: .relaxed)
                    }
                    if Set(tree.files.values).count > 1 { mixed += 1 }
                }
                return (whole, mixed)
            }
        }
        // At least 40 saves, and on until the reader (slow on a loaded
        // machine) has read some whole trees meanwhile, for at most a minute.
        let (number, unclean) = try await onOwnThread { () throws -> (Int, Int) in
            let deadline = ContinuousClock.now + .seconds(60)
            var number = 0
            var unclean = 0
            var known = first
            while number < 40 || (wholeReads.load(ordering: .relaxed) < 10 && ContinuousClock.now < deadline) {
                number += 1
                let (outcome, stamp) = try documents.savePackage(
                    try generation(number), to: "Busy.pages", id: nil, known: known)
                if outcome != .clean { unclean += 1 }
                known = stamp
            }
            return (number, unclean)
        }
        stop.store(true, ordering: .relaxed)
        #expect(unclean == 0)
        let (whole, mixed) = await reader.value
        #expect(whole > 0)
        #expect(mixed == 0)
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        #expect(try PackageTree.read(fd, limits: PackageLimits(), path: "Busy.pages") == generation(number))
        // Nothing left behind in the staging folder.
        #expect(try folderNames(folder(".fileshare/staging")).isEmpty)
    }

    @Test(
        "package paths: plain relative ones only; a file and a folder never share a name",
        arguments: ["", "/abs", "a/../b", "./a", "a//b", "a/", "nul\0"])
    func invalidPaths(path: String) {
        #expect(throws: DocumentsError.self) { _ = try PackageContents(files: [path: []]) }
    }

    @Test("a file and a folder of one name are refused; remove takes a folder with everything in it")
    func fileAndFolder() throws {
        var package = try PackageContents(files: ["a/b": [1]])
        #expect(package.folders == ["a"])
        #expect(throws: DocumentsError.self) { try package.setFile("a", [2]) }
        #expect(throws: DocumentsError.self) { try package.setFile("a/b/c", [2]) }
        package.remove("a")
        #expect(package == PackageContents())
    }
}
