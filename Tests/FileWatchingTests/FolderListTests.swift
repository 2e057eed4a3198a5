import FileshareTestSupport
import Foundation
import Testing

@testable import FileWatching

@Suite("Live folder lists")
struct FolderListTests {
    struct Row: Identifiable, Equatable {
        var id: Int
        var value: Int
    }

    @Test("index changes replayed onto the old list give the new list", arguments: 0..<300)
    func replayChanges(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let old = (0..<Int.random(in: 0...40, using: &random)).map { Row(id: $0, value: 0) }
        var new = old.filter { _ in Int.random(in: 0..<4, using: &random) > 0 }
        new.shuffle(using: &random)
        if !new.isEmpty {
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                new[Int.random(in: 0..<new.count, using: &random)].value += 1
            }
        }
        for id in 100..<(100 + Int.random(in: 0...8, using: &random)) {
            new.insert(Row(id: id, value: 0), at: Int.random(in: 0...new.count, using: &random))
        }
        let changes = ListChanges.between(old, new)
        #expect(changes.apply(to: old, newItems: new) == new, "seed \(seed): \(changes)")
        // Updates are only for items that stayed in place; moves are as few as possible.
        #expect(changes.moves.count <= max(0, new.count - changes.insertions.count))
    }

    @Test("natural, case- and accent-insensitive name order")
    func naturalOrder() {
        let names = [
            "issue 10.cbz", "Issue 2.cbz", "Été.txt", "ete 3.txt", "Apple", "apple 1", "Zebra", "10 things", "2 things",
            "File007", "File7", "file8",
        ]
        let sorted = names.sorted { NaturalKey(Array($0.utf8)) < NaturalKey(Array($1.utf8)) }
        #expect(
            sorted == [
                "2 things", "10 things", "Apple", "apple 1", "ete 3.txt", "Été.txt", "File7", "File007", "file8",
                "Issue 2.cbz", "issue 10.cbz", "Zebra",
            ])
    }

    @Test(
        "a live list follows random changes: every update replays onto the previous list to a fresh sort",
        arguments: [
            ListSort(.name), ListSort(.name, ascending: false), ListSort(.size),
            ListSort(.modificationDate, ascending: false), ListSort(.creationDate),
        ])
    func liveList(sort: ListSort) async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            Disk.mkdir(dir("Comics"))
            for i in [1, 2, 10] { Disk.write(dir("Comics/Issue \(i).cbz"), String(repeating: "x", count: i)) }
            let probe = try ObserverProbe(
                dir.path, options: ObserverOptions(settleTime: .milliseconds(50), latency: .zero))
            #expect(await probe.scanned())
            var cache: [ItemID: (name: String, key: NaturalKey)] = [:]
            let list = probe.observer.list(of: "Comics", sortedBy: sort)
            let updates = list.updates()
            var previous = list.items
            #expect(previous.map(\.name) == FolderList.sorted(previous, by: sort, keys: &cache).map(\.name))
            var random = SeededRandom(seed: 42)
            var count = 0
            for step in 0..<60 {
                let children = probe.observer.children(of: "Comics") ?? []
                let names = children.map(\.name)
                let files = children.filter { $0.kind == .file }.map(\.name)
                switch Int.random(in: 0..<6, using: &random) {
                case 0, 1:
                    Disk.write(
                        dir("Comics/Issue \(step + 20).cbz"),
                        String(repeating: "y", count: Int.random(in: 0...50, using: &random)))
                case 2:
                    if let name = names.randomElement(using: &random) {
                        Disk.rename(
                            dir("Comics/\(name)"),
                            dir("Comics/\(["a", "Z", "é", "10"].randomElement(using: &random)!) \(step)"))
                    }
                case 3:
                    if let name = names.randomElement(using: &random), !name.isEmpty {
                        try? FileManager.default.removeItem(atPath: dir("Comics/\(name)"))
                    }
                case 4:
                    if let name = files.randomElement(using: &random) {
                        Disk.write(
                            dir("Comics/\(name)"), String(repeating: "z", count: Int.random(in: 0...80, using: &random))
                        )
                    }
                default: Disk.mkdir(dir("Comics/Folder \(step)")); Disk.write(dir("Comics/Folder \(step)/inside"))
                }
                await probe.observer.sync()
            }
            await probe.observer.sync()
            // Drain the updates delivered so far; each one applies onto the one before.
            let final = list.items
            var iterator = updates.makeAsyncIterator()
            while previous != final, let update = await iterator.next() {
                let replayed = update.changes.apply(to: previous, newItems: update.items)
                #expect(replayed == update.items)
                #expect(update.items == FolderList.sorted(update.items.shuffled(), by: sort, keys: &cache))
                previous = update.items
                count += 1
            }
            #expect(count > 10)
            // The list agrees with the observer's tree, freshly sorted.
            let fresh = FolderList.sorted(
                (probe.observer.children(of: "Comics") ?? []).map(ListItem.init), by: sort, keys: &cache)
            #expect(final.map(\.id) == fresh.map(\.id))
        }
    }

    @Test("a list follows its folder when it is renamed and empties when it is removed; child counts stay current")
    func followsFolder() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            Disk.mkdir(dir("Library/Box"))
            Disk.write(dir("Library/Box/a"))
            let probe = try ObserverProbe(dir.path, options: ObserverOptions(latency: .zero))
            #expect(await probe.scanned())
            let root = probe.observer.list(of: .root)
            let box = probe.observer.list(of: "Library")
            #expect(box.items.map(\.childCount) == [1])
            Disk.write(dir("Library/Box/b"))
            await probe.observer.sync()
            #expect(box.items.map(\.childCount) == [2])
            Disk.rename(dir("Library"), dir("Shelf"))
            await probe.observer.sync()
            #expect(box.folder == "Shelf")
            #expect(box.items.map(\.name) == ["Box"])
            #expect(root.items.map(\.name) == ["Shelf"])
            try run("/bin/rm", ["-rf", dir("Shelf")])
            await probe.observer.sync()
            #expect(box.items.isEmpty)
            #expect(root.items.isEmpty)
        }
    }

    @Test("many lists at once, one per folder; released lists leave nothing behind")
    func manyLists() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            for i in 0..<200 { Disk.mkdir(dir("f\(i)")); Disk.write(dir("f\(i)/x")) }
            let probe = try ObserverProbe(dir.path, options: ObserverOptions(latency: .zero))
            #expect(await probe.scanned())
            let before = probe.observer.subscriberCount
            var lists = (0..<200).map { probe.observer.list(of: ItemPath("f\($0)")) }
            #expect(probe.observer.subscriberCount == before + 200)
            #expect(lists.allSatisfy { $0.items.map(\.name) == ["x"] })
            Disk.write(dir("f7/y"))
            await probe.observer.sync()
            #expect(lists[7].items.map(\.name) == ["x", "y"])
            #expect(lists[8].items.map(\.name) == ["x"])
            lists.removeAll()
            #expect(probe.observer.subscriberCount == before)
        }
    }
}
