import ChangeLog
import FileWatching
import FileshareTestSupport
import Logging
import Testing

@testable import FileSharing

/// A server that takes over from one that died between committing changes
/// and saving the state that holds them: its first scan reports them again,
/// and they are numbered once only.
@Suite("the change feed after a takeover", .timeLimit(.minutes(5)))
struct ChangeFeedTakeoverTests {
    static func item(_ path: String, id: UInt64, writing: Bool) -> ChangedItem {
        ChangedItem(path: ItemPath(path), id: ItemID(rawValue: id), kind: .file, size: 5, isWriting: writing)
    }

    @Test("what the log holds is not numbered again; a file it left being written is finished")
    func firstScanAgainstTheLog() async throws {
        let folder = try TemporaryFolder()
        let log = try FileChangeLog(folder: folder.path, logger: Logger(label: "test"))
        var logged = ChangeFeed.Logged()
        logged.add(.added(Self.item("written.txt", id: 1, writing: true)))
        logged.add(.added(Self.item("done.txt", id: 2, writing: false)))
        logged.add(.renamed(from: "old.txt", to: "new.txt", id: ItemID(rawValue: 3), kind: .file))
        let feed = ChangeFeed(
            log: log, origins: OriginRegistry(), logger: Logger(label: "test"), printer: nil, alreadyLogged: logged)
        feed.record([
            .scanStarted(root: folder.path),
            .added(Self.item("written.txt", id: 1, writing: false)),
            .added(Self.item("done.txt", id: 2, writing: false)),
            .renamed(from: "old.txt", to: "new.txt", id: ItemID(rawValue: 3), kind: .file),
            .added(Self.item("meanwhile.txt", id: 4, writing: false)),
            .scanCompleted(root: folder.path, items: 4, elapsedMilliseconds: 1),
        ])
        // After the first scan, every change is numbered, even one the log held before.
        feed.record([.added(Self.item("done.txt", id: 2, writing: false))])
        try await log.flush()
        guard case .records(let records, _) = try await log.read(after: 0, limit: 10) else {
            Issue.record("expired")
            return
        }
        #expect(
            records.compactMap(\.change) == [
                .finished(path: "written.txt", id: ItemID(rawValue: 1), size: 5),
                .added(Self.item("meanwhile.txt", id: 4, writing: false)),
                .added(Self.item("done.txt", id: 2, writing: false)),
            ], "\(records.map(\.jsonLine))")
        log.close()
    }

    /// The records a feed numbers for a first scan, given the log's records before it.
    static func numbered(logged: [Change], scan: [Change]) async throws -> [Change] {
        let folder = try TemporaryFolder()
        let log = try FileChangeLog(folder: folder.path, logger: Logger(label: "test"))
        defer { log.close() }
        var view = ChangeFeed.Logged()
        for change in logged { view.add(change) }
        let feed = ChangeFeed(
            log: log, origins: OriginRegistry(), logger: Logger(label: "test"), printer: nil, alreadyLogged: view,
            lookUp: { _ in 42 })
        feed.record(
            [.scanStarted(root: folder.path)] + scan + [
                .scanCompleted(root: folder.path, items: 1, elapsedMilliseconds: 1)
            ])
        try await log.flush()
        guard case .records(let records, _) = try await log.read(after: 0, limit: 100) else { return [] }
        return records.compactMap(\.change)
    }

    static func id(_ value: UInt64) -> ItemID { ItemID(rawValue: value) }

    @Test("renames the log holds in several steps are not numbered again as one")
    func stepsAlreadyLogged() async throws {
        let numbered = try await Self.numbered(
            logged: [
                .renamed(from: "A", to: "B", id: Self.id(1), kind: .file),
                .renamed(from: "B", to: "C", id: Self.id(1), kind: .file),
                .added(Self.item("X", id: 2, writing: false)),
                .moved(from: "X", to: "F/Y", id: Self.id(2), kind: .file),
                .renamed(from: "F", to: "G", id: Self.id(3), kind: .directory),
            ],
            scan: [
                // From the saved state's view: A was there, X and F/Y not, F not renamed.
                .renamed(from: "A", to: "C", id: Self.id(1), kind: .file),
                .renamed(from: "F", to: "G", id: Self.id(3), kind: .directory),
                .added(Self.item("G/Y", id: 2, writing: false)),
            ])
        #expect(numbered.isEmpty, "\(numbered)")
    }

    @Test("what changed after the last record is numbered from where the log left each item")
    func rebasedOnTheLog() async throws {
        let numbered = try await Self.numbered(
            logged: [
                .renamed(from: "A", to: "B", id: Self.id(1), kind: .file),
                .added(Self.item("X", id: 2, writing: false)),
                .renamed(from: "S", to: "T", id: Self.id(6), kind: .file),
                .removed(path: "R", id: Self.id(5), kind: .file),
                .renamed(from: "F", to: "G", id: Self.id(3), kind: .directory),
                .added(Self.item("G/z", id: 4, writing: false)),
                .removed(path: "O", id: Self.id(7), kind: .file),
            ],
            scan: [
                // Renamed on after the leader died.
                .renamed(from: "A", to: "D", id: Self.id(1), kind: .file),
                // Written again.
                .added(ChangedItem(path: "X", id: Self.id(2), kind: .file, size: 9, isWriting: false)),
                // Removed after the rename the log holds.
                .removed(path: "S", id: Self.id(6), kind: .file),
                // As the log says.
                .removed(path: "R", id: Self.id(5), kind: .file),
                // The folder (with z, made after the state was saved) removed.
                .removed(path: "F", id: Self.id(3), kind: .directory),
                // Moved out, then in again: the log has it gone.
                .renamed(from: "O", to: "P", id: Self.id(7), kind: .file),
                // Unknown to the log's newest records.
                .added(Self.item("new", id: 8, writing: false)),
            ])
        #expect(
            numbered == [
                .renamed(from: "B", to: "D", id: Self.id(1), kind: .file),
                .modified(ChangedItem(path: "X", id: Self.id(2), kind: .file, size: 9, isWriting: false)),
                .removed(path: "T", id: Self.id(6), kind: .file),
                .removed(path: "G", id: Self.id(3), kind: .directory),
                .added(ChangedItem(path: "P", id: Self.id(7), kind: .file, size: 42, isWriting: false)),
                .added(Self.item("new", id: 8, writing: false)),
            ], "\(numbered)")
    }

    @Test("an item in a folder the log moved is numbered at its path in the log")
    func folderMovedInTheLog() async throws {
        let numbered = try await Self.numbered(
            logged: [
                .added(Self.item("F/a", id: 2, writing: false)),
                .moved(from: "F", to: "H/F", id: Self.id(1), kind: .directory),
            ],
            scan: [
                .moved(from: "F", to: "H/F", id: Self.id(1), kind: .directory),
                // Renamed after the leader died: from the log's path.
                .renamed(from: "H/F/a", to: "H/F/b", id: Self.id(2), kind: .file),
            ])
        #expect(numbered == [.renamed(from: "H/F/a", to: "H/F/b", id: Self.id(2), kind: .file)], "\(numbered)")
    }
}
