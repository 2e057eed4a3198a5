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
}
