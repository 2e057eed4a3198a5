import FileWatching
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing
import Versions

@testable import Documents

/// Documents over a real folder, watched by a real observer: saves, autosaves,
/// others' writes, renames, deletes, conflicts. One at a time: each holds an
/// inotify instance, of which a user has 128 on a default machine, shared
/// with the rest of the suite.
@Suite("Documents", .serialized, .holdsObservers)
struct DocumentTests {
    /// A folder, its observer and a workspace with a short autosave delay.
    final class Setup: Sendable {
        let folder: TemporaryFolder
        let observer: FileObserver
        let workspace: DocumentWorkspace

        init(autosave: Duration = .milliseconds(50), function: String = #function) throws {
            folder = try TemporaryFolder(function: function)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            observer = try FileObserver(
                root: folder.path, options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero),
                logger: logger)
            try observer.start()
            workspace = DocumentWorkspace(
                folder: try DocumentFolder(root: folder.path), observer: observer,
                options: DocumentWorkspace.Options(autosaveDelay: autosave), logger: logger)
        }

        deinit { observer.stop() }

        func text(_ relative: String) -> String? {
            FileManager.default.contents(atPath: folder(relative)).map { String(decoding: $0, as: UTF8.self) }
        }

        /// Writes as an editor saving atomically does: a new file renamed over the old.
        func saveAtomically(_ text: String, to relative: String) throws {
            try folder.write(text, to: relative + ".tmp")
            #expect(rename(folder(relative + ".tmp"), folder(relative)) == 0)
        }
    }

    /// Collects a document's events as they arrive.
    final class Events: Sendable {
        final class Seen: Sendable {
            let list = Mutex<[DocumentEvent]>([])
            let ended = Atomic<Bool>(false)
        }
        private let seen = Seen()
        private let task: Task<Void, Never>

        init(_ document: Document) {
            let seen = self.seen
            let stream = document.events
            task = Task {
                for await event in stream { seen.list.withLock { $0.append(event) } }
                seen.ended.store(true, ordering: .releasing)
            }
        }

        /// Whether the stream has ended (the document closed) and every event is in.
        var ended: Bool { seen.ended.load(ordering: .acquiring) }

        deinit { task.cancel() }

        var all: [DocumentEvent] { seen.list.withLock { $0 } }

        func contains(where predicate: (DocumentEvent) -> Bool) -> Bool { all.contains(where: predicate) }
    }

    @Test("open, edit, and the autosave writes the file; the id stays; no echo of its own save")
    func autosave() async throws {
        let setup = try Setup()
        try setup.folder.write("first", to: "a.txt")
        await setup.observer.sync()
        let id = try #require(setup.observer.item(at: "a.txt")?.id)
        let document = try await setup.workspace.open("a.txt")
        let events = Events(document)
        #expect(await document.contents == Array("first".utf8))
        #expect(await document.id == id)
        try await document.update(Array("second".utf8))
        #expect(await document.hasUnsavedChanges)
        #expect(await eventually { setup.text("a.txt") == "second" })
        #expect(await eventually { await !document.hasUnsavedChanges })
        await setup.observer.sync()
        #expect(setup.observer.item(at: "a.txt")?.id == id, "a save keeps the file's identity")
        // Give the observer's report of our own save time to arrive: it must not be an outside change.
        try await setup.folder.write("x", to: "marker.txt")
        await setup.observer.sync()
        #expect(await eventually { events.contains { if case .saved(.clean) = $0 { true } else { false } } })
        #expect(!events.contains { if case .changedBySomeoneElse = $0 { true } else { false } }, "\(events.all)")
        #expect(await document.state == .normal)
        await document.close()
        #expect(await document.state == .closed)
    }

    @Test("someone else's save while the document has unsaved changes: both contents kept, inConflict")
    func conflict() async throws {
        let setup = try Setup(autosave: .seconds(60))
        try setup.folder.write("original", to: "notes.txt")
        let document = try await setup.workspace.open("notes.txt")
        let events = Events(document)
        try await document.update(Array("mine".utf8))
        try setup.saveAtomically("theirs", to: "notes.txt")
        #expect(await eventually { events.contains { $0 == .changedBySomeoneElse(path: "notes.txt") } })
        let outcome = try await document.save()
        guard case .conflict(let version) = outcome else {
            Issue.record("expected a conflict, got \(outcome)")
            return
        }
        #expect(setup.text("notes.txt") == "mine")
        let keeper = try #require(setup.workspace.folder.keeper as? ConflictCopies)
        #expect(
            FileManager.default.contents(atPath: keeper.path(of: version)).map { String(decoding: $0, as: UTF8.self) }
                == "theirs")
        #expect(await document.state == .inConflict)
        try await document.resolveConflict()
        #expect(await document.state == .normal)
        #expect(FileManager.default.fileExists(atPath: keeper.path(of: version)), "resolving loses nothing")
    }

    @Test("conflict copies follow a document that goes on under a new id, in their order; others' stay")
    func conflictCopiesReattach() throws {
        let folder = try TemporaryFolder()
        let keeper = try ConflictCopies(root: folder.path)
        let staging = try TemporaryFolder()
        let stagingFD = open(staging.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(stagingFD) }
        let (old, new, other) = (ItemID(rawValue: 11), ItemID(rawValue: 22), ItemID(rawValue: 33))
        var kept: [String] = []
        for (index, id) in [old, old, other].enumerated() {
            try staging.write("copy \(index)", to: "swapped")
            kept.append(try #require(try keeper.keep("swapped", in: stagingFD, path: "n.txt", id: id, conflict: true)))
        }
        keeper.reattach(from: old, to: new)
        #expect(keeper.versions(of: old).isEmpty)
        let moved = keeper.versions(of: new)
        #expect(moved.count == 2)
        #expect(
            moved.map {
                FileManager.default.contents(atPath: keeper.path(of: $0)).map { String(decoding: $0, as: UTF8.self) }
            }
                == ["copy 0", "copy 1"])
        #expect(keeper.versions(of: other) == [kept[2]])
    }

    @Test("someone else writing in place (same file, new size) is caught too")
    func inPlaceWrite() async throws {
        let setup = try Setup(autosave: .seconds(60))
        try setup.folder.write("original", to: "n.txt")
        let document = try await setup.workspace.open("n.txt")
        try await document.update(Array("mine".utf8))
        let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: setup.folder("n.txt")))
        handle.seekToEndOfFile()
        handle.write(Data(" and more".utf8))
        try handle.close()
        let outcome = try await document.save()
        guard case .conflict(let version) = outcome else {
            Issue.record("expected a conflict, got \(outcome)")
            return
        }
        let keeper = try #require(setup.workspace.folder.keeper as? ConflictCopies)
        #expect(
            FileManager.default.contents(atPath: keeper.path(of: version)).map { String(decoding: $0, as: UTF8.self) }
                == "original and more")
    }

    @Test("a rename by someone else keeps the document open; it saves at the new path")
    func followsRename() async throws {
        let setup = try Setup(autosave: .seconds(60))
        try FileManager.default.createDirectory(atPath: setup.folder("sub"), withIntermediateDirectories: true)
        try setup.folder.write("text", to: "a.txt")
        let document = try await setup.workspace.open("a.txt")
        let events = Events(document)
        #expect(rename(setup.folder("a.txt"), setup.folder("sub/b.txt")) == 0)
        #expect(await eventually { await document.path == "sub/b.txt" })
        #expect(await eventually { events.contains { $0 == .moved(from: "a.txt", to: "sub/b.txt") } })
        try await document.update(Array("edited".utf8))
        #expect(try await document.save() == .clean)
        #expect(setup.text("sub/b.txt") == "edited")
        #expect(!FileManager.default.fileExists(atPath: setup.folder("a.txt")))
    }

    @Test("a delete is reported; saving puts the content back")
    func deleted() async throws {
        let setup = try Setup(autosave: .seconds(60))
        try setup.folder.write("text", to: "d.txt")
        let document = try await setup.workspace.open("d.txt")
        let events = Events(document)
        #expect(unlink(setup.folder("d.txt")) == 0)
        #expect(await eventually { events.contains { $0 == .deleted(path: "d.txt") } })
        try await document.update(Array("kept".utf8))
        #expect(try await document.save() == .created)
        #expect(setup.text("d.txt") == "kept")
    }

    @Test("close saves what is unsaved; shutting the workspace down saves every document")
    func closeAndShutdown() async throws {
        let setup = try Setup(autosave: .seconds(60))
        try setup.folder.write("1", to: "one.txt")
        try setup.folder.write("2", to: "two.txt")
        let one = try await setup.workspace.open("one.txt")
        let two = try await setup.workspace.open("two.txt")
        try await one.update(Array("one edited".utf8))
        await one.close()
        #expect(setup.text("one.txt") == "one edited")
        try await two.update(Array("two edited".utf8))
        await setup.workspace.closeAll()
        #expect(setup.text("two.txt") == "two edited")
        #expect(await two.state == .closed)
        #expect(setup.workspace.documents.isEmpty)
        await #expect(throws: DocumentsError.self) { try await two.update([1]) }
    }

    @Test("create refuses an existing name; paths that leave the folder are refused")
    func createAndPaths() async throws {
        let setup = try Setup()
        let made = try await setup.workspace.create("new.md", contents: Array("# hi".utf8))
        #expect(setup.text("new.md") == "# hi")
        #expect(await made.id != nil)
        for bad: ItemPath in ["new.md"] {
            await #expect(throws: DocumentsError(.exists, "'new.md' already exists; open it, or choose another name")) {
                _ = try await setup.workspace.create(bad, contents: [])
            }
        }
        for bad: ItemPath in ["../outside.txt", ".fileshare/staging/x", "a/./b", ""] {
            let error = await #expect(throws: DocumentsError.self) { _ = try await setup.workspace.open(bad) }
            #expect(error?.code == .invalidPath, "\(bad)")
        }
        #expect(symlink("/etc", setup.folder("link")) == 0)
        let error = await #expect(throws: DocumentsError.self) { _ = try await setup.workspace.open("link/hostname") }
        #expect(error?.code != nil)
    }

    @Test(
        "a full disk: savingError, the changes kept, the file as it was; the next save succeeds")
    func diskFull() async throws {
        try Requirement.requireRoot(for: "mounting a small disk")
        try await MachineSettings.shared {
            let done: Void? = try await SmallDisk.with(size: "256k") { mountPoint in
                var logger = Logger(label: "test")
                logger.logLevel = .critical
                let observer = try FileObserver(
                    root: mountPoint, options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero),
                    logger: logger)
                try observer.start()
                defer { observer.stop() }
                let workspace = DocumentWorkspace(
                    folder: try DocumentFolder(root: mountPoint), observer: observer,
                    options: DocumentWorkspace.Options(autosaveDelay: .milliseconds(50)), logger: logger)
                FileManager.default.createFile(atPath: mountPoint + "/doc.txt", contents: Data("small".utf8))
                let document = try await workspace.open("doc.txt")
                let events = Events(document)
                try await document.update([UInt8](repeating: 65, count: 512 * 1024))
                #expect(await eventually { await document.state.contains(.savingError) })
                #expect(await document.hasUnsavedChanges)
                #expect(await document.savingError?.code == .diskFull)
                #expect(FileManager.default.contents(atPath: mountPoint + "/doc.txt") == Data("small".utf8))
                #expect(events.contains { if case .saveFailed = $0 { true } else { false } })
                #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint + "/.fileshare/staging").isEmpty)
                try await document.update(Array("fits".utf8))
                #expect(await eventually { await document.state == .normal })
                #expect(FileManager.default.contents(atPath: mountPoint + "/doc.txt") == Data("fits".utf8))
                await document.close()
            }
            if done == nil { Issue.record("cannot mount a small tmpfs here: \(String(cString: strerror(errno)))") }
        }
    }
}

/// Waits (up to ten seconds) for a condition.
func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<1000 {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

extension DocumentTests {
    @Test("a writer that still has the file open when the document saves: its later writes land in the kept version")
    func writerStillOpen() async throws {
        let setup = try Setup(autosave: .seconds(60))
        try setup.folder.write("original", to: "w.txt")
        let document = try await setup.workspace.open("w.txt")
        try await document.update(Array("mine".utf8))
        let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: setup.folder("w.txt")))
        let outcome = try await document.save()
        handle.seekToEndOfFile()
        handle.write(Data(" + late".utf8))
        try handle.close()
        guard case .conflict(let version) = outcome else {
            Issue.record("an open writer's file must be kept: \(outcome)")
            return
        }
        let keeper = try #require(setup.workspace.folder.keeper as? ConflictCopies)
        #expect(
            FileManager.default.contents(atPath: keeper.path(of: version)).map { String(decoding: $0, as: UTF8.self) }
                == "original + late")
        #expect(setup.text("w.txt") == "mine")
    }
}

extension DocumentTests {
    /// The state is asked once every change on disk has reached the document:
    /// under load the observer reported the document's own save as a file
    /// being written, and the document took itself for another writer
    /// (`editingDisabled`) until the save settled.
    @Test(
        "with the version store: each save keeps the content before it; someone else's is a conflict version until resolved"
    )
    func versionStore() async throws {
        let folder = try TemporaryFolder()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let observer = try FileObserver(
            root: folder.path, options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero), logger: logger)
        try observer.start()
        defer { observer.stop() }
        try FileManager.default.createDirectory(atPath: folder(".fileshare"), withIntermediateDirectories: true)
        let store = try VersionStore(path: folder(".fileshare/versions"), logger: logger)
        let keeper = try VersionStoreKeeper(store: store, origin: nil, root: folder.path)
        let workspace = DocumentWorkspace(
            folder: try DocumentFolder(root: folder.path, keeper: keeper), observer: observer,
            options: DocumentWorkspace.Options(autosaveDelay: .seconds(60)), logger: logger)
        try folder.write("one", to: "v.txt")
        let document = try await workspace.open("v.txt")
        let id = try #require(await document.id)
        try await document.update(Array("two".utf8))
        #expect(try await document.save() == .clean)
        var versions = store.versions(of: id)
        #expect(versions.count == 1 && versions.first?.conflict == false)
        // Someone else's save, then ours: theirs is a conflict version.
        try folder.write("theirs", to: "v.txt.tmp")
        #expect(rename(folder("v.txt.tmp"), folder("v.txt")) == 0)
        try await document.update(Array("three".utf8))
        guard case .conflict(let version) = try await document.save() else {
            Issue.record("expected a conflict")
            return
        }
        let currentID = try #require(await document.id)
        versions = store.versions(of: currentID) + (currentID == id ? [] : store.versions(of: id))
        let conflict = try #require(versions.first { $0.version == version })
        #expect(conflict.conflict)
        let fd = try store.openContent(version, of: conflict.id)
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &bytes, 16)
        close(fd)
        #expect(String(decoding: bytes[..<max(0, count)], as: UTF8.self) == "theirs")
        // Once the documents have heard of every change on disk.
        await workspace.sync()
        let state = await document.state
        #expect(state == .inConflict, "state: \(state)")
        try await document.resolveConflict()
        let resolved = await document.state
        #expect(resolved == .normal, "state: \(resolved)")
        #expect(
            try store.version(version, of: conflict.id).conflict == false, "resolving keeps it, as an ordinary version")
        await document.close()
    }
}
