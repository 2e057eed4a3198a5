import ChangeLog
import FileWatching
import Testing
import Versions

@Suite("Version retention (pure, time injected)")
struct RetentionTests {
    static let second: Int64 = 1_000_000_000
    static let day: Int64 = 86_400 * second

    static func version(_ item: UInt64, at saved: Int64, size: Int64 = 10, conflict: Bool = false) -> VersionRecord {
        VersionRecord(
            version: StoreName.make(nanoseconds: saved), id: ItemID(rawValue: item), path: "f\(item)", size: size,
            modified: saved, saved: saved, origin: nil, conflict: conflict)
    }

    @Test func keepsTheNewestByCountPerItem() {
        let policy = VersionRetention(maximumCount: 2, maximumAge: nil, maximumBytes: nil)
        let versions = (1...4).map { Self.version(1, at: Int64($0) * Self.second) } + [Self.version(2, at: 1)]
        let expired = policy.expired(versions, now: 10 * Self.second)
        #expect(Set(expired.map(\.saved)) == [1 * Self.second, 2 * Self.second])
        #expect(expired.allSatisfy { $0.id == ItemID(rawValue: 1) })
    }

    @Test func dropsWhatIsOlderThanTheAge() {
        let policy = VersionRetention(maximumCount: 100, maximumAge: 30 * Self.day, maximumBytes: nil)
        let old = Self.version(1, at: 0)
        let young = Self.version(1, at: 5 * Self.day)
        #expect(policy.expired([old, young], now: 31 * Self.day) == [old])
        #expect(policy.expired([old, young], now: 30 * Self.day).isEmpty)
    }

    @Test func dropsTheOldestAcrossItemsUntilTheBytesFit() {
        let policy = VersionRetention(maximumCount: 100, maximumAge: nil, maximumBytes: 25)
        let a = Self.version(1, at: 1, size: 10)
        let b = Self.version(2, at: 2, size: 10)
        let c = Self.version(1, at: 3, size: 10)
        #expect(policy.expired([c, a, b], now: 4) == [a])
    }

    @Test func neverDropsConflictsOrTheVersionJustKept() {
        let policy = VersionRetention(maximumCount: 0, maximumAge: 1, maximumBytes: 0)
        let conflict = Self.version(1, at: 0, conflict: true)
        let kept = Self.version(1, at: 1)
        let other = Self.version(2, at: 2)
        let expired = policy.expired(
            [conflict, kept, other], now: 100 * Self.day, protected: (kept.id, kept.version))
        #expect(expired == [other])
    }

    @Test func theTrashEmptiesByAgeAndBytesButNeverTheNewest() {
        func item(_ id: String, at deleted: Int64, size: Int64) -> TrashRecord {
            TrashRecord(trashId: id, path: id, id: nil, kind: .file, size: size, deleted: deleted, by: nil)
        }
        let policy = TrashRetention(maximumAge: 10 * Self.day, maximumBytes: 100)
        let old = item("a", at: 0, size: 1)
        let big = item("b", at: 5 * Self.day, size: 80)
        let fresh = item("c", at: 11 * Self.day, size: 80)
        #expect(
            Set(policy.expired([old, big, fresh], now: 11 * Self.day, protected: "c").map(\.trashId)) == ["a", "b"])
        // Alone over the budget, the item just deleted stays.
        #expect(TrashRetention(maximumAge: nil, maximumBytes: 1).expired([fresh], now: 0, protected: "c").isEmpty)
    }
}

@Suite("Store names")
struct StoreNameTests {
    @Test func namesAreTwentyDigitsThatSortAsTimes() {
        #expect(StoreName.make(nanoseconds: 42) == "00000000000000000042")
        #expect(StoreName.time(of: StoreName.make(nanoseconds: 1_764_000_000_000_000_000)) == 1_764_000_000_000_000_000)
        #expect(StoreName.make(nanoseconds: 9) < StoreName.make(nanoseconds: 10))
    }

    @Test(arguments: [
        "", "../00000000000000000001", "0000000000000000000", "000000000000000000001", "0000000000000000000a",
        "00000000000000000001/", ".tmp-1", "-0000000000000000001", "+0000000000000000001", "０0000000000000000001",
    ])
    func anythingElseIsNoName(_ name: String) {
        #expect(StoreName.time(of: name) == nil)
    }

    @Test func aFreeNameSkipsTakenOnes() {
        let taken: Set = [StoreName.make(nanoseconds: 5), StoreName.make(nanoseconds: 6)]
        #expect(StoreName.free(at: 5) { taken.contains($0) } == StoreName.make(nanoseconds: 7))
    }
}
