import ChangeLog
import FileWatching
import FileshareTestSupport
import Foundation
import Logging
import Testing

@testable import FileSharing

/// The leader killed at random points of random work on a real folder
/// (renames, moves across folders, folders made, moved and removed, files
/// deleted and saved anew): the log holds what was committed, the saved
/// state is older (a leader commits before it saves), and more changes
/// come while no one watches. The next leader starts from that state and
/// numbers what changed: replayed from the start, the log has each change
/// once (no step from a name the log has empty or onto one it has taken),
/// ends where the disk is, and gives each item the id the observer has.
///
/// `FILESHARE_SEED=N` replays one seed; `FILESHARE_TAKEOVER_SEEDS=N` runs more (default 20).
@Suite("a takeover at random points of the leader's work", .timeLimit(.minutes(5)))
struct TakeoverKillPointTests {
    static var seeds: [UInt64] {
        if let one = ProcessInfo.processInfo.environment["FILESHARE_SEED"].flatMap(UInt64.init) { return [one] }
        let count = ProcessInfo.processInfo.environment["FILESHARE_TAKEOVER_SEEDS"].flatMap(Int.init) ?? 20
        return Array(0..<UInt64(count))
    }

    @Test("each change is in the log once, with the ids the items have", arguments: seeds)
    func killedLeader(seed: UInt64) async throws {
        let root = try TemporaryFolder()
        let work = try TemporaryFolder()
        let state = work.path + "/state"
        let saved = work.path + "/state.saved"
        try FileManager.default.createDirectory(atPath: work.path + "/log", withIntermediateDirectories: true)
        let log = try FileChangeLog(folder: work.path + "/log", logger: Logger(label: "test"))
        defer { log.close() }
        var disk = RandomWork(root: root.path, seed: seed)
        var trace: [String] = []
        var leader = try Leader(root: root.path, state: state, log: log, firstStart: true, logged: .init())
        // The folder as the first scan finds it is where the log begins.
        await leader.observer.sync()
        for round in 0..<3 {
            // Committed, and in the state the leader saves (at its stop).
            for _ in 0..<disk.count(4...12) { trace.append(disk.step()) }
            await leader.observer.sync()
            leader.observer.stop()
            try await leader.observer.waitUntilStopped()
            try FileManager.default.copyItem(atPath: state, toPath: saved)
            // Committed after that save; then the leader dies: what it has
            // not delivered yet is lost with it.
            leader = try Leader(root: root.path, state: state, log: log, firstStart: false, logged: .init())
            for _ in 0..<disk.count(1...10) {
                trace.append(disk.step())
                if disk.count(0...2) == 0 { await leader.observer.sync() }
            }
            await leader.observer.sync()
            trace.append("killed")
            leader.kill()
            try await leader.observer.waitUntilStopped()
            try FileManager.default.removeItem(atPath: state)
            try FileManager.default.moveItem(atPath: saved, toPath: state)
            // While no one watches.
            for _ in 0..<disk.count(0...6) { trace.append(disk.step()) }
            // The next leader: the log's records (all of them: the newest,
            // and ones the state holds already) against its first scan.
            try await log.flush()
            let records = try await Self.records(log)
            var logged = ChangeFeed.Logged()
            for change in records { logged.add(change) }
            if let saved = try FileObserver.savedItems(
                logged.ids, root: root.path, stateFile: state, logger: Logger(label: "test"))
            {
                logged.expect(saved: saved)
            }
            trace.append("took over")
            leader = try Leader(root: root.path, state: state, log: log, firstStart: false, logged: logged)
            await leader.observer.sync()
            try await log.flush()

            let all = try await Self.records(log)
            var replay = LogReplay()
            for change in all { replay.apply(change) }
            let context =
                "seed \(seed), round \(round):\n\(trace.joined(separator: "\n"))\nlog:\n"
                + all.map { "  \($0)" }.joined(separator: "\n")
            #expect(replay.contradictions.isEmpty, "\(replay.contradictions.prefix(3))\n\(context)")
            let onDisk = try Self.listing(root.path)
            #expect(replay.kinds == onDisk, "\(context)")
            for (path, id) in replay.ids where onDisk[path] != nil {
                let observed = leader.observer.item(at: path)?.id
                #expect(
                    observed == id, "\(path): log \(id), observer \(observed.map { "\($0)" } ?? "none")\n\(context)")
            }
        }
        leader.observer.stop()
        try await leader.observer.waitUntilStopped()
    }

    /// One leader: an observer whose changes the feed numbers.
    struct Leader {
        let observer: FileObserver
        let token: ObservationToken

        init(root: String, state: String, log: FileChangeLog, firstStart: Bool, logged: ChangeFeed.Logged) throws {
            observer = try FileObserver(
                root: root,
                options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero, stateFile: state),
                logger: Logger(label: "test"))
            let feed = ChangeFeed(
                log: log, origins: OriginRegistry(), logger: Logger(label: "test"), printer: nil,
                numbersFirstScan: !firstStart, alreadyLogged: logged,
                lookUp: { [weak observer] id in observer?.item(id: id)?.size },
                adoptID: { [weak observer] logged, given in observer?.adoptID(logged, for: given) })
            token = observer.observe { feed.record($0) }
            try observer.start()
        }

        /// Dies: nothing more is numbered (its state is saved, and thrown away by the caller).
        func kill() {
            token.cancel()
            observer.stop()
        }
    }

    static func records(_ log: FileChangeLog) async throws -> [Change] {
        var all: [Change] = []
        var cursor: UInt64 = 0
        while case .records(let records, let next) = try await log.read(after: cursor, limit: 1000), !records.isEmpty {
            all += records.compactMap(\.change)
            cursor = next
        }
        return all
    }

    /// Every visible item under `root`, by path, with its kind.
    static func listing(_ root: String) throws -> [ItemPath: ItemKind] {
        var result: [ItemPath: ItemKind] = [:]
        func walk(_ relative: String) throws {
            let full = relative.isEmpty ? root : root + "/" + relative
            for name in try FileManager.default.contentsOfDirectory(atPath: full) where !name.hasPrefix(".") {
                let path = relative.isEmpty ? name : relative + "/" + name
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
                result[ItemPath(path)] = isDirectory.boolValue ? .directory : .file
                if isDirectory.boolValue { try walk(path) }
            }
        }
        try walk("")
        return result
    }
}

/// The folder as a log's records, replayed from the start, say it is.
struct LogReplay {
    private(set) var ids: [ItemPath: ItemID] = [:]
    private(set) var kinds: [ItemPath: ItemKind] = [:]
    private(set) var contradictions: [String] = []

    mutating func apply(_ change: Change) {
        switch change {
        case .added(let item), .duplicated(let item, _):
            if kinds[item.path] != nil { contradictions.append("\(change): its path is taken") }
            if ids.values.contains(item.id) && ids[item.path] != item.id {
                contradictions.append("\(change): its id is another item's")
            }
            ids[item.path] = item.id
            kinds[item.path] = item.kind
        case .modified(let item):
            if ids[item.path] != item.id { contradictions.append("\(change): not the item at its path") }
        case .finished(let path, let id, _):
            if ids[path] != id { contradictions.append("\(change): not the item at its path") }
        case .removed(let path, let id, _):
            if ids[path] != id { contradictions.append("\(change): not the item at its path") }
            for key in Array(kinds.keys) where key.isSame(asOrUnder: path) {
                kinds[key] = nil
                ids[key] = nil
            }
        case .renamed(let from, let to, let id, _), .moved(let from, let to, let id, _):
            if ids[from] != id { contradictions.append("\(change): not the item at its old path") }
            if kinds[to] != nil { contradictions.append("\(change): its new path is taken") }
            for key in Array(kinds.keys) where key.isSame(asOrUnder: from) {
                let moved = ItemPath(bytes: to.bytes + key.bytes.dropFirst(from.bytes.count))
                let (kind, itemID) = (kinds.removeValue(forKey: key), ids.removeValue(forKey: key))
                kinds[moved] = kind
                ids[moved] = itemID
            }
        default:
            break
        }
    }
}

/// Random everyday work on a real folder, drawn from a seed.
struct RandomWork {
    let root: String
    var random: SeededRandom
    var names = 0

    init(root: String, seed: UInt64) {
        self.root = root
        random = SeededRandom(seed: seed &* 7919 &+ 3)
    }

    mutating func count(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    private mutating func fresh() -> String {
        names += 1
        return "n\(names)"
    }

    private func items() -> (folders: [String], files: [String]) {
        let listing = (try? TakeoverKillPointTests.listing(root)) ?? [:]
        let folders = [""] + listing.filter { $0.value == .directory }.keys.map(\.description).sorted()
        let files = listing.filter { $0.value == .file }.keys.map(\.description).sorted()
        return (folders, files)
    }

    private func full(_ relative: String) -> String { relative.isEmpty ? root : root + "/" + relative }
    private func inside(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }

    /// One operation; says what it did.
    mutating func step() -> String {
        let (folders, files) = items()
        let folder = folders.randomElement(using: &random)!
        let manager = FileManager.default
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            let path = inside(folder, fresh())
            try? manager.createDirectory(atPath: full(path), withIntermediateDirectories: false)
            return "mkdir \(path)"
        case 1, 2:
            let path = inside(folder, fresh())
            manager.createFile(atPath: full(path), contents: Data(repeating: 7, count: count(0...50)))
            return "write \(path)"
        case 3:
            guard let file = files.randomElement(using: &random) else { return "nothing" }
            let target = inside((file as NSString).deletingLastPathComponent, fresh())
            rename(full(file), full(target))
            return "rename \(file) \(target)"
        case 4:
            guard let file = files.randomElement(using: &random) else { return "nothing" }
            let target = inside(folder, fresh())
            rename(full(file), full(target))
            return "move \(file) \(target)"
        case 5:
            guard let moving = folders.dropFirst().randomElement(using: &random),
                !(folder == moving || folder.hasPrefix(moving + "/"))
            else { return "nothing" }
            let target = inside(folder, fresh())
            rename(full(moving), full(target))
            return "move folder \(moving) \(target)"
        case 6:
            guard let gone = folders.dropFirst().randomElement(using: &random) else { return "nothing" }
            try? manager.removeItem(atPath: full(gone))
            return "remove folder \(gone)"
        case 7:
            guard let file = files.randomElement(using: &random) else { return "nothing" }
            unlink(full(file))
            return "delete \(file)"
        case 8:
            // An atomic save through a hidden temporary name.
            guard let file = files.randomElement(using: &random) else { return "nothing" }
            let parent = (file as NSString).deletingLastPathComponent
            let temporary = inside(parent, ".tmp" + fresh())
            manager.createFile(atPath: full(temporary), contents: Data(repeating: 9, count: count(1...60)))
            rename(full(temporary), full(file))
            return "save \(file)"
        default:
            // Renamed twice: the log may have the first step and not the second.
            guard let file = files.randomElement(using: &random) else { return "nothing" }
            let middle = inside(folder, fresh())
            let last = inside((file as NSString).deletingLastPathComponent, fresh())
            rename(full(file), full(middle))
            rename(full(middle), full(last))
            return "rename \(file) \(middle) \(last)"
        }
    }
}
