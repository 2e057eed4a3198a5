import Documents
import FileWatching
import FileshareTestSupport
import Foundation
import Logging
import Synchronization
import Testing
import Versions

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 12's proof: a seeded random run of the `Documents` library, the JSON
/// API, WebDAV and outside writers on one folder, with the server killed
/// (`SIGKILL`) at random moments — also in the middle of an upload. At the
/// end, every content saved through fileshare and every outside write that
/// fileshare replaced or deleted is the current file, a version or in the
/// trash; every visible file holds one whole content someone wrote; and the
/// document's states form a chain that ends closed.
///
/// What cannot be kept is left out of the demand, as the README says: an
/// outside program that overwrites or deletes a file replaces it before
/// fileshare can keep anything. `FILESHARE_SEEDS=N` runs N seeds (default 3).
@Suite("Documents across faces, with server kills", .serialized, .timeLimit(.minutes(10)))
struct DocumentsAcrossFacesTests {
    static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["FILESHARE_SEEDS"].flatMap(Int.init) ?? 3
        return (0..<UInt64(count)).map { $0 &* 0x9E37_79B9_7F4A_7C15 &+ 7 }
    }

    /// The names the run writes; the document is open on the first.
    static let names = ["doc.txt", "a.txt", "b.txt", "c.txt"]

    /// What should be where, as far as the test knows.
    struct Model {
        /// The content at each name, and whether fileshare wrote it.
        var current: [String: String] = [:]
        /// Contents that must survive somewhere: current, a version, the trash.
        var required: Set<String> = []
        /// Every content anyone tried to write, whole.
        var written: Set<String> = []

        /// Fileshare replaced or deleted what was at `name`: it must have kept it.
        mutating func replacedByFileshare(_ name: String) {
            if let old = current[name] { required.insert(old) }
        }
    }

    /// The server as a child process, started again after each kill.
    final class Server {
        let folder: String
        private(set) var process: CommandProcess
        private(set) var url: String

        init(folder: String) async throws {
            self.folder = folder
            (process, url) = try await Self.start(folder)
        }

        static func start(_ folder: String) async throws -> (CommandProcess, String) {
            let serve = try CommandProcess(["serve", folder, "--port", "0", "--no-auth"])
            guard await serve.waitForLine(timeout: .seconds(60), { $0.hasPrefix("Serving ") }) else {
                throw CocoaError(.fileReadUnknown, userInfo: [NSDebugDescriptionErrorKey: serve.errorOutput])
            }
            return (serve, String(serve.lines.first?.split(separator: " ").last ?? ""))
        }

        func kill() async {
            process.send(SIGKILL)
            _ = await process.exitStatus()
        }

        func restart() async throws { (process, url) = try await Self.start(folder) }

        func stop() async {
            process.send(SIGTERM)
            _ = await process.exitStatus()
        }
    }

    @Test("nothing saved is lost, whatever the order and wherever the server dies", arguments: seeds)
    func random(seed: UInt64) async throws {
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let scratch = try TemporaryFolder()
            for name in Self.names { try folder.write("start-\(name)", to: name) }
            var model = Model()
            for name in Self.names {
                model.current[name] = "start-\(name)"
                model.written.insert("start-\(name)")
            }
            let server = try await Server(folder: folder.path)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let observer = try FileObserver(
                root: folder.path, options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero),
                logger: logger)
            try observer.start()
            defer { observer.stop() }
            // The library keeps what its saves replace in the server's own store.
            let store = try VersionStore(path: folder(".fileshare/versions"), logger: logger)
            let workspace = DocumentWorkspace(
                folder: try DocumentFolder(
                    root: folder.path, keeper: try VersionStoreKeeper(store: store, origin: nil, root: folder.path)),
                observer: observer, options: DocumentWorkspace.Options(autosaveDelay: .seconds(3600)), logger: logger)
            let document = try await workspace.open("doc.txt")
            let events = Events(document)
            var generator = SeededRandom(seed: seed)
            var log: [String] = []

            for step in 1...30 {
                let name = Self.names[Int.random(in: 0..<Self.names.count, using: &generator)]
                let tag = "\(seed % 1000)-\(step)"
                switch Int.random(in: 0..<10, using: &generator) {
                case 0, 1:
                    let mine = "lib-\(tag)"
                    log.append("library saves \(mine)")
                    model.written.insert(mine)
                    try await document.update(Array(mine.utf8))
                    let outcome = try await document.save()
                    if case .conflict = outcome { try await document.resolveConflict() }
                    model.replacedByFileshare("doc.txt")
                    model.current["doc.txt"] = mine
                case 2, 3:
                    let face = Bool.random(using: &generator) ? "api/files" : "dav"
                    let content = "\(face == "dav" ? "dav" : "api")-\(tag)"
                    log.append("PUT /\(face)/\(name) \(content)")
                    model.written.insert(content)
                    let (status, body) = try await curl([
                        "-X", "PUT", "--data-binary", content, server.url + "\(face)/\(name)",
                    ])
                    #expect((200..<300).contains(status), "seed \(seed): \(status) \(body): \(log)")
                    if (200..<300).contains(status) {
                        model.replacedByFileshare(name)
                        model.current[name] = content
                    }
                case 4 where model.current[name] != nil:
                    log.append("DELETE /api/files/\(name)")
                    let (status, body) = try await curl(["-X", "DELETE", server.url + "api/files/\(name)"])
                    #expect((200..<300).contains(status), "seed \(seed): \(status) \(body): \(log)")
                    if (200..<300).contains(status) {
                        model.replacedByFileshare(name)
                        model.current[name] = nil
                    }
                case 5:
                    let theirs = "out-\(tag)"
                    log.append("their atomic save of \(name): \(theirs)")
                    model.written.insert(theirs)
                    try folder.write(theirs, to: name + ".tmp~")
                    #expect(rename(folder(name + ".tmp~"), folder(name)) == 0)
                    model.current[name] = theirs
                case 6 where model.current[name] != nil:
                    let theirs = "in-place-\(tag)"
                    log.append("their write in place of \(name): \(theirs)")
                    model.written.insert(theirs)
                    let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: folder(name)))
                    try handle.truncate(atOffset: 0)
                    try handle.write(contentsOf: Data(theirs.utf8))
                    try handle.close()
                    model.current[name] = theirs
                case 7 where name != "doc.txt" && model.current[name] != nil:
                    // Renamed to a free name among the others (never the document's).
                    guard let target = Self.names.dropFirst().first(where: { model.current[$0] == nil }) else { break }
                    log.append("they rename \(name) to \(target)")
                    #expect(rename(folder(name), folder(target)) == 0)
                    model.current[target] = model.current[name]
                    model.current[name] = nil
                case 8:
                    // Killed in the middle of an upload: what lands is whole or nothing.
                    let big = "big-\(tag)-" + String(repeating: "z", count: 4_000_000)
                    log.append("PUT /api/files/\(name) of 4 MB, killed meanwhile")
                    model.written.insert(big)
                    try scratch.write(big, to: "big")
                    let (url, body) = (server.url, "@" + scratch("big"))
                    let upload = Task {
                        try? await curl(["-X", "PUT", "--data-binary", body, url + "api/files/\(name)"])
                    }
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...60, using: &generator)))
                    await server.kill()
                    let answer = await upload.value
                    try await server.restart()
                    let landed = (try? String(contentsOfFile: folder(name), encoding: .utf8)) == big
                    if let answer, (200..<300).contains(answer.0) {
                        #expect(landed, "seed \(seed): an upload answered \(answer.0) is in place: \(log)")
                    }
                    if landed {
                        model.replacedByFileshare(name)
                        model.current[name] = big
                    }
                default:
                    log.append("the server is killed and started again")
                    await server.kill()
                    try await server.restart()
                }
                // Every visible file is one whole content someone wrote.
                for visible in Self.names {
                    guard let text = try? String(contentsOfFile: folder(visible), encoding: .utf8) else { continue }
                    #expect(
                        model.written.contains(text),
                        "seed \(seed) step \(step): \(visible) holds unknown bytes: \(log)")
                }
                // The library takes up outside writes before its next save.
                await observer.sync()
            }
            await document.close()
            await server.stop()
            #expect(await waitFor { events.ended })

            // Nothing required is lost: it is current, a version or in the trash.
            for content in model.current.values { model.required.insert(content) }
            let kept = Self.contents(under: folder.path, skipping: [".fileshare"])
                .union(Self.contents(under: folder(".fileshare/versions")))
                .union(Self.contents(under: folder(".fileshare/trash")))
            let lost = model.required.subtracting(kept)
            #expect(lost.isEmpty, "seed \(seed): lost \(lost.map { String($0.prefix(24)) }): \(log)")
            // The states seen form a chain that ends closed.
            var state = DocumentState.normal
            for case .stateChanged(let from, let to) in events.all {
                #expect(from == state, "seed \(seed): \(events.all)")
                state = to
            }
            #expect(state == .closed)
        }
    }

    /// The contents of every regular file under `path` (version records left out).
    static func contents(under path: String, skipping skipped: Set<String> = []) -> Set<String> {
        var found: Set<String> = []
        guard let walker = FileManager.default.enumerator(atPath: path) else { return found }
        while let relative = walker.nextObject() as? String {
            if skipped.contains(relative) {
                walker.skipDescendants()
                continue
            }
            let full = path + "/" + relative
            var status = stat()
            guard lstat(full, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                !relative.hasSuffix("meta.json")
            else { continue }
            if let text = try? String(contentsOfFile: full, encoding: .utf8) { found.insert(text) }
        }
        return found
    }

    /// A document's events as they arrive.
    final class Events: Sendable {
        final class Seen: Sendable {
            let list = Mutex<[DocumentEvent]>([])
            let ended = Mutex(false)
        }
        private let seen = Seen()
        private let task: Task<Void, Never>

        init(_ document: Document) {
            let seen = self.seen
            let stream = document.events
            task = Task {
                for await event in stream { seen.list.withLock { $0.append(event) } }
                seen.ended.withLock { $0 = true }
            }
        }

        deinit { task.cancel() }

        var all: [DocumentEvent] { seen.list.withLock { $0 } }
        var ended: Bool { seen.ended.withLock { $0 } }
    }
}
