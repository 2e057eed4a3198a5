import FileWatching
import FileshareTestSupport
import Logging
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// A version or a trashed item of a file the observer has not seen yet is
/// filed under the id the observer then gives that file, so that it
/// belongs to the item the change feed names.
@Suite("ids of items the observer has not seen yet")
struct FolderHistoryIDTests {
    @Test("the history's id for a new file is the one the observer gives it, also for a reused inode number")
    func newFileAgrees() async throws {
        try await MachineSettings.shared {
            let shared = try TemporaryFolder()
            let state = try TemporaryFolder()
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            // Not told the observer's ids: it names every item as for one the observer has not seen.
            let history = try FolderHistory(privatePath: state.path, options: HistoryOptions(), logger: logger)
            let observer = try FileObserver(
                root: shared.path, options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero),
                logger: logger)
            try observer.start()
            defer { observer.stop() }
            let directory = open(shared.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(directory >= 0)
            defer { close(directory) }
            // The second file is made where the first was deleted: ext4 gives
            // it the freed inode number, often with the same birth time.
            for name in ["first.txt", "second.txt"] {
                try shared.write(Array(name.utf8), to: name)
                let status = try FileStatus(name: name, in: directory)
                let fallback = history.id(of: try SharePath(plain: name), status: status, name: name, in: directory)
                await observer.sync()
                let item = try #require(observer.item(at: ItemPath(name)), "the observer never saw \(name)")
                #expect(item.id == fallback, "\(name): the observer's \(item.id), the history's \(fallback)")
                #expect(unlink(shared(name)) == 0)
                await observer.sync()
            }
        }
    }
}
