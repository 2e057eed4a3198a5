import CFileshareShim
import FileshareTestSupport
import Foundation
import Synchronization
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// Rounds of random everyday operations (create, append, atomic save,
/// rename, move across folders, move away and make anew at the old name,
/// swap or rotate names, make, move and remove folders, copies, moves in
/// and out of the root) against the real observer on a real folder, found
/// each of the ways it can find them: live, polling, restarted from its
/// saved state between rounds (as a takeover does), and with the kernel's
/// queue overflowing. After each round and `sync()`: the replay of the
/// changes equals the disk, the tree equals the disk, the stream's ids are
/// the tree's, and every id follows its inode (number and generation) by
/// the rules of `events.md` (``InodeLedger``).
///
/// Every failure names its mode and seed, and prints the operations;
/// `FILESHARE_SEED=N` replays one seed, `FILESHARE_REAL_SEEDS=N` runs more,
/// `FILESHARE_REAL_ROUNDS=N` makes each longer.
@Suite("Observer on a real folder, random rounds")
struct ObserverRandomTests {
    enum Mode: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case live, polling, restart, overflow
        var testDescription: String { rawValue }
    }

    static let seeds: [UInt64] = {
        if let fixed = getenv("FILESHARE_SEED").flatMap({ UInt64(String(cString: $0)) }) { return [fixed] }
        let count = getenv("FILESHARE_REAL_SEEDS").flatMap { Int(String(cString: $0)) } ?? 3
        return (0..<UInt64(count)).map { $0 &* 7919 &+ 17 }
    }()

    static let rounds = getenv("FILESHARE_REAL_ROUNDS").flatMap { Int(String(cString: $0)) } ?? 20

    @Test("ids follow inodes and the replay equals the disk, round after round", arguments: Mode.allCases, seeds)
    func rounds(mode: Mode, seed: UInt64) async throws {
        if mode == .overflow {
            try MachineSettings.requireInotifySettings()
            // A queue of 16 events overflows within a round (read when the instance is made).
            let run = try await MachineSettings.with("/proc/sys/fs/inotify/max_queued_events", setTo: 16) {
                try RandomRun(mode: mode, seed: seed)
            }
            try await MachineSettings.shared { try await run.play() }
        } else {
            try await MachineSettings.shared { try await RandomRun(mode: mode, seed: seed).play() }
        }
    }
}

/// One seed's rounds.
final class RandomRun {
    let mode: ObserverRandomTests.Mode
    let seed: UInt64
    var random: SeededRandom
    let dir: TemporaryFolder
    let outside: TemporaryFolder
    let options: ObserverOptions
    var probe: ObserverProbe
    /// What the consumer was told, over every run of the observer.
    var replay: Replay
    /// How many of the current probe's changes `replay` has.
    var applied = 0
    var ledger = InodeLedger<DiskInode>()
    var log: [String] = []
    var counter = 0
    let duplicates: Int

    init(mode: ObserverRandomTests.Mode, seed: UInt64) throws {
        self.mode = mode
        self.seed = seed
        random = SeededRandom(seed: seed)
        dir = try TemporaryFolder()
        outside = try TemporaryFolder()
        Disk.mkdir(dir("start/inner"))
        Disk.write(dir("start/inner/file"), "seed")
        let latency: Duration = [.zero, .milliseconds(20), .milliseconds(100)].randomElement(using: &random)!
        // Some runs detect copies: new files are then reported once complete.
        duplicates = Int.random(in: 0..<3, using: &random)
        // Polls either race the operations or come only with sync().
        let interval: Duration = Bool.random(using: &random) ? .milliseconds(15) : .seconds(3600)
        options = ObserverOptions(
            settleTime: .milliseconds(50), latency: latency, pollingInterval: mode == .polling ? interval : nil,
            storesIdentityAttribute: duplicates == 1, stateFile: outside("state.bin"),
            detectsDuplicateContent: duplicates == 2)
        log.append("latency \(latency), duplicates \(duplicates), polling every \(interval)")
        probe = try ObserverProbe(dir.path, options: options)
        replay = Replay()
    }

    func fresh() -> String {
        counter += 1
        return "n\(counter)"
    }

    var context: String { "\(mode) seed \(seed)" }

    func play() async throws {
        #expect(await probe.scanned(), "\(context)")
        let ids = ["start", "start/inner", "start/inner/file"].compactMap { path in
            probe.observer.item(at: ItemPath(path)).map { (ItemPath(path), $0.id) }
        }
        replay = Replay(
            initial: ["start": .directory, "start/inner": .directory, "start/inner/file": .file],
            ids: Dictionary(uniqueKeysWithValues: ids))
        applied = probe.changes.count
        try await check(round: 0)
        for round in 1...ObserverRandomTests.rounds {
            log.append("round \(round)")
            let holding = mode == .overflow && Bool.random(using: &random)
            let count = Int.random(in: 1...12, using: &random)
            if holding {
                // The observer's logic held while the queue fills up and overflows.
                try probe.observer.state.core.withLock { _ in
                    for _ in 0..<count { try operate() }
                }
            } else {
                for _ in 0..<count { try operate() }
            }
            if mode == .restart { try await restart() }
            try await check(round: round)
            if !ledgerAndReplayHold { break }
        }
    }

    var failures = 0
    var ledgerAndReplayHold: Bool { failures == 0 }

    /// Stops the observer (its state is saved), changes the disk while no
    /// one watches, and starts a new one from the saved state.
    func restart() async throws {
        await probe.observer.sync()
        probe.observer.stop()
        try? await probe.observer.waitUntilStopped()
        if getenv("FILESHARE_TRACE") != nil {
            for change in probe.changes[applied...] {
                print("TRACE before restart: \(change.summary) [\(change.id.map { "\($0)" } ?? "")]")
            }
        }
        take(probe.changes)
        for _ in 0..<Int.random(in: 0...6, using: &random) { try operate(offline: true) }
        probe = try ObserverProbe(dir.path, options: options)
        applied = 0
        #expect(await probe.scanned(), "\(context)")
        log.append("restart")
    }

    func take(_ changes: [Change]) {
        replay.apply(Array(changes[applied...]))
        applied = changes.count
    }

    func check(round: Int) async throws {
        await probe.observer.sync()
        let disk = Disk.snapshot(dir.path)
        if duplicates != 0 {
            // New files are reported once complete: after the settle time.
            _ = await probe.wait(timeout: .seconds(10)) { [self] changes in
                var ahead = replay
                ahead.apply(Array(changes[applied...]))
                return ahead.contractItems == disk
            }
        }
        take(probe.changes)
        let tree = treeSnapshot(probe.observer)
        let inodes = Self.inodes(dir.path, paths: disk.keys.map { ItemPath($0) })
        var treeIDs: [ItemPath: ItemID] = [:]
        for path in disk.keys { treeIDs[ItemPath(path)] = probe.observer.item(at: ItemPath(path))?.id }
        let before = ledger.violations.count
        ledger.check(ids: replay.ids, disk: inodes, context: "round \(round): ")
        let problems =
            Array(replay.violations.prefix(3)) + Array(ledger.violations.dropFirst(before).prefix(3))
            + (replay.contractItems != disk ? ["replay \(differences(disk, replay.contractItems))"] : [])
            + (tree != disk ? ["tree \(differences(disk, tree))"] : [])
            + (treeIDs != replay.ids ? ["the stream's ids are not the tree's"] : [])
        guard !problems.isEmpty else { return }
        failures += 1
        print("\(context) failed in round \(round): \(problems)\n  operations: \(log.joined(separator: "; "))")
        if getenv("FILESHARE_TRACE") != nil {
            for change in probe.changes {
                print("TRACE change: \(change.summary) [\(change.id.map { "\($0)" } ?? "")]")
            }
        }
        #expect(replay.violations.isEmpty, "\(context), round \(round): \(replay.violations.prefix(3))")
        #expect(ledger.violations.count == before, "\(context), round \(round): \(ledger.violations.suffix(3))")
        #expect(
            replay.contractItems == disk,
            "\(context), round \(round): replay \(differences(disk, replay.contractItems))")
        #expect(tree == disk, "\(context), round \(round): tree \(differences(disk, tree))")
        #expect(treeIDs == replay.ids, "\(context), round \(round): the stream's ids are not the tree's")
    }

    /// Records the disk's names and inodes for the ledger (every name, hidden ones too).
    func recordDisk() {
        let all = Disk.snapshot(dir.path, includeHidden: true)
        ledger.record(Self.inodes(dir.path, paths: all.keys.map { ItemPath($0) }))
    }

    /// One random operation.
    func operate(offline: Bool = false) throws {
        defer { recordDisk() }
        let disk = Disk.snapshot(dir.path)
        let folders = [""] + disk.filter { $0.value == "directory" }.keys.sorted()
        let files = disk.filter { $0.value == "file" }.keys.sorted()
        let folder = folders.randomElement(using: &random)!
        let inFolder = { (name: String) in folder.isEmpty ? name : folder + "/" + name }
        let prefix = offline ? "offline " : ""
        switch Int.random(in: 0..<14, using: &random) {
        case 0:
            let path = inFolder(fresh())
            Disk.mkdir(dir(path))
            log.append(prefix + "mkdir \(path)")
        case 1:
            let path = inFolder(fresh())
            Disk.write(dir(path), String(repeating: "w", count: Int.random(in: 0...2000, using: &random)))
            log.append(prefix + "write \(path)")
        case 2:
            if let file = files.randomElement(using: &random) {
                let handle = FileHandle.closingOnExec(forWritingAtPath: dir(file))
                _ = try? handle?.seekToEnd()
                try? handle?.write(contentsOf: Data("appended".utf8))
                try? handle?.close()
                log.append(prefix + "append \(file)")
            }
        case 3:
            if let file = files.randomElement(using: &random) {
                let target = inFolder(fresh())
                Disk.rename(dir(file), dir(target))
                log.append(prefix + "mv \(file) \(target)")
            }
        case 4:
            if let file = files.randomElement(using: &random) {
                Disk.remove(dir(file))
                log.append(prefix + "rm \(file)")
            }
        case 5:
            if let moving = folders.dropFirst().randomElement(using: &random),
                folder != moving && !folder.hasPrefix(moving + "/")
            {
                let target = inFolder(fresh())
                Disk.rename(dir(moving), dir(target))
                log.append(prefix + "mv \(moving)/ \(target)")
            }
        case 6:
            if let gone = folders.dropFirst().randomElement(using: &random) {
                if Bool.random(using: &random) {
                    try run("/bin/rm", ["-rf", dir(gone)])
                    log.append(prefix + "rm -rf \(gone)")
                } else if rmdir(dir(gone)) == 0 {
                    log.append(prefix + "rmdir \(gone)")
                }
            }
        case 7:
            if let leaving = (Array(folders.dropFirst()) + files).randomElement(using: &random) {
                Disk.rename(dir(leaving), outside(fresh()))
                log.append(prefix + "mv out \(leaving)")
            }
        case 8:
            let arriving = fresh()
            Disk.mkdir(outside(arriving + "/sub"))
            Disk.write(outside(arriving + "/sub/a"))
            Disk.write(outside(arriving + "/b"))
            Disk.rename(outside(arriving), dir(inFolder(arriving)))
            log.append(prefix + "mv in \(inFolder(arriving))")
        case 9:
            if let file = files.randomElement(using: &random) {
                let temporary =
                    (file.contains("/") ? String(file[...file.lastIndex(of: "/")!]) : "")
                    + (Bool.random(using: &random) ? "." : "~") + fresh()
                Disk.write(dir(temporary), "saved atomically")
                recordDisk()
                Disk.rename(dir(temporary), dir(file))
                log.append(prefix + "save \(file) via \(temporary)")
            }
        case 10 where Bool.random(using: &random):
            if let file = files.randomElement(using: &random) {
                let copy = inFolder(fresh())
                let preserving = Bool.random(using: &random)
                try run("/bin/cp", preserving ? ["-a", dir(file), dir(copy)] : [dir(file), dir(copy)])
                log.append(prefix + "cp\(preserving ? " -a" : "") \(file) \(copy)")
            }
        case 10:
            let path = inFolder(fresh())
            Disk.mkdir(dir(path + "/x/y"))
            Disk.write(dir(path + "/x/y/z"))
            log.append(prefix + "mkdir -p \(path)/x/y + file")
        case 11:
            if let moving = (Array(folders.dropFirst()) + files).randomElement(using: &random),
                folder != moving && !folder.hasPrefix(moving + "/")
            {
                let target = inFolder(fresh())
                Disk.rename(dir(moving), dir(target))
                recordDisk()
                if disk[moving] == "directory" {
                    Disk.mkdir(dir(moving))
                } else {
                    Disk.write(dir(moving), "anew")
                }
                log.append(prefix + "mv \(moving) \(target), and \(moving) made anew")
            }
        case 12:
            // Swap two names, or rotate three, through a temporary name.
            let count = Int.random(in: 2...3, using: &random)
            let paths = Array((Array(folders.dropFirst()) + files).shuffled(using: &random).prefix(count))
            if paths.count == count,
                !paths.contains(where: { path in paths.contains { path.hasPrefix($0 + "/") } })
            {
                let temporary = inFolder(fresh())
                if !paths.contains(where: { temporary.hasPrefix($0 + "/") }) {
                    Disk.rename(dir(paths[0]), dir(temporary))
                    recordDisk()
                    for i in 1..<paths.count {
                        Disk.rename(dir(paths[i]), dir(paths[i - 1]))
                        recordDisk()
                    }
                    Disk.rename(dir(temporary), dir(paths[count - 1]))
                    log.append(prefix + "rotate \(paths)")
                }
            }
        default:
            // Deleted, and its number reused at once by a new file elsewhere.
            if let file = files.randomElement(using: &random) {
                Disk.remove(dir(file))
                recordDisk()
                let path = inFolder(fresh())
                Disk.write(dir(path), "reused")
                log.append(prefix + "rm \(file), write \(path)")
            }
        }
    }

    /// An inode for the whole run: its number and generation.
    struct DiskInode: Hashable, CustomStringConvertible {
        var inode: UInt64
        var generation: Int64
        var description: String { "\(inode).\(generation)" }
    }

    static func inodes(_ root: String, paths: [ItemPath]) -> [ItemPath: DiskInode] {
        var result: [ItemPath: DiskInode] = [:]
        for path in paths {
            let absolute = root + "/" + path.description
            guard let status = try? FileStatus(name: absolute, in: AT_FDCWD) else { continue }
            let generation = cfs_generation_at(AT_FDCWD, absolute)
            result[path] = DiskInode(inode: status.inode, generation: generation)
        }
        return result
    }

    func treeSnapshot(_ observer: FileObserver) -> [String: String] {
        var result: [String: String] = [:]
        func visit(_ path: ItemPath) {
            for item in observer.children(of: path) ?? [] {
                result[item.path.description] = item.kind.description
                if item.kind == .directory { visit(item.path) }
            }
        }
        visit(.root)
        return result
    }

    func differences(_ expected: [String: String], _ actual: [String: String]) -> String {
        let missing = expected.filter { actual[$0.key] != $0.value }.keys.sorted().prefix(8)
        let extra = actual.filter { expected[$0.key] != $0.value }.keys.sorted().prefix(8)
        return "missing \(Array(missing)), extra \(Array(extra))"
    }
}
