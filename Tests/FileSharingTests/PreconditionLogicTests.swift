import FileWatching
import Synchronization
import Testing

@testable import FileSharing

/// The conditions on a change and the per-path turns, without a file system.
@Suite("Preconditions, logic")
struct PreconditionLogicTests {
    /// A file as the disk would describe it: its tag is `"2a-5-3b9aca00"`.
    static let file = FileStatus(
        kind: .file, device: 1, inode: 42, size: 5, modified: 1_000_000_000, changed: 1_000_000_000, born: nil,
        permissions: 0o644, linkCount: 1, owner: 0)
    static let tag = file.entityTag
    static let path = try! SharePath(plain: "notes/a.txt")

    @Test(
        "If-Match and If-None-Match lists: *, tags, weak tags, commas inside quotes; garbage matches nothing",
        arguments: [
            ("*", EntityTag.List.any),
            (" * ", .any),
            (#""a""#, .tags([EntityTag(strong: #""a""#)])),
            (#"W/"a", "b""#, .tags([EntityTag(isWeak: true, opaque: #""a""#), EntityTag(strong: #""b""#)])),
            (#""a,b" , ,"c""#, .tags([EntityTag(strong: #""a,b""#), EntityTag(strong: #""c""#)])),
            ("abc", .tags([])),
            (#""a" x"#, .tags([])),
            (#""unterminated"#, .tags([])),
            ("", .tags([])),
        ])
    func lists(header: String, expected: EntityTag.List) {
        #expect(EntityTag.List(parsing: header) == expected)
    }

    @Test(
        "conditions judged as RFC 9110 says: If-Match strong, If-None-Match weak, If-Unmodified-Since only without If-Match",
        arguments: [
            // (If-Match, If-None-Match, If-Unmodified-Since in seconds, the file there?, holds?)
            (tag, nil, nil, true, true),
            ("W/" + tag, nil, nil, true, false),
            (#""other", "# + tag, nil, nil, true, true),
            (#""other""#, nil, nil, true, false),
            ("*", nil, nil, true, true),
            ("*", nil, nil, false, false),
            (tag, nil, nil, false, false),
            (nil, "*", nil, true, false),
            (nil, "*", nil, false, true),
            (nil, "W/" + tag, nil, true, false),
            (nil, #""other""#, nil, true, true),
            (nil, nil, 0, true, false),
            (nil, nil, 1, true, true),
            (nil, nil, 0, false, true),
            (tag, nil, 0, true, true),
            (tag, "*", nil, true, false),
        ] as [(String?, String?, Int64?, Bool, Bool)])
    func judged(ifMatch: String?, ifNoneMatch: String?, since: Int64?, exists: Bool, holds: Bool) {
        let conditions = WritePreconditions(
            ifMatch: ifMatch.map(EntityTag.List.init(parsing:)),
            ifNoneMatch: ifNoneMatch.map(EntityTag.List.init(parsing:)),
            ifUnmodifiedSince: since.map { $0 * 1_000_000_000 })
        let failure = conditions.failure(current: exists ? Self.file : nil, path: Self.path)
        #expect((failure == nil) == holds, "\(failure?.message ?? "holds")")
        if let failure {
            #expect(failure.message.contains("notes/a.txt"))
            #expect(failure.current?.opaque == (exists ? Self.tag : nil))
        }
    }

    @Test("no condition holds for anything; the conditions survive being written down with an upload")
    func emptyAndLines() throws {
        #expect(WritePreconditions.none.failure(current: nil, path: Self.path) == nil)
        #expect(WritePreconditions.none.lines.isEmpty)
        let kept = [
            WritePreconditions(
                ifMatch: .tags([EntityTag(strong: Self.tag), EntityTag(isWeak: true, opaque: #""x""#)])),
            WritePreconditions(ifMatch: .any, ifNoneMatch: .tags([]), ifUnmodifiedSince: 1_700_000_000_000_000_000),
            WritePreconditions(ifNoneMatch: .any),
        ]
        for conditions in kept {
            #expect(WritePreconditions(lines: conditions.lines.map { Substring($0) }) == conditions)
        }
        #expect(WritePreconditions(lines: ["if-unmodified-since soon"]) == nil)
        #expect(WritePreconditions(lines: ["unknown x"]) == nil)
    }

    // MARK: Turns

    static func paths(_ names: String...) -> [SharePath] { names.map { try! SharePath(plain: $0) } }

    @Test("changes of one path, or of a folder and what is in it, take turns in order; others run at once")
    func turns() {
        var state = PathExclusionState()
        let file = state.begin(Self.paths("a/b.txt"))
        #expect(file.runsNow)
        #expect(state.begin(Self.paths("c.txt")).runsNow, "an unrelated path runs at once")
        let same = state.begin(Self.paths("a/b.txt"))
        let folder = state.begin(Self.paths("a"))
        let move = state.begin(Self.paths("x", "a/b.txt"))
        #expect(!same.runsNow && !folder.runsNow && !move.runsNow)
        #expect(state.runningCount == 2 && state.waitingCount == 3)
        // Only the first waiting one runs: the others overlap it.
        #expect(state.finish(file.turn) == [same.turn])
        #expect(state.finish(same.turn) == [folder.turn])
        #expect(state.finish(folder.turn) == [move.turn])
        #expect(state.finish(move.turn).isEmpty)
        #expect(state.finish(move.turn).isEmpty, "a turn ends once")
        #expect(state.waitingCount == 0 && state.runningCount == 1)
    }

    @Test("a waiting change holds back later ones that overlap it, not the ones that do not")
    func noStarvation() {
        var state = PathExclusionState()
        let first = state.begin(Self.paths("docs/a.txt"))
        let folder = state.begin(Self.paths("docs"))
        // Free on its own, but the folder waits for it: it waits behind the folder.
        let sibling = state.begin(Self.paths("docs/b.txt"))
        let elsewhere = state.begin(Self.paths("music/b.mp3"))
        #expect(first.runsNow && !folder.runsNow && !sibling.runsNow && elsewhere.runsNow)
        #expect(state.finish(elsewhere.turn).isEmpty)
        #expect(state.finish(first.turn) == [folder.turn])
        #expect(state.finish(folder.turn) == [sibling.turn])
    }

    @Test("turns through the lock: overlapping work never runs at once, and every change ends")
    func exclusion() async throws {
        let exclusion = PathExclusion()
        let inside = Inside()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<300 {
                group.addTask {
                    // Every third change is of the whole folder; the others of one of five files in it.
                    let name = index % 3 == 0 ? "shared" : "shared/f\(index % 5)"
                    try await exclusion.withPaths(Self.paths(name)) {
                        #expect(inside.enter(name), "\(name) overlapped another change")
                        await Task.yield()
                        inside.leave(name)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(inside.entered == 300)
    }
}

/// The changes inside the exclusion now, by path.
private final class Inside: Sendable {
    private let state = Mutex<(running: [String: Int], entered: Int)>(([:], 0))

    /// Enters; whether nothing overlapping was inside.
    func enter(_ name: String) -> Bool {
        state.withLock { state in
            state.entered += 1
            let overlapping = state.running.contains { key, count in
                count > 0 && (key == name || key.hasPrefix(name + "/") || name.hasPrefix(key + "/"))
            }
            state.running[name, default: 0] += 1
            return !overlapping
        }
    }

    func leave(_ name: String) { state.withLock { $0.running[name, default: 0] -= 1 } }

    var entered: Int { state.withLock { $0.entered } }
}
