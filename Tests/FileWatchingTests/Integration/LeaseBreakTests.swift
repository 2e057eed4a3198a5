import FileshareTestSupport
import Foundation
import Synchronization
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// The observer asks the kernel whether a recent file still has a writer by
/// taking a read lease on it and letting go at once. A program that opens
/// the file for writing while the lease lives breaks it, and the kernel
/// signals the lease's holder: SIGIO by default, which ends the process.
/// Without the shim's answer to that, this test's process dies (exit 157),
/// as `fileshare serve` did under load.
@Suite("Writers racing the observer's lease check")
struct LeaseBreakTests {
    @Test("a file opened for writing while its lease is checked does not end the process")
    func writersRaceTheLease() throws {
        let dir = try TemporaryFolder()
        let path = dir.path + "/file"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        let fileSystem = try LinuxFileSystem(rootPath: dir.path, inotifyFD: nil)
        let stop = Atomic<Bool>(false)
        let opens = Atomic<Int>(0)
        // A writer on a thread of its own: each open for writing breaks a lease held then.
        let writer = Thread {
            while !stop.load(ordering: .relaxed) {
                let fd = open(path, O_WRONLY | O_CLOEXEC)
                if fd >= 0 { close(fd) }
                opens.add(1, ordering: .relaxed)
            }
        }
        writer.start()
        defer { stop.store(true, ordering: .relaxed) }
        var answers = (none: 0, writer: 0, unknown: 0)
        let end = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < end {
            switch fileSystem.hasNoWriters(at: "file") {
            case true?: answers.none += 1
            case false?: answers.writer += 1
            case nil: answers.unknown += 1
            }
        }
        stop.store(true, ordering: .relaxed)
        // Leases answer here (the test owns the file), and both answers came.
        #expect(answers.unknown == 0, "\(answers)")
        #expect(answers.none > 0 && answers.writer > 0, "\(answers), \(opens.load(ordering: .relaxed)) opens")
    }
}
