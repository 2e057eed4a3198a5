import Testing

@testable import FileWatching

/// A rename whose two halves a read split (the renaming thread preempted
/// between them) is handled whole: ``MovePairing`` carries its first half
/// over to the next read, so the core pairs it as a move rather than a
/// removal and an arrival. Time is given in milliseconds.
@Suite("Reading events: rename halves")
struct MovePairingTests {
    static let ms: Int64 = 1_000_000

    static func from(_ name: String, cookie: UInt32 = 7) -> SourceEvent {
        SourceEvent(watch: 1, kind: .movedFrom(cookie: cookie), name: Array(name.utf8))
    }

    static func to(_ name: String, cookie: UInt32 = 7) -> SourceEvent {
        SourceEvent(watch: 2, kind: .movedTo(cookie: cookie), name: Array(name.utf8))
    }

    static func created(_ name: String) -> SourceEvent {
        SourceEvent(watch: 1, kind: .created, name: Array(name.utf8))
    }

    @Test("a rename split across two reads comes out whole, after what came before it")
    func split() {
        var pairing = MovePairing(wait: .milliseconds(50))
        #expect(pairing.take([Self.created("a"), Self.from("b")], now: 0, flush: false) == [Self.created("a")])
        #expect(pairing.deadline == 50 * Self.ms)
        #expect(
            pairing.take([Self.to("c"), Self.created("d")], now: 20 * Self.ms, flush: false) == [
                Self.from("b"), Self.to("c"), Self.created("d"),
            ])
        #expect(pairing.deadline == nil)
    }

    @Test("a move out of the tree has no second half: handled once the wait is over, with what came meanwhile")
    func moveOut() {
        var pairing = MovePairing(wait: .milliseconds(50))
        #expect(pairing.take([Self.from("b")], now: 0, flush: false).isEmpty)
        // Other events read meanwhile wait behind it, in order.
        #expect(pairing.take([Self.created("e")], now: 30 * Self.ms, flush: false).isEmpty)
        #expect(pairing.deadline == 50 * Self.ms, "the first half keeps the time it was read")
        #expect(!pairing.isDue([], now: 49 * Self.ms))
        #expect(pairing.isDue([], now: 50 * Self.ms), "the moment to wait for renames still reporting")
        #expect(pairing.take([], now: 50 * Self.ms, flush: false) == [Self.from("b"), Self.created("e")])
        #expect(pairing.deadline == nil)
    }

    @Test("with no wait, a lone first half is due as soon as it is read; a paired one never is")
    func noWait() {
        let pairing = MovePairing(wait: .zero)
        #expect(pairing.isDue([Self.created("a"), Self.from("b")], now: 0))
        #expect(!pairing.isDue([Self.from("b"), Self.to("c")], now: 0))
        #expect(!MovePairing(wait: .milliseconds(50)).isDue([Self.from("b")], now: 0))
    }

    @Test("a sync takes everything at once")
    func flush() {
        var pairing = MovePairing(wait: .milliseconds(50))
        #expect(pairing.take([Self.from("b")], now: 0, flush: false).isEmpty)
        #expect(
            pairing.take([Self.created("e")], now: 1 * Self.ms, flush: true) == [Self.from("b"), Self.created("e")])
        #expect(pairing.take([Self.from("x", cookie: 9)], now: 2 * Self.ms, flush: true) == [Self.from("x", cookie: 9)])
    }

    @Test("a paired rename ahead of an unpaired one is handled at once; the unpaired one gets a wait of its own")
    func pairedThenUnpaired() {
        var pairing = MovePairing(wait: .milliseconds(50))
        #expect(
            pairing.take([Self.from("b"), Self.to("c"), Self.from("x", cookie: 9)], now: 0, flush: false) == [
                Self.from("b"), Self.to("c"),
            ])
        // The first carried half is paired at 40 ms; a new unpaired one waits from then.
        let out = pairing.take([Self.to("y", cookie: 9), Self.from("z", cookie: 11)], now: 40 * Self.ms, flush: false)
        #expect(out == [Self.from("x", cookie: 9), Self.to("y", cookie: 9)])
        #expect(pairing.deadline == 90 * Self.ms)
    }

    @Test("an exchange stays whole: its arrival is carried with the departure that follows it, and the rest with them")
    func exchange() {
        // Staging unwatched: the arrival at the name, then its old item leaving.
        let arrival = SourceEvent(watch: 1, kind: .movedTo(cookie: 1), name: Array("Story".utf8))
        let departure = SourceEvent(watch: 1, kind: .movedFrom(cookie: 2), name: Array("Story".utf8))
        #expect(MovePairing.cut([Self.created("a"), arrival, departure]) == 1)
        // Staging watched, the last half not read yet: its first half goes too.
        let leaving = SourceEvent(watch: 1, kind: .movedFrom(cookie: 1), name: Array(".staging".utf8))
        #expect(MovePairing.cut([Self.created("a"), leaving, arrival, departure]) == 1)
        var pairing = MovePairing(wait: .milliseconds(50))
        #expect(pairing.take([Self.created("a"), arrival, departure], now: 0, flush: false) == [Self.created("a")])
        #expect(pairing.take([], now: 50 * Self.ms, flush: false) == [arrival, departure])
    }

    @Test("the first unpaired movedFrom is found wherever it is")
    func firstUnpaired() {
        #expect(MovePairing.firstUnpairedMoveFrom([]) == nil)
        #expect(MovePairing.firstUnpairedMoveFrom([Self.from("a"), Self.to("b")]) == nil)
        #expect(
            MovePairing.firstUnpairedMoveFrom([
                Self.created("a"), Self.from("x", cookie: 9), Self.from("b"), Self.created("c"), Self.to("d"),
            ]) == 1)
    }

    /// A started core over `inbox/` holding `files` and an empty `library/`.
    static func inboxAndLibrary(files: [String]) -> CoreHarness {
        var h = CoreHarness()
        h.fs.mkdir("inbox")
        h.fs.mkdir("library")
        for file in files { h.fs.write(ItemPath("inbox/\(file)"), bytes: 3) }
        h.start()
        return h
    }

    @Test("a rename held up after its first half past the wait: waiting for the directory's renames brings the second")
    func heldUpRename() {
        var h = Self.inboxAndLibrary(files: ["a.cbz", "b.cbz"])
        let id = h.treeIDs["inbox/a.cbz"]
        h.fs.rename("inbox/a.cbz", "library/a.cbz", stalling: true)
        h.fs.moveOut("inbox/b.cbz")
        let read = h.fs.takeEvents()
        #expect(MovePairing.unpairedMovesFrom(read).count == 2)
        h.core.awaitRenames(reported: read)
        #expect(h.fs.awaited == ["inbox"], "one wait for the directory both halves left")
        let after = h.fs.takeEvents()
        #expect(MovePairing.unpairedMovesFrom(read + after).count == 1, "the move out is still alone: it left")
        h.core.handle(read + after, at: h.now)
        h.process(force: true)
        #expect(h.liveChanges.map(\.summary) == ["moved inbox/a.cbz library/a.cbz", "removed inbox/b.cbz"])
        #expect(h.treeIDs["library/a.cbz"] == id)
    }

    @Test("a directory renamed since its watch reported is not waited on: its path now leads elsewhere")
    func staleDirectory() {
        let h = Self.inboxAndLibrary(files: ["a.cbz"])
        h.fs.rename("inbox/a.cbz", "library/a.cbz", stalling: true)
        let read = h.fs.takeEvents()
        // Before the core hears of it, another folder takes the name.
        h.fs.rename("inbox", "old")
        h.fs.mkdir("inbox")
        h.core.awaitRenames(reported: read)
        #expect(h.fs.awaited == ["inbox"])
        #expect(!h.fs.takeEvents().contains { $0.name == Array("a.cbz".utf8) }, "the held-up rename is still held up")
    }
}
