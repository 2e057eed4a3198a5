import Testing

@testable import Documents

/// Whether a save's swapped-out content is someone else's: the rule, with
/// the disk's answers given.
@Suite("Replaced content, logic")
struct ReplacedByOthersTests {
    static let known = ContentStamp(device: 1, inode: 2, size: 3, modified: 4)
    static let other = ContentStamp(device: 1, inode: 2, size: 5, modified: 6)

    /// Answers `replacedByOthers` with the stamps and writer probes given in
    /// turn (the first stamp as the save found it, the last one and probe
    /// repeated); returns the verdict and the probes made.
    func judge(stamps: [ContentStamp?], writers: [Bool]) -> (Bool, probes: Int) {
        var stampIndex = 1
        var probes = 0
        let verdict = DocumentFolder.replacedByOthers(
            known: Self.known, stamp: stamps[0],
            restamp: {
                defer { stampIndex += 1 }
                return stamps[min(stampIndex, stamps.count - 1)]
            },
            hasWriters: {
                defer { probes += 1 }
                return writers[min(probes, writers.count - 1)]
            })
        return (verdict, probes)
    }

    @Test("other content is theirs at once; no writer and the same content is ours")
    func plain() {
        #expect(judge(stamps: [Self.other], writers: [false]) == (true, 0))
        #expect(judge(stamps: [nil], writers: [false]) == (true, 0))
        #expect(judge(stamps: [Self.known], writers: [false]) == (false, 1))
    }

    @Test(
        "a writer seen once is looked for again: gone with the content unchanged is ours; one that stays, or wrote, is theirs"
    )
    func writerLookedAtAgain() {
        // A program being started held the saver's own closed file for a moment.
        #expect(judge(stamps: [Self.known], writers: [true, false]) == (false, 2))
        #expect(judge(stamps: [Self.known], writers: [true, true, false]) == (false, 3))
        // It wrote before it went: the content tells.
        #expect(judge(stamps: [Self.known, Self.other], writers: [true, false]) == (true, 2))
        // Still writing after both pauses.
        #expect(judge(stamps: [Self.known], writers: [true]) == (true, 3))
    }
}
