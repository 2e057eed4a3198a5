import Testing

@testable import Inbox

/// The Inbox's pure parts: its journal's lines and state.
@Suite("Inbox logic")
struct InboxLogicTests {
    static let claim = InboxClaim(
        source: "Inbox/Tab\there\nand \\ newline.pdf", destination: "Report 2.pdf", device: 2049, inode: 1_234_567,
        isFolder: false,
        typeIdentifier: "com.adobe.pdf", reason: "")

    @Test("journal records round-trip, names with tabs, newlines and backslashes included")
    func roundTrip() {
        let records = [
            JournalRecord(sequence: 1, step: .claim(InboxLogicTests.claim)),
            JournalRecord(sequence: 1, step: .moved),
            JournalRecord(sequence: 1, step: .handling),
            JournalRecord(
                sequence: 2,
                step: .claim(
                    InboxClaim(
                        source: "Inbox/x", destination: "/elsewhere/Quarantine/x", device: 1, inode: 2, isFolder: true,
                        typeIdentifier: nil,
                        reason: "'x' is a PNG image, which this folder does not accept"))),
            JournalRecord(sequence: 1, step: .done),
        ]
        let bytes = Array(records.map(InboxJournal.encode).joined().utf8)
        #expect(InboxJournal.decode(bytes) == records)
    }

    @Test("a torn last line or a damaged one is left out; the lines before it stand")
    func torn() {
        let first = InboxJournal.encode(JournalRecord(sequence: 1, step: .claim(InboxLogicTests.claim)))
        let second = InboxJournal.encode(JournalRecord(sequence: 1, step: .moved))
        for cut in 1..<second.utf8.count {
            let bytes = Array(first.utf8) + Array(second.utf8.prefix(cut))
            #expect(InboxJournal.decode(bytes) == [JournalRecord(sequence: 1, step: .claim(InboxLogicTests.claim))])
        }
        var damaged = Array((first + second).utf8)
        damaged[10] ^= 0x01
        #expect(InboxJournal.decode(damaged) == [JournalRecord(sequence: 1, step: .moved)])
    }

    @Test("journal state: the latest claim wins, pending items in order, done ones left out")
    func state() {
        var renamed = InboxLogicTests.claim
        renamed.destination = "Report 3.pdf"
        let state = JournalState([
            JournalRecord(sequence: 1, step: .claim(InboxLogicTests.claim)),
            JournalRecord(sequence: 2, step: .claim(InboxLogicTests.claim)),
            JournalRecord(sequence: 1, step: .claim(renamed)),
            JournalRecord(sequence: 1, step: .moved),
            JournalRecord(sequence: 2, step: .moved),
            JournalRecord(sequence: 2, step: .handling),
            JournalRecord(sequence: 2, step: .done),
            JournalRecord(sequence: 3, step: .claim(InboxLogicTests.claim)),
            JournalRecord(sequence: 3, step: .moved),
            JournalRecord(sequence: 3, step: .handling),
        ])
        #expect(state.pending.map(\.sequence) == [1, 3])
        #expect(
            state.pending[0].entry.claim.destination == "Report 3.pdf" && state.pending[0].entry.moved
                && !state.pending[0].entry.handling)
        #expect(state.pending[1].entry.handling)
        #expect(state.lastSequence == 3)
    }
}
