import FileshareTestSupport
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// Random sequences of file operations against the observer's logic (an
/// in-memory file system, so thousands of sequences run in a second): after
/// every sequence the replay of the changes equals the disk, the tree equals
/// a fresh scan, and no change contradicts the ones before it; and whenever
/// the observer has caught up, the ids the changes gave follow the disk's
/// identities (inodes), also where names changed hands.
@Suite("Observer logic, random sequences")
struct ObserverCoreRandomTests {
    @Test("replay equals the disk", arguments: Environment.seedList)
    func randomSequence(seed: UInt64) {
        var random = SeededRandom(seed: seed &* 0x1000_0001 &+ 7)
        let latency: Duration = [.zero, .milliseconds(50)].randomElement(using: &random)!
        // Some sequences detect copies (new files are then reported once complete).
        let duplicates = Int.random(in: 0..<3, using: &random)
        // Some sequences poll the whole tree (`--poll`): found by rescans alone.
        let polling = Int.random(in: 0..<4, using: &random) == 0
        // Most sequences reuse a freed inode number at once, with its birth time (ext4 within a tick).
        let reusesInodes = Int.random(in: 0..<4, using: &random) != 0
        var h = CoreHarness(
            options: ObserverOptions(
                settleTime: .milliseconds(200), latency: latency,
                pollingInterval: polling ? .milliseconds(Int64.random(in: 50...400, using: &random)) : nil,
                storesIdentityAttribute: duplicates == 1,
                detectsDuplicateContent: duplicates == 2)
        ) { fs in
            fs.reusesInodes = reusesInodes
            fs.mkdir("start")
            fs.write("start/file", bytes: 3)
        }
        h.start()
        // The first run's view starts at its scan-completed; later runs
        // (restarts from the saved state) continue the same replay.
        var replay = Replay(initial: ["start": .directory, "start/file": .file], ids: h.treeIDs)
        var applied = h.delivered.count
        var ledger = IdentityLedger<FakeFileSystem.Identity>()
        /// Replays what was delivered since the last call and compares the ids with the disk.
        func checkIdentities(_ h: CoreHarness) {
            replay.apply(Array(h.delivered[applied...]))
            applied = h.delivered.count
            let fs = h.fs
            // A file that ever had a second name (a hard link) is left out even
            // once it has one name again: the link is a new item with its own
            // id (as live), and after the first name is saved anew or removed,
            // the file lives on under the link's id, rightly.
            ledger.check(replay) { path in fs.identity(path).flatMap { fs.linked.contains($0.inode) ? nil : $0 } }
        }
        checkIdentities(h)
        h.fs.journal.removeAll()
        var names = 0
        var trace: [String] = []
        func fresh() -> [UInt8] {
            names += 1
            return Array("n\(names)".utf8)
        }
        let fs = h.fs
        /// One random operation on the disk; `false` when the dice asked for time to pass instead.
        func operate(_ random: inout SeededRandom, offline: Bool) -> Bool {
            let disk = fs.snapshot()
            let folders = [ItemPath.root] + disk.filter { $0.value == .directory }.keys.sorted()
            let files = disk.filter { $0.value == .file }.keys.sorted()
            let folder = folders.randomElement(using: &random)!
            let op = Int.random(in: 0..<17, using: &random)
            trace.append("\(offline ? "offline " : "")op \(op) in \(folder)")
            switch op {
            case 0: fs.mkdir(folder.appending(fresh()))
            case 1: fs.write(folder.appending(fresh()), bytes: Int64.random(in: 0...100, using: &random))
            case 2:
                if let file = files.randomElement(using: &random) {
                    fs.open(file)
                    fs.append(file, bytes: 5)
                    fs.close(file)
                }
            case 3:
                if let file = files.randomElement(using: &random) { fs.rename(file, folder.appending(fresh())) }
            case 4:
                if let file = files.randomElement(using: &random) { fs.remove(file) }
            case 5:
                // Move a folder somewhere not under itself.
                if let moving = folders.dropFirst().randomElement(using: &random), !folder.isSame(asOrUnder: moving) {
                    fs.rename(moving, folder.appending(fresh()))
                }
            case 6:
                if let gone = folders.dropFirst().randomElement(using: &random) { fs.removeTree(gone) }
            case 7:
                if let gone = (folders.dropFirst() + files).randomElement(using: &random) { fs.moveOut(gone) }
            case 8: fs.moveIn(directory: folder.appending(fresh()), files: ["a", "b"])
            case 9:
                // An atomic save, through a hidden or a visible temporary name.
                if let file = files.randomElement(using: &random) {
                    let temporary = file.parent.appending(
                        Array((Bool.random(using: &random) ? ".tmp" : "tmp").utf8) + fresh())
                    fs.write(temporary, bytes: 9)
                    fs.rename(temporary, file)
                }
            case 10:
                if let file = files.randomElement(using: &random) { fs.link(file, folder.appending(fresh())) }
            case 11, 16:
                return false
            case 13:
                if let file = files.randomElement(using: &random) {
                    fs.copy(file, folder.appending(fresh()), preservingAttributes: Bool.random(using: &random))
                }
            case 14:
                // Move an item away, then make a new one at its name.
                if let moving = (folders.dropFirst() + files).randomElement(using: &random),
                    !folder.isSame(asOrUnder: moving)
                {
                    fs.rename(moving, folder.appending(fresh()))
                    if disk[moving] == .directory { fs.mkdir(moving) } else { fs.write(moving, bytes: 7) }
                }
            case 15:
                // Swap two names, or rotate three, through a temporary name.
                let count = Int.random(in: 2...3, using: &random)
                let items = (folders.dropFirst() + files).shuffled(using: &random).prefix(count)
                if items.count == count,
                    !items.contains(where: { item in items.contains { $0 != item && item.isSame(asOrUnder: $0) } })
                {
                    let paths = Array(items)
                    let temporary = paths[0].parent.appending(fresh())
                    fs.rename(paths[0], temporary)
                    for i in 1..<paths.count { fs.rename(paths[i], paths[i - 1]) }
                    fs.rename(temporary, paths[paths.count - 1])
                }
            default:
                // A file being created and written, still open.
                fs.create(folder.appending(fresh()))
            }
            trace += fs.journal.map { "  \($0)" }
            fs.journal.removeAll()
            return true
        }
        for _ in 0..<Int.random(in: 5...60, using: &random) {
            if Int.random(in: 0..<15, using: &random) == 0 {
                // Stop with the state saved, change the disk, start from the state.
                trace.append("restart")
                let offline = Int.random(in: 0...6, using: &random)
                h.restart { _ in for _ in 0..<offline { _ = operate(&random, offline: true) } }
                trace.append(contentsOf: h.newChanges().map(\.traced))
                checkIdentities(h)
                continue
            }
            if Int.random(in: 0..<8, using: &random) == 0 {
                // The observer catches up (as at a sync()): its ids must follow the disk's identities.
                trace.append("catch up")
                h.catchUp()
                trace.append(contentsOf: h.newChanges().map(\.traced))
                checkIdentities(h)
                continue
            }
            if !operate(&random, offline: false) {
                // Let time pass, or the kernel drop everything queued.
                if Int.random(in: 0..<4, using: &random) == 0 { h.fs.overflow() }
                h.advance(by: .milliseconds(Int64.random(in: 0...300, using: &random)))
            }
            if Bool.random(using: &random) {
                trace.append(
                    "process \(h.fs.queue.map { "\($0.kind) \(String(decoding: $0.name ?? [], as: UTF8.self))" })")
                h.process()
                trace.append(contentsOf: h.newChanges().map(\.traced))
            }
        }
        // The writers finish; the observer catches up.
        h.fs.closeAllWriters()
        h.catchUp()
        h.advance(by: .seconds(1))
        h.catchUp()

        checkIdentities(h)
        let disk = h.fs.snapshot(includeHidden: false)
        let failed =
            !replay.violations.isEmpty || !ledger.violations.isEmpty || replay.ids != h.treeIDs
            || replay.items != disk || h.treeSnapshot != disk
        if failed, Environment.trace {
            print(
                "seed \(seed):\n" + trace.joined(separator: "\n") + "\n"
                    + h.newChanges().map(\.traced).joined(separator: "\n"))
        }
        #expect(replay.violations.isEmpty, "seed \(seed): \(replay.violations.prefix(3))")
        #expect(ledger.violations.isEmpty, "seed \(seed): \(ledger.violations.prefix(3))")
        #expect(replay.ids == h.treeIDs, "seed \(seed): the stream's ids are not the tree's")
        #expect(replay.items == disk, "seed \(seed): replay differs from disk: \(difference(disk, replay.items))")
        #expect(h.treeSnapshot == disk, "seed \(seed): tree differs from disk: \(difference(disk, h.treeSnapshot))")
        // Ids are unique among live items.
        #expect(h.core.tree.idCount == h.core.tree.count + 1, "seed \(seed)")
    }
}

extension Change {
    /// The summary with the id, for traces.
    fileprivate var traced: String { "  -> \(summary)" + (id.map { " [\($0)]" } ?? "") }
}

enum Environment {
    static let trace = getenv("FILESHARE_TRACE") != nil
    /// How many random sequences to run (`FILESHARE_SEEDS`, default 300).
    static let seeds = getenv("FILESHARE_SEEDS").flatMap { Int(String(cString: $0)) } ?? 300
    /// The seeds to run: only `FILESHARE_SEED` when set (to trace one), or else the first `seeds`.
    static var seedList: [UInt64] {
        if let one = getenv("FILESHARE_SEED").flatMap({ UInt64(String(cString: $0)) }) { return [one] }
        return Array(0..<UInt64(seeds))
    }
}
