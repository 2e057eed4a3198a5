import CFileshareShim
import FileshareTestSupport
import Foundation
import Synchronization
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// The real observer on real temporary folders, driven by real programs.
@Suite("Observer on a real folder")
struct ObserverIntegrationTests {
    @Test("files created, written and closed are added, then finished")
    func createAndFinish() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(dir.path)
            #expect(await probe.scanned())
            Disk.write(dir("report.pdf"), String(repeating: "p", count: 5000))
            #expect(
                await probe.wait {
                    $0.contains { if case .finished(let path, _, 5000) = $0 { path == "report.pdf" } else { false } }
                })
            let summaries = probe.liveChanges.map(\.summary)
            #expect(summaries.first == "added report.pdf writing")
        }
    }

    @Test("a slow writer that pauses longer than the settle time gets no early finished")
    func slowWriter() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(
                dir.path, options: ObserverOptions(settleTime: .milliseconds(200), latency: .milliseconds(10)))
            #expect(await probe.scanned())
            let handle = try #require(
                FileHandle(
                    forWritingAtPath: {
                        Disk.write(dir("movie.mkv"), ""); return dir("movie.mkv")
                    }()))
            try handle.write(contentsOf: Data(repeating: 1, count: 4096))
            // A pause of five settle times with the file still open.
            try await Task.sleep(for: .seconds(1))
            #expect(!probe.liveChanges.contains { if case .finished = $0 { true } else { false } })
            try handle.write(contentsOf: Data(repeating: 2, count: 4096))
            try await Task.sleep(for: .milliseconds(600))
            #expect(!probe.liveChanges.contains { if case .finished = $0 { true } else { false } })
            try handle.close()
            #expect(await probe.wait { $0.contains { if case .finished(_, _, 8192) = $0 { true } else { false } } })
        }
    }

    @Test("mv of a folder with 1,000 files is one moved event")
    func moveLargeFolder() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            Disk.mkdir(dir("a/photos"))
            Disk.mkdir(dir("b"))
            for i in 0..<1000 { Disk.write(dir("a/photos/img\(i).jpg")) }
            let probe = try ObserverProbe(dir.path)
            #expect(await probe.scanned())
            try run("/bin/mv", [dir("a/photos"), dir("b/pictures")])
            await probe.observer.sync()
            #expect(probe.liveChanges.map(\.summary) == ["moved a/photos b/pictures"])
            #expect(probe.observer.children(of: "b/pictures")?.count == 1000)
            #expect(probe.observer.item(at: "b/pictures/img999.jpg") != nil)
        }
    }

    @Test("cp -r and tar x: every file inside new folders is reported", arguments: ["cp", "tar"])
    func newFolders(tool: String) async throws {
        try await MachineSettings.shared {
            let source = try TemporaryFolder()
            for d in 0..<10 {
                Disk.mkdir(source("tree/d\(d)/e"))
                for f in 0..<20 { Disk.write(source("tree/d\(d)/e/f\(f).txt"), "\(d)-\(f)") }
            }
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(dir.path)
            #expect(await probe.scanned())
            if tool == "cp" {
                try run("/bin/cp", ["-r", source("tree"), dir("tree")])
            } else {
                try run("/bin/tar", ["-cf", source("tree.tar"), "-C", source.path, "tree"])
                try run("/bin/tar", ["-xf", source("tree.tar"), "-C", dir.path])
            }
            await probe.observer.sync()
            let replay = probe.replay()
            #expect(replay.violations.isEmpty, "\(replay.violations.prefix(3))")
            #expect(replay.contractItems == Disk.snapshot(dir.path))
            #expect(replay.contractItems.count == 1 + 20 + 200)
        }
    }

    @Test("an atomic save is modified of the target, which keeps its id")
    func atomicSave() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            Disk.write(dir("notes.md"), "one")
            let probe = try ObserverProbe(dir.path)
            #expect(await probe.scanned())
            let id = try #require(probe.observer.item(at: "notes.md")).id
            Disk.write(dir(".notes.md.swp"), "two, longer")
            Disk.rename(dir(".notes.md.swp"), dir("notes.md"))
            Disk.write(dir("notes.md~tmp"), "three")
            Disk.rename(dir("notes.md~tmp"), dir("notes.md"))
            await probe.observer.sync()
            let live = probe.liveChanges
            #expect(live.allSatisfy { $0.id == id }, "\(live.map(\.summary))")
            #expect(live.contains { if case .modified = $0 { true } else { false } })
            #expect(probe.observer.item(at: "notes.md")?.id == id)
            #expect(probe.observer.item(at: "notes.md")?.size == 5)
        }
    }

    @Test(
        "a folder exchanged with a new one from outside (renameat2 RENAME_EXCHANGE, a package's atomic save) keeps its id, and so do the items in it by name"
    )
    func folderExchange() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let staging = try TemporaryFolder()
            Disk.mkdir(dir("Story.pages/Data"))
            Disk.write(dir("Story.pages/index.xml"), "<story/>")
            Disk.write(dir("Story.pages/Data/image.png"), "PNG1")
            let probe = try ObserverProbe(dir.path)
            #expect(await probe.scanned())
            let before = ["Story.pages", "Story.pages/index.xml", "Story.pages/Data"].map {
                probe.observer.item(at: ItemPath($0))?.id
            }
            Disk.mkdir(staging("new/Data"))
            Disk.write(staging("new/index.xml"), "<story>two</story>")
            Disk.write(staging("new/Data/note.txt"), "new")
            let exchange = UInt32(CFS_RENAME_EXCHANGE)
            #expect(cfs_renameat2(AT_FDCWD, staging("new"), AT_FDCWD, dir("Story.pages"), exchange) == 0)
            await probe.observer.sync()
            let summaries = probe.liveChanges.map(\.summary)
            #expect(
                Set(summaries) == [
                    "modified Story.pages/index.xml", "removed Story.pages/Data/image.png",
                    "added Story.pages/Data/note.txt",
                ], "\(summaries)")
            let after = ["Story.pages", "Story.pages/index.xml", "Story.pages/Data"].map {
                probe.observer.item(at: ItemPath($0))?.id
            }
            #expect(after == before && !after.contains(nil))
            // The old package, outside now, goes; a file written in the new one afterwards is seen.
            try FileManager.default.removeItem(atPath: staging("new"))
            Disk.write(dir("Story.pages/Data/more.txt"), "more")
            #expect(
                await probe.wait {
                    $0.contains {
                        if case .finished(let path, _, _) = $0 { path == "Story.pages/Data/more.txt" } else { false }
                    }
                })
            #expect(probe.observer.item(at: "Story.pages")?.id == before[0])
        }
    }

    @Test("renames, moves in and out of the root, rm -rf")
    func renamesAndMoves() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let outside = try TemporaryFolder()
            Disk.mkdir(dir("inbox"))
            Disk.mkdir(dir("library/old"))
            Disk.write(dir("inbox/issue1.cbz"))
            Disk.write(dir("library/old/a"))
            Disk.mkdir(outside("arrivals/sub"))
            Disk.write(outside("arrivals/sub/x"))
            let probe = try ObserverProbe(dir.path)
            #expect(await probe.scanned())
            let id = try #require(probe.observer.item(at: "inbox/issue1.cbz")).id
            Disk.rename(dir("inbox/issue1.cbz"), dir("inbox/Issue 1.cbz"))
            Disk.rename(dir("inbox/Issue 1.cbz"), dir("library/Issue 1.cbz"))
            Disk.rename(dir("library/old"), outside("old"))
            Disk.rename(outside("arrivals"), dir("arrivals"))
            try run("/bin/rm", ["-rf", dir("inbox")])
            await probe.observer.sync()
            let live = probe.liveChanges
            #expect(
                Array(live.map(\.summary).prefix(7)) == [
                    "renamed inbox/issue1.cbz inbox/Issue 1.cbz", "moved inbox/Issue 1.cbz library/Issue 1.cbz",
                    "removed library/old", "added arrivals/", "added arrivals/sub/", "added arrivals/sub/x",
                    "removed inbox",
                ])
            #expect(live[0].id == id && live[1].id == id)
            #expect(
                probe.replay(initial: [
                    "inbox": "directory", "inbox/issue1.cbz": "file", "library": "directory",
                    "library/old": "directory", "library/old/a": "file",
                ]).contractItems == Disk.snapshot(dir.path))
        }
    }

    @Test("with no wait for a rename's second half, waiting for the renames still reporting pairs every move")
    func renamesPairedWithoutWait() async throws {
        // Alone: it holds eight inotify instances more, of the 128 a user may have.
        try await MachineSettings.alone {
            let dir = try TemporaryFolder()
            Disk.mkdir(dir("inbox"))
            Disk.mkdir(dir("library"))
            let count = 1000
            for i in 0..<count { Disk.write(dir("inbox/f\(i)")) }
            // Other listeners on both folders: the kernel queues each one's
            // events in turn, so a read lands between a rename's halves more often.
            let listeners = (0..<8).map { _ in inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
            defer { for fd in listeners where fd >= 0 { close(fd) } }
            for fd in listeners where fd >= 0 {
                for folder in ["inbox", "library"] { _ = inotify_add_watch(fd, dir(folder), UInt32(IN_MOVE)) }
            }
            var options = ObserverOptions(settleTime: .milliseconds(300), latency: .milliseconds(20))
            options.movePairingWait = .zero
            let probe = try ObserverProbe(dir.path, options: options)
            #expect(await probe.scanned())
            let ids = (0..<count).map { probe.observer.item(at: ItemPath("inbox/f\($0)"))?.id }
            #expect(!ids.contains(nil))
            // On another thread, so the monitor reads while renames are reporting:
            // some reads end between a rename's two halves.
            try await Task.detached {
                for i in 0..<count {
                    guard rename(dir("inbox/f\(i)"), dir("library/f\(i)")) == 0 else {
                        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    }
                }
            }.value
            await probe.observer.sync()
            let summaries = probe.liveChanges.map(\.summary)
            #expect(
                summaries == (0..<count).map { "moved inbox/f\($0) library/f\($0)" },
                "split: \(summaries.filter { !$0.hasPrefix("moved") }.prefix(20))")
            #expect((0..<count).map { probe.observer.item(at: ItemPath("library/f\($0)"))?.id } == ids)
        }
    }

    @Test("hard links are two items; symlinks, fifos and sockets are reported, never followed")
    func specialFiles() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(dir.path, options: ObserverOptions(latency: .zero))
            #expect(await probe.scanned())
            Disk.write(dir("one"))
            #expect(link(dir("one"), dir("two")) == 0)
            #expect(symlink(".", dir("loop")) == 0)
            #expect(symlink("/etc", dir("out")) == 0)
            #expect(mkfifo(dir("pipe"), 0o600) == 0)
            #expect(makeUnixSocket(dir("sock")))
            await probe.observer.sync()
            let added = probe.liveChanges.compactMap { change -> ChangedItem? in
                if case .added(let item) = change { item } else { nil }
            }
            let kinds = Dictionary(uniqueKeysWithValues: added.map { ($0.path.description, $0.kind) })
            #expect(
                kinds == [
                    "one": .file, "two": .file, "loop": .symlink, "out": .symlink, "pipe": .other, "sock": .other,
                ])
            #expect(Set(added.map(\.id)).count == 6)
            #expect(probe.observer.children(of: "loop") == nil, "a symlink is not followed")
        }
    }

    @Test("names that are not UTF-8 keep their bytes")
    func nonUTF8Names() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(dir.path, options: ObserverOptions(latency: .zero))
            #expect(await probe.scanned())
            var name = Array(dir.path.utf8) + Array("/caf".utf8) + [0xE9, 0]
            let fd = name.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { creat($0, 0o644) }
            }
            #expect(fd >= 0)
            close(fd)
            #expect(await probe.wait { $0.contains { if case .added = $0 { true } else { false } } })
            let line = try #require(probe.liveChanges.first { if case .added = $0 { true } else { false } }).jsonLine
            #expect(line.contains(#""path":"caf\#u{FFFD}""#))
            #expect(line.contains(#""path_b64":"Y2Fm6Q==""#))
            name.removeLast()
        }
    }

    @Test("sync() is a barrier: changes made before it are delivered when it returns")
    func syncBarrier() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(dir.path, options: ObserverOptions(latency: .seconds(5)))
            await probe.observer.sync()
            #expect(probe.changes.contains { if case .scanCompleted = $0 { true } else { false } })
            for i in 0..<50 { Disk.write(dir("f\(i)")) }
            await probe.observer.sync()
            #expect(probe.liveChanges.count == 50, "a five-second latency window is cut short by sync()")
        }
    }

    @Test("the root removed ends the stream with root-removed", arguments: ["delete", "move", "move-parent"])
    func rootRemoved(how: String) async throws {
        try await MachineSettings.shared {
            let parent = try TemporaryFolder()
            Disk.mkdir(parent("root/sub"))
            let probe = try ObserverProbe(parent("root"))
            #expect(await probe.scanned())
            let stream = probe.observer.changes()
            switch how {
            case "delete": try run("/bin/rm", ["-rf", parent("root")])
            case "move": Disk.rename(parent("root"), parent("elsewhere"))
            default: Disk.rename(parent.path, parent.path + "-moved")
            }
            #expect(await probe.wait { $0.contains { if case .rootRemoved = $0 { true } else { false } } })
            await #expect(throws: FileWatchingError.self) { try await probe.observer.waitUntilStopped() }
            for await _ in stream {}
            if how == "move-parent" { Disk.rename(parent.path + "-moved", parent.path) }
        }
    }

    @Test("opt-in identity attribute: written as user.fileshare.id; a cp -a copy is duplicated, with its own id")
    func identityAttribute() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(
                dir.path, options: ObserverOptions(latency: .zero, storesIdentityAttribute: true))
            #expect(await probe.scanned())
            Disk.write(dir("book.epub"), "epub")
            await probe.observer.sync()
            let id = try #require(probe.observer.item(at: "book.epub")?.id)
            #expect(storedIdentity(dir("book.epub")) == id.description)
            try run("/bin/cp", ["-a", dir("book.epub"), dir("copy.epub")])
            #expect(
                await probe.wait {
                    $0.contains {
                        if case .duplicated(let item, "book.epub") = $0 { item.path == "copy.epub" } else { false }
                    }
                })
            let copy = try #require(probe.observer.item(at: "copy.epub")?.id)
            #expect(copy != id)
            #expect(storedIdentity(dir("copy.epub")) == copy.description)
        }
    }

    @Test("with duplicate detection: cp of a file is duplicated, an edited copy is added")
    func contentDuplicates() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            Disk.write(dir("scan.pdf"), String(repeating: "%PDF page ", count: 20_000))
            let probe = try ObserverProbe(
                dir.path,
                options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero, detectsDuplicateContent: true))
            #expect(await probe.scanned())
            try run("/bin/cp", [dir("scan.pdf"), dir("scan copy.pdf")])
            Disk.write(dir("other.pdf"), String(repeating: "%PDF page ", count: 19_999) + "%PDF pagX ")
            #expect(
                await probe.wait {
                    $0.count { if case .added = $0 { true } else if case .duplicated = $0 { true } else { false } } == 2
                })
            let summaries = Set(probe.liveChanges.map(\.summary))
            #expect(summaries == ["duplicated scan copy.pdf scan.pdf", "added other.pdf"])
        }
    }

    @Test("bad roots throw clear errors")
    func badRoots() throws {
        let dir = try TemporaryFolder()
        Disk.write(dir("file"))
        #expect { _ = try ObserverProbe(dir("missing")) } throws: { ($0 as? FileWatchingError)?.code == .notFound }
        #expect { _ = try ObserverProbe(dir("file")) } throws: { ($0 as? FileWatchingError)?.code == .notADirectory }
    }

    @Test("polling mode sees additions, renames and removals")
    func polling() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            Disk.write(dir("old"))
            let probe = try ObserverProbe(
                dir.path,
                options: ObserverOptions(
                    settleTime: .milliseconds(100), latency: .zero, pollingInterval: .milliseconds(100)))
            #expect(await probe.scanned())
            Disk.rename(dir("old"), dir("new"))
            Disk.mkdir(dir("d"))
            Disk.write(dir("d/x"))
            await probe.observer.sync()
            // Found by a poll within the settle time, d/x is taken as still written (a writer on another
            // machine would not show); later, as complete: either is right.
            let summaries = Set(probe.liveChanges.map(\.summary))
            #expect(summaries.isSuperset(of: ["renamed old new", "added d/"]))
            #expect(summaries.contains("added d/x writing") || summaries.contains("added d/x"), "\(summaries)")
            #expect(probe.replay(initial: ["old": "file"]).contractItems == Disk.snapshot(dir.path))
        }
    }

    @Test("a queue overflow is repaired by a rescan and reported")
    func overflow() async throws {
        try MachineSettings.requireInotifySettings()
        let dir = try TemporaryFolder()
        Disk.write(dir("keep"))
        Disk.write(dir("before"))
        // The queue size is read when the inotify instance is made: 64 events.
        let probe = try await MachineSettings.with("/proc/sys/fs/inotify/max_queued_events", setTo: 64) {
            try ObserverProbe(
                dir.path, options: ObserverOptions(settleTime: .milliseconds(100), latency: .milliseconds(500)))
        }
        await MachineSettings.shared {
            #expect(await probe.scanned())
            // Hold the observer's logic while the kernel queue fills up: the
            // monitor thread reads what it can, then waits for the lock.
            probe.observer.state.core.withLock { _ in
                Disk.rename(dir("before"), dir("after"))
                for i in 0..<300 { Disk.write(dir("f\(i)")) }
                for i in 0..<100 { Disk.remove(dir("f\(i)")) }
            }
            await probe.observer.sync()
            #expect(probe.liveChanges.contains { if case .rescanned(_, "overflow") = $0 { true } else { false } })
            let replay = probe.replay(initial: ["keep": "file", "before": "file"])
            #expect(replay.violations.isEmpty, "\(replay.violations.prefix(3))")
            #expect(replay.contractItems == Disk.snapshot(dir.path))
        }
    }

    @Test(
        "the watch limit degrades a subtree to polling, with the sysctl as hint")
    func watchLimit() async throws {
        try MachineSettings.requireInotifySettings()
        try await MachineSettings.with("/proc/sys/fs/inotify/max_user_watches", setTo: try inotifyWatchesInUse() + 3) {
            let seen = try await degradedOnce(
                filling: .watches, leaving: 3, folders: (0..<5).map { "d\($0)" }, late: "d4/late"
            ) {
                if case .degraded(_, "watch-limit", let hint) = $0 { hint.contains("max_user_watches") } else { false }
            }
            #expect(seen.isEmpty, "never degraded; the changes of each try: \(seen)")
        }
    }
}

extension ObserverIntegrationTests {
    @Test(
        "no inotify instance left: the whole tree is polled, and the first events say so")
    func instanceLimit() async throws {
        try MachineSettings.requireInotifySettings()
        try await MachineSettings.with("/proc/sys/fs/inotify/max_user_instances", setTo: try inotifyInstancesInUse()) {
            let seen = try await degradedOnce(filling: .instances, leaving: 0, folders: [], late: "polled") {
                if case .degraded(.root, "watch-limit", let hint) = $0 {
                    hint.contains("max_user_instances")
                } else {
                    false
                }
            }
            #expect(seen.isEmpty, "never degraded; the changes of each try: \(seen)")
        }
    }
}

/// Starts an observer on a new folder holding `folders`, with every inotify
/// instance or watch the lowered limit still allows taken first (but
/// `leaving` of them), until an attempt sees a change that is `degraded`
/// and then a file written at `late` added by polling, or five attempts
/// have not.
///
/// The limit was set from a count a moment old, and other processes let go
/// of their instances at their own pace (a server another test killed a
/// moment ago), so the filling makes "nothing left" true when the observer
/// starts; a slot freed in the microseconds between is why an attempt may
/// find room, and a new one is made. A real fault fails all five.
/// Returns what each attempt that found room saw, empty once one was refused.
private func degradedOnce(
    filling: InotifyFiller.Kind, leaving: Int, folders: [String], late: String,
    degraded: @escaping (Change) -> Bool
) async throws -> [[String]] {
    var seen: [[String]] = []
    for _ in 0..<5 {
        let dir = try TemporaryFolder()
        for folder in folders { Disk.mkdir(dir(folder)) }
        let filler = try InotifyFiller(filling, leaving: leaving)
        defer { filler.close() }
        let probe = try ObserverProbe(
            dir.path,
            options: ObserverOptions(
                settleTime: .milliseconds(100), latency: .zero, degradedPollingInterval: .milliseconds(100)))
        #expect(await probe.scanned())
        guard probe.changes.contains(where: degraded) else {
            seen.append(probe.changes.map(\.summary))
            continue
        }
        // The observer stays degraded; what the filler holds goes back at
        // once, so other tests' observers starting now are not refused.
        filler.close()
        Disk.write(dir(late))
        // A sync covers what is polled: the file is known when it returns.
        await probe.observer.sync()
        #expect(probe.observer.item(at: ItemPath(late)) != nil, "sync polls the degraded subtree")
        #expect(
            await probe.wait { $0.map(\.summary).contains { $0 == "added \(late) writing" || $0 == "added \(late)" } })
        return []
    }
    return seen
}

/// Holds inotify instances, or watches on files of its own, until the user's
/// limit refuses one more, then raises the limit by `leaving` (put back by
/// `MachineSettings.with`, which lowered it).
private final class InotifyFiller {
    enum Kind {
        case instances, watches
        var setting: String {
            switch self {
            case .instances: "/proc/sys/fs/inotify/max_user_instances"
            case .watches: "/proc/sys/fs/inotify/max_user_watches"
            }
        }
    }
    private var descriptors: [Int32] = []
    private let files: TemporaryFolder

    init(_ kind: Kind, leaving: Int) throws {
        files = try TemporaryFolder()
        switch kind {
        case .instances:
            while descriptors.count < 100_000 {
                let fd = cfs_inotify_init()
                guard fd >= 0 else { break }
                descriptors.append(fd)
            }
        case .watches:
            let fd = cfs_inotify_init()
            guard fd >= 0 else { return }
            descriptors.append(fd)
            var watched = 0
            while watched < 100_000 {
                Disk.write(files("w\(watched)"))
                guard cfs_inotify_add_watch(fd, files("w\(watched)"), UInt32(CFS_IN_ATTRIB)) >= 0 else { break }
                watched += 1
            }
        }
        // Raising the limit gives exactly `leaving` back at once (a watch
        // removed is counted free only after the kernel's grace period).
        if leaving > 0 {
            let now = try String(contentsOfFile: kind.setting, encoding: .utf8)
            guard let limit = Int(now.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
            try "\(limit + leaving)\n".write(toFile: kind.setting, atomically: false, encoding: .utf8)
        }
    }

    func close() {
        for fd in descriptors { Glibc.close(fd) }
        descriptors = []
    }

    deinit { close() }
}

/// The inotify instances open now, in every process (from /proc/*/fd).
func inotifyInstancesInUse() throws -> Int {
    var count = 0
    for pid in try FileManager.default.contentsOfDirectory(atPath: "/proc") where pid.allSatisfy(\.isNumber) {
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { continue }
        for fd in fds
        where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"))
            == "anon_inode:inotify"
        {
            count += 1
        }
    }
    return count
}

/// The inotify watches this user's processes hold now (from /proc/*/fdinfo).
func inotifyWatchesInUse() throws -> Int {
    var count = 0
    for pid in try FileManager.default.contentsOfDirectory(atPath: "/proc") where pid.allSatisfy(\.isNumber) {
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fdinfo") else { continue }
        for fd in fds {
            guard let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8) else { continue }
            count += info.components(separatedBy: "inotify wd:").count - 1
        }
    }
    return count
}

/// The `user.fileshare.id` attribute of a file, read as `getfattr` would.
func storedIdentity(_ path: String) -> String? {
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = cfs_get_xattr(path, "user.fileshare.id", &buffer, buffer.count)
    return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
}

/// Binds a Unix domain socket at `path` (and closes it: the socket file stays).
func makeUnixSocket(_ path: String) -> Bool {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        buffer.copyBytes(from: bytes)
        buffer[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
        }
    }
}
