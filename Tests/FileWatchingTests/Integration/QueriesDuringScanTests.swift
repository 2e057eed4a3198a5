import FileshareTestSupport
import Foundation
import Synchronization
import Testing

@testable import FileWatching

#if canImport(Glibc)
    import Glibc
#endif

/// The queries (`children(of:)`, `item(at:)`) while the observer reads a tree
/// of 100,000 items from the disk: the observer holds the tree's lock only
/// while it changes the tree, never while it lists folders or reads
/// metadata, so no query waits for a scan or a rescan. What is checked here
/// is that the queries go on during both and none waits for either (a query
/// that did would take the operation's length); how long they take beside
/// the same queries at rest is measured by `Benchmarks/queries-run`.
@Suite("Queries while the observer reads a large tree")
struct QueriesDuringScanTests {
    static let folders = 100
    static let filesPerFolder = 1_000

    @Test(
        "children(of:) and item(at:) answer during the scan and a rescan of 100,000 items without waiting for either",
        .serialized, arguments: [RescanTrigger.poll, .overflow])
    func queriesDuringRescan(trigger: RescanTrigger) async throws {
        if trigger == .overflow { try MachineSettings.requireInotifySettings() }
        let dir = try TemporaryFolder()
        // 100,000 files made on a thread of their own: made on one of the
        // cooperative pool's two threads, under the whole suite they held it
        // for tens of seconds, and every server of the other tests in this
        // process stopped answering meanwhile (readTimeout).
        let root = dir.path
        try await onOwnThread { try QueriesDuringScanTests.makeTree(root) }
        let options =
            trigger == .poll
            ? ObserverOptions(latency: .zero, pollingInterval: .seconds(3600))
            : ObserverOptions(latency: .zero)
        let probe: ObserverProbe
        if trigger == .overflow {
            // The queue size is read when the inotify instance is made.
            probe = try await MachineSettings.with("/proc/sys/fs/inotify/max_queued_events", setTo: 64) {
                try ObserverProbe(dir.path, options: options)
            }
        } else {
            probe = try ObserverProbe(dir.path, options: options)
        }
        await MachineSettings.shared {
            let observer = probe.observer
            // The initial scan, already under way (it may end before the
            // queries begin: this test may wait for the machine's settings,
            // and the machine may be loaded; no query then waits for it).
            let scanQueries = QueryLoop(observer)
            #expect(await probe.scanned())
            let scan = await scanQueries.stop()
            let scanElapsed =
                probe.changes.lazy.compactMap { change -> Int? in
                    if case .scanCompleted(_, _, let elapsed) = change { elapsed } else { nil }
                }.first ?? 0
            #expect(observer.itemCount == QueriesDuringScanTests.folders * (QueriesDuringScanTests.filesPerFolder + 1))
            scan.check(during: "the initial scan", lasting: .milliseconds(scanElapsed), requiresCalls: false)

            let queries = QueryLoop(observer)
            #expect(await queries.waitForCalls())
            let started = ContinuousClock.now
            switch trigger {
            case .poll:
                // A barrier while polling rescans the whole tree.
                await observer.sync()
            case .overflow:
                // Hold the monitor while the kernel queue (64 events) overflows.
                observer.state.core.withLock { _ in
                    for i in 0..<200 { Disk.write(dir("d000/new\(i)")) }
                }
                await observer.sync()
                #expect(
                    probe.liveChanges.contains { if case .rescanned(.root, "overflow") = $0 { true } else { false } })
            }
            let rescanElapsed = ContinuousClock.now - started
            let rescan = await queries.stop()
            #expect(rescanElapsed >= .seconds(1), "a rescan too short to show anything: \(rescanElapsed)")
            rescan.check(during: "the rescan", lasting: rescanElapsed, requiresCalls: true)
            #expect(observer.children(of: "d050")?.count == QueriesDuringScanTests.filesPerFolder)
            #expect(observer.item(at: "d099/f0999")?.kind == .file)
        }
    }

    @Test("a callback that blocks holds up neither the change stream nor the queries; its batches wait, in order")
    func blockingCallback() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let probe = try ObserverProbe(
                dir.path, options: ObserverOptions(settleTime: .milliseconds(100), latency: .zero))
            #expect(await probe.scanned())
            final class Shared: Sendable {
                let open = Atomic<Bool>(false)
                let seen = Mutex<[Change]>([])
                let streamed = Mutex<[Change]>([])
            }
            let shared = Shared()
            let token = probe.observer.observe { batch in
                while !shared.open.load(ordering: .acquiring) { usleep(1000) }
                shared.seen.withLock { $0 += batch }
            }
            let stream = probe.observer.changes()
            let reader = Task { for await batch in stream { shared.streamed.withLock { $0 += batch } } }
            for i in 0..<5 { Disk.write(dir("f\(i)")) }
            // The stream gets them, and the tree has them, while the callback is stuck.
            let end = ContinuousClock.now + .seconds(20)
            func finishedCount() -> Int {
                shared.streamed.withLock { $0.count { if case .finished = $0 { true } else { false } } }
            }
            while finishedCount() < 5 && ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(5)) }
            #expect(finishedCount() == 5)
            #expect(probe.observer.children(of: .root)?.count == 5)
            #expect(shared.seen.withLock { $0.isEmpty })
            shared.open.store(true, ordering: .releasing)
            await probe.observer.sync()
            #expect(shared.seen.withLock { $0 } == shared.streamed.withLock { $0 })
            #expect(probe.liveChanges == shared.streamed.withLock { $0 })
            token.cancel()
            reader.cancel()
        }
    }

    /// Makes `folders` folders of `filesPerFolder` empty files, with the
    /// system calls alone (fast: about a second for 100,000 files).
    static func makeTree(_ root: String) throws {
        for folder in 0..<folders {
            let path = root + "/" + "d" + String(folder).leftPadded(to: 3)
            guard mkdir(path, 0o755) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
            let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard directory >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
            defer { close(directory) }
            // "f0000" … "f0999", written into one buffer.
            var name: [CChar] = Array("f0000".utf8CString)
            for file in 0..<filesPerFolder {
                var value = file
                for position in stride(from: 4, through: 1, by: -1) {
                    name[position] = CChar(48 + value % 10)
                    value /= 10
                }
                let fd = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
                close(fd)
            }
        }
    }
}

enum RescanTrigger: String, CustomTestStringConvertible, Sendable {
    /// `sync()` while polling: the whole tree is listed again.
    case poll
    /// The kernel's event queue overflows: the whole tree is listed again,
    /// with its watches.
    case overflow

    var testDescription: String { rawValue }
}

/// Calls the queries over and over on a thread of its own, timing each.
final class QueryLoop: Sendable {
    struct Timings: Sendable {
        /// How long each call took, in order.
        var durations: [Duration] = []
        var longest: Duration = .zero
        var longestQuery = ""
        var total: Duration = .zero
        var calls: Int { durations.count }

        /// Checks that none of the queries waited for the operation: none
        /// took a third of its length (when it lasted a second or more, long
        /// enough to tell); with `requiresCalls` (the queries were running
        /// when it began), that they went on during it.
        func check(during operation: String, lasting elapsed: Duration, requiresCalls: Bool) {
            let summary =
                "\(operation) took \(elapsed); \(calls) queries, the longest \(longest) (\(longestQuery)), "
                + "\(calls > 0 ? total / calls : .zero) on average"
            print("queries during \(summary)")
            if requiresCalls { #expect(calls > 0, "\(summary)") }
            if elapsed >= .seconds(1) { #expect(longest < elapsed / 3, "\(summary)") }
        }
    }

    private let stopRequested = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    private let timings = Mutex(Timings())

    init(_ observer: FileObserver) {
        let thread = Thread { [self] in
            let clock = ContinuousClock()
            var round = 0
            while !stopRequested.load(ordering: .relaxed) {
                let folderNumber = round % QueriesDuringScanTests.folders
                let folder = ItemPath("d" + String(folderNumber).leftPadded(to: 3))
                let file = folder.appending(
                    Array(("f" + String(round * 7 % QueriesDuringScanTests.filesPerFolder).leftPadded(to: 4)).utf8))
                var queries: [(String, Duration)] = []
                queries.append(("children(of: \(folder))", clock.measure { _ = observer.children(of: folder) }))
                queries.append(("item(at: \(file))", clock.measure { _ = observer.item(at: file) }))
                queries.append(("children(of: .root)", clock.measure { _ = observer.children(of: .root) }))
                queries.append(("itemCount", clock.measure { _ = observer.itemCount }))
                timings.withLock { timings in
                    for (query, duration) in queries {
                        timings.durations.append(duration)
                        timings.total += duration
                        if duration > timings.longest { (timings.longest, timings.longestQuery) = (duration, query) }
                    }
                }
                round += 1
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Waits until the loop has made a first round of calls.
    func waitForCalls() async -> Bool {
        let end = ContinuousClock.now + .seconds(20)
        while timings.withLock({ $0.calls }) == 0 && ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(1))
        }
        return timings.withLock { $0.calls } > 0
    }

    /// Stops the loop and returns its timings.
    func stop() async -> Timings {
        stopRequested.store(true, ordering: .relaxed)
        while !finished.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(1)) }
        return timings.withLock { $0 }
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
