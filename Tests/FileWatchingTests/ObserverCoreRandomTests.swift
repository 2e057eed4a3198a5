import FileshareTestSupport
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// Random sequences of file operations against the observer's logic, on an
/// in-memory file system that plays the kernel's side: its event queue with
/// the orderings a real one has (a read that ends between a rename's two
/// halves, events for a folder not watched yet, an overflow), inode numbers
/// reused at once, a program stopped between two of its system calls, the
/// observer restarted from its saved state. After every sequence the replay
/// of the changes equals the disk, the tree equals a fresh scan, and no
/// change contradicts the ones before it; and whenever the observer has
/// caught up, the ids the changes gave follow the disk's identities
/// (inodes), also where names changed hands.
///
/// Everything comes from the seed, so a failure replays from it
/// (`FILESHARE_SEED`); a failing sequence is shortened to the fewest steps
/// that still fail, and those steps are printed with what the observer said.
@Suite("Observer logic, random sequences")
struct ObserverCoreRandomTests {
    @Test("replay equals the disk", arguments: Environment.seedList)
    func randomSequence(seed: UInt64) {
        let sequence = RandomSequence(seed: seed)
        let outcome = sequence.run(sequence.steps)
        guard !outcome.failures.isEmpty else { return }
        let shortest = sequence.shortest(failing: sequence.steps)
        let replayed = sequence.run(shortest)
        Issue.record(
            """
            seed \(seed): \(outcome.failures.joined(separator: "; "))
            the shortest sequence that still fails, \(shortest.count) of \(sequence.steps.count) steps \
            (\(sequence.settings)):
            \(replayed.trace.joined(separator: "\n"))
            it ends: \(replayed.failures.joined(separator: "; "))
            """)
    }

    @Test("a failing sequence is shortened to the steps that make it fail")
    func shortening() {
        // A stand-in for a fault: the sequence "fails" whenever it makes a
        // folder and later removes a file. Nothing else matters.
        let sequence = RandomSequence(seed: 11)
        var plan: [RandomSequence.Step] = (0..<40).map { .operate(seed: UInt64($0) &* 7919) }
        plan.insert(.catchUp, at: 5)
        let marked: Set<Int> = [3, 17]
        func fails(_ steps: [RandomSequence.Step]) -> Bool {
            let seeds = steps.compactMap { step -> Int? in
                if case .operate(let seed) = step { Int(seed / 7919) } else { nil }
            }
            guard let first = seeds.firstIndex(of: 3) else { return false }
            return seeds[first...].contains(17)
        }
        #expect(fails(plan))
        let shortest = sequence.shortest(failing: plan, fails: fails)
        #expect(shortest.count == marked.count)
        #expect(fails(shortest))
    }
}

/// One random sequence: its settings and its steps, drawn from the seed
/// before it runs. Each step draws its own choices from a seed of its own,
/// against the disk as it is when the step runs, so dropping steps leaves
/// the others meaning what they meant.
struct RandomSequence {
    enum Step: CustomStringConvertible {
        /// A program's file operation (a few system calls), chosen by `seed`.
        /// Between two of its calls the observer may read the queue, and
        /// the program may be stopped there for good.
        case operate(seed: UInt64)
        /// Time passes; the kernel may first drop everything queued.
        case idle(milliseconds: Int64, overflow: Bool)
        /// The observer reads the queue: everything, or at most `limit` events.
        case read(limit: Int?)
        /// The observer catches up (as at a `sync()`): its ids must follow the disk's identities.
        case catchUp
        /// The observer stops with its state saved, programs change the disk
        /// (one operation per seed), and a new observer starts from the state.
        case restart(offline: [UInt64])

        var description: String {
            switch self {
            case .operate(let seed): "operate \(seed)"
            case .idle(let milliseconds, let overflow): "idle \(milliseconds) ms\(overflow ? " after an overflow" : "")"
            case .read(let limit): limit.map { "read \($0) events" } ?? "read"
            case .catchUp: "catch up"
            case .restart(let offline): "restart, \(offline.count) operations offline"
            }
        }
    }

    struct Settings: CustomStringConvertible {
        var latency: Duration
        /// 0: none; 1: the identity attribute; 2: duplicate content detected.
        var duplicates: Int
        var pollingInterval: Duration?
        var reusesInodes: Bool
        /// Whether reads go through the rename pairing and may end anywhere in the queue.
        var pairsRenames: Bool

        var description: String {
            var parts = ["latency \(latency)"]
            if duplicates == 1 { parts.append("identity attribute") }
            if duplicates == 2 { parts.append("duplicates detected") }
            if let pollingInterval { parts.append("polling every \(pollingInterval)") }
            if reusesInodes { parts.append("inode numbers reused") }
            if pairsRenames { parts.append("reads split and paired") }
            return parts.joined(separator: ", ")
        }
    }

    struct Outcome {
        var failures: [String] = []
        var trace: [String] = []
    }

    let seed: UInt64
    let settings: Settings
    let steps: [Step]

    init(seed: UInt64) {
        self.seed = seed
        var random = SeededRandom(seed: seed &* 0x1000_0001 &+ 7)
        settings = Settings(
            latency: [.zero, .milliseconds(50)].randomElement(using: &random)!,
            // Some sequences detect copies (new files are then reported once complete).
            duplicates: Int.random(in: 0..<3, using: &random),
            // Some sequences poll the whole tree (`--poll`): found by rescans alone.
            pollingInterval: Int.random(in: 0..<4, using: &random) == 0
                ? .milliseconds(Int64.random(in: 50...400, using: &random)) : nil,
            // Most sequences reuse a freed inode number at once, with its birth time (ext4 within a tick).
            reusesInodes: Int.random(in: 0..<4, using: &random) != 0,
            pairsRenames: Int.random(in: 0..<4, using: &random) != 0)
        var steps: [Step] = []
        for _ in 0..<Int.random(in: 5...60, using: &random) {
            switch Int.random(in: 0..<120, using: &random) {
            case 0..<8:
                steps.append(.restart(offline: (0..<Int.random(in: 0...6, using: &random)).map { _ in random.next() }))
            case 8..<23:
                steps.append(.catchUp)
            case 23..<37:
                steps.append(
                    .idle(
                        milliseconds: Int64.random(in: 0...300, using: &random),
                        overflow: Int.random(in: 0..<4, using: &random) == 0))
            default:
                steps.append(.operate(seed: random.next()))
            }
            if Bool.random(using: &random) {
                let splits = settings.pairsRenames && Int.random(in: 0..<3, using: &random) == 0
                steps.append(.read(limit: splits ? Int.random(in: 1...4, using: &random) : nil))
            }
        }
        self.steps = steps
    }

    /// The fewest of `steps` that still fail (each step left out in turn,
    /// in halves first, while the rest still fails).
    func shortest(failing steps: [Step], fails: (([Step]) -> Bool)? = nil) -> [Step] {
        let fails = fails ?? { !run($0).failures.isEmpty }
        var steps = steps
        var chunk = max(1, steps.count / 2)
        while true {
            var start = 0
            var removed = false
            while start < steps.count {
                var candidate = steps
                candidate.removeSubrange(start..<min(start + chunk, steps.count))
                if fails(candidate) {
                    steps = candidate
                    removed = true
                } else {
                    start += chunk
                }
            }
            if chunk == 1 && !removed { break }
            if !removed { chunk = max(1, chunk / 2) }
        }
        // Fewer operations while the observer was stopped.
        for position in steps.indices {
            guard case .restart(var offline) = steps[position] else { continue }
            var index = 0
            while index < offline.count {
                var candidate = steps
                var fewer = offline
                fewer.remove(at: index)
                candidate[position] = .restart(offline: fewer)
                if fails(candidate) {
                    offline = fewer
                    steps = candidate
                } else {
                    index += 1
                }
            }
        }
        return steps
    }

    /// Runs `steps` from a fresh disk and checks the observer against it.
    func run(_ steps: [Step]) -> Outcome {
        var outcome = Outcome()
        let settings = settings
        let reusesInodes = settings.reusesInodes
        var h = CoreHarness(
            options: ObserverOptions(
                settleTime: .milliseconds(200), latency: settings.latency,
                pollingInterval: settings.pollingInterval,
                storesIdentityAttribute: settings.duplicates == 1,
                detectsDuplicateContent: settings.duplicates == 2)
        ) { fs in
            fs.reusesInodes = reusesInodes
            fs.mkdir("start")
            fs.write("start/file", bytes: 3)
        }
        if settings.pairsRenames { h.pairing = MovePairing() }
        h.start()
        // The first run's view starts at its scan-completed; later runs
        // (restarts from the saved state) continue the same replay.
        var replay = Replay(initial: ["start": .directory, "start/file": .file], ids: h.treeIDs)
        var applied = h.delivered.count
        var ledger = IdentityLedger<FakeFileSystem.Identity>()
        let fs = h.fs
        /// Replays what was delivered since the last call and compares the ids with the disk.
        func checkIdentities(_ h: CoreHarness) {
            replay.apply(Array(h.delivered[applied...]))
            applied = h.delivered.count
            // A file that ever had a second name (a hard link) is left out even
            // once it has one name again: the link is a new item with its own
            // id (as live), and after the first name is saved anew or removed,
            // the file lives on under the link's id, rightly.
            // A file renamed to a hidden name left, as if moved out; back at
            // a visible name it may be new (rule 5), its id given meanwhile
            // to a file saved at its old name (rule 3).
            let hidden = fs.takeHidden()
            ledger.forget { hidden.contains($0.inode) }
            ledger.check(replay) { path in fs.identity(path).flatMap { fs.linked.contains($0.inode) ? nil : $0 } }
        }
        func traceChanges() { outcome.trace += h.newChanges().map(\.traced) }
        func traceJournal() {
            outcome.trace += fs.journal.map { "    \($0)" }
            fs.journal.removeAll()
        }
        checkIdentities(h)
        fs.journal.removeAll()
        var names = 0
        func fresh() -> [UInt8] {
            names += 1
            return Array("n\(names)".utf8)
        }
        /// One program's operation, chosen by `seed`: its system calls, in order.
        func calls(_ seed: UInt64) -> (String, [() -> Void]) {
            var random = SeededRandom(seed: seed)
            let disk = fs.snapshot()
            let folders = [ItemPath.root] + disk.filter { $0.value == .directory }.keys.sorted()
            let files = disk.filter { $0.value == .file }.keys.sorted()
            let folder = folders.randomElement(using: &random)!
            let op = Int.random(in: 0..<15, using: &random)
            var calls: [() -> Void] = []
            switch op {
            case 0: calls = [{ fs.mkdir(folder.appending(fresh())) }]
            case 1:
                let bytes = Int64.random(in: 0...100, using: &random)
                calls = [{ fs.write(folder.appending(fresh()), bytes: bytes) }]
            case 2:
                if let file = files.randomElement(using: &random) {
                    calls = [{ fs.open(file) }, { fs.append(file, bytes: 5) }, { fs.close(file) }]
                }
            case 3:
                if let file = files.randomElement(using: &random) {
                    calls = [{ fs.rename(file, folder.appending(fresh())) }]
                }
            case 4:
                if let file = files.randomElement(using: &random) { calls = [{ fs.remove(file) }] }
            case 5:
                // Move a folder somewhere not under itself.
                if let moving = folders.dropFirst().randomElement(using: &random), !folder.isSame(asOrUnder: moving) {
                    calls = [{ fs.rename(moving, folder.appending(fresh())) }]
                }
            case 6:
                if let gone = folders.dropFirst().randomElement(using: &random) { calls = [{ fs.removeTree(gone) }] }
            case 7:
                if let gone = (folders.dropFirst() + files).randomElement(using: &random) {
                    calls = [{ fs.moveOut(gone) }]
                }
            case 8: calls = [{ fs.moveIn(directory: folder.appending(fresh()), files: ["a", "b"]) }]
            case 9:
                // An atomic save, through a hidden or a visible temporary name.
                if let file = files.randomElement(using: &random) {
                    let temporary = file.parent.appending(
                        Array((Bool.random(using: &random) ? ".tmp" : "tmp").utf8) + fresh())
                    calls = [{ fs.write(temporary, bytes: 9) }, { fs.rename(temporary, file) }]
                }
            case 10:
                if let file = files.randomElement(using: &random) {
                    calls = [{ fs.link(file, folder.appending(fresh())) }]
                }
            case 11:
                if let file = files.randomElement(using: &random) {
                    let preserving = Bool.random(using: &random)
                    calls = [{ fs.copy(file, folder.appending(fresh()), preservingAttributes: preserving) }]
                }
            case 12:
                // Move an item away, then make a new one at its name.
                if let moving = (folders.dropFirst() + files).randomElement(using: &random),
                    !folder.isSame(asOrUnder: moving)
                {
                    let destination = folder.appending(fresh())
                    calls = [
                        { fs.rename(moving, destination) },
                        { if disk[moving] == .directory { fs.mkdir(moving) } else { fs.write(moving, bytes: 7) } },
                    ]
                }
            case 13:
                // Swap two names, or rotate three, through a temporary name.
                let count = Int.random(in: 2...3, using: &random)
                let items = (folders.dropFirst() + files).shuffled(using: &random).prefix(count)
                if items.count == count,
                    !items.contains(where: { item in items.contains { $0 != item && item.isSame(asOrUnder: $0) } })
                {
                    let paths = Array(items)
                    let temporary = paths[0].parent.appending(fresh())
                    calls.append { fs.rename(paths[0], temporary) }
                    for i in 1..<paths.count { calls.append { fs.rename(paths[i], paths[i - 1]) } }
                    calls.append { fs.rename(temporary, paths[paths.count - 1]) }
                }
            default:
                // A file being created and written, still open.
                calls = [{ fs.create(folder.appending(fresh())) }]
            }
            return ("op \(op) in \(folder)", calls)
        }
        /// Runs one operation; with the observer running, it may read
        /// between two calls, and the program may stop there for good.
        func operate(_ seed: UInt64, offline: Bool) {
            let (label, calls) = calls(seed)
            outcome.trace.append("\(offline ? "  offline " : "")\(label)")
            var random = SeededRandom(seed: ~seed)
            for (position, call) in calls.enumerated() {
                if position > 0 && !offline {
                    if Int.random(in: 0..<12, using: &random) == 0 {
                        outcome.trace.append("  stopped")
                        break
                    }
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        let limit = settings.pairsRenames ? Int.random(in: 1...4, using: &random) : nil
                        traceJournal()
                        read(limit: limit)
                    }
                }
                call()
            }
            traceJournal()
        }
        /// The queued events, for traces.
        func queued() -> [String] {
            h.fs.queue.map { "\($0.kind) \(String(decoding: $0.name ?? [], as: UTF8.self)) @\($0.watch)" }
        }
        func read(limit: Int?) {
            outcome.trace.append("  read \(limit.map { "at most \($0) of " } ?? "")\(queued())")
            h.process(atMost: limit)
            traceChanges()
        }
        for step in steps {
            switch step {
            case .restart(let offline):
                outcome.trace.append("restart")
                h.restart { _ in for seed in offline { operate(seed, offline: true) } }
                traceChanges()
                checkIdentities(h)
            case .catchUp:
                outcome.trace.append("catch up: \(queued())")
                h.catchUp()
                traceChanges()
                checkIdentities(h)
            case .idle(let milliseconds, let overflow):
                outcome.trace.append("idle \(milliseconds) ms\(overflow ? " after an overflow" : "")")
                if overflow { h.fs.overflow() }
                h.advance(by: .milliseconds(milliseconds))
                traceChanges()
            case .read(let limit):
                read(limit: limit)
            case .operate(let seed):
                operate(seed, offline: false)
            }
        }
        // The writers finish; the observer catches up.
        h.fs.closeAllWriters()
        outcome.trace.append("writers close, catch up: \(queued())")
        h.catchUp()
        h.advance(by: .seconds(1))
        h.catchUp()
        traceChanges()

        checkIdentities(h)
        let disk = h.fs.snapshot(includeHidden: false)
        if !replay.violations.isEmpty { outcome.failures.append("\(replay.violations.prefix(3))") }
        if !ledger.violations.isEmpty { outcome.failures.append("\(ledger.violations.prefix(3))") }
        if replay.ids != h.treeIDs { outcome.failures.append("the stream's ids are not the tree's") }
        if replay.items != disk {
            outcome.failures.append("replay differs from disk: \(difference(disk, replay.items))")
        }
        if h.treeSnapshot != disk {
            outcome.failures.append("tree differs from disk: \(difference(disk, h.treeSnapshot))")
        }
        // Ids are unique among live items.
        if h.core.tree.idCount != h.core.tree.count + 1 { outcome.failures.append("an id is held twice") }
        return outcome
    }
}

extension Change {
    /// The summary with the id, for traces.
    fileprivate var traced: String { "  -> \(summary)" + (id.map { " [\($0)]" } ?? "") }
}

enum Environment {
    /// How many random sequences to run (`FILESHARE_SEEDS`, default 300).
    static let seeds = getenv("FILESHARE_SEEDS").flatMap { Int(String(cString: $0)) } ?? 300
    /// The first seed to run (`FILESHARE_SEED_START`, default 0), so a long
    /// run by hand can be split across processes.
    static let firstSeed = getenv("FILESHARE_SEED_START").flatMap { UInt64(String(cString: $0)) } ?? 0
    /// The seeds to run: only `FILESHARE_SEED` when set (to trace one), or
    /// else `seeds` of them from `firstSeed`.
    static var seedList: [UInt64] {
        if let one = getenv("FILESHARE_SEED").flatMap({ UInt64(String(cString: $0)) }) { return [one] }
        return Array(firstSeed..<firstSeed + UInt64(seeds))
    }
}
