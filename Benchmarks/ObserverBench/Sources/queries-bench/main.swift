// The observer's queries (`children(of:)`, `item(at:)`, `itemCount`) while
// it reads a large tree: during its initial scan and during a rescan of the
// whole tree (a poll), beside the same queries on the observer at rest, its
// floor. A query holds the tree's lock only while it reads the tree, and the
// observer only while it changes it: neither listing folders nor reading
// metadata, so the queries during a scan should stay near the floor.
//
//   queries-bench [--folders N] [--files N] [--seconds S]
import FileWatching
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

struct Options {
    var folders = 100
    var files = 1_000
    var seconds = 3.0

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst(), let number = Double(value), number > 0 else { Options.usage() }
            switch flag {
            case "--folders": folders = Int(number)
            case "--files": files = Int(number)
            case "--seconds": seconds = number
            default: Options.usage()
            }
        }
    }

    static func usage() -> Never {
        FileHandle.standardError.write(Data("usage: queries-bench [--folders N] [--files N] [--seconds S]\n".utf8))
        exit(2)
    }
}

/// Queries in a loop on a thread of their own until stopped; their durations.
final class QueryLoop: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let durations = Mutex<[Duration]>([])
    private let done = Mutex<CheckedContinuation<[Duration], Never>?>(nil)
    private let finished = Mutex<[Duration]?>(nil)

    init(_ observer: FileObserver, folders: Int, files: Int) {
        let thread = Thread { [self] in
            let clock = ContinuousClock()
            var round = 0
            var local: [Duration] = []
            while !stopRequested.load(ordering: .relaxed) {
                let folder = ItemPath(String(format: "d%03d", round % folders))
                let file = folder.appending(Array(String(format: "f%04d", round * 7 % files).utf8))
                local.append(clock.measure { _ = observer.children(of: folder) })
                local.append(clock.measure { _ = observer.item(at: file) })
                local.append(clock.measure { _ = observer.children(of: .root) })
                local.append(clock.measure { _ = observer.itemCount })
                round += 1
            }
            let continuation = done.withLock { continuation in
                finished.withLock { $0 = local }
                return continuation
            }
            continuation?.resume(returning: local)
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func stop() async -> [Duration] {
        stopRequested.store(true, ordering: .relaxed)
        return await withCheckedContinuation { continuation in
            let ready = done.withLock { pending -> [Duration]? in
                if let result = finished.withLock({ $0 }) { return result }
                pending = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ sorted: [Duration], _ q: Double) -> Duration {
    guard !sorted.isEmpty else { return .zero }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
}

struct Summary {
    var label: String
    var lasted: Duration
    var durations: [Duration]

    var sorted: [Duration] { durations.sorted() }

    func line(floor: Summary?) -> String {
        let sorted = self.sorted
        let p50 = percentile(sorted, 0.5)
        let p99 = percentile(sorted, 0.99)
        let longest = sorted.last ?? .zero
        var text = String(
            format: "%@: %.2f s, %d queries, p50 %.3f ms, p99 %.3f ms, longest %.2f ms", label,
            milliseconds(lasted) / 1000, durations.count, milliseconds(p50), milliseconds(p99), milliseconds(longest))
        if let floor {
            let floorP99 = percentile(floor.sorted, 0.99)
            if floorP99 > .zero { text += String(format: " (p99 %.1f× the floor's)", p99 / floorP99) }
        }
        return text
    }
}

let options = Options(CommandLine.arguments)
let root = FileManager.default.temporaryDirectory.appendingPathComponent("queries-bench-\(getpid())").path
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }
for folder in 0..<options.folders {
    let path = root + String(format: "/d%03d", folder)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    for file in 0..<options.files {
        let descriptor = open(path + String(format: "/f%04d", file), O_CREAT | O_WRONLY, 0o644)
        if descriptor >= 0 { close(descriptor) }
    }
}
// Out of the page cache's favour as little as a benchmark can: the tree was
// just made, so its metadata is cached, as it is for a folder in use.
let items = options.folders * (options.files + 1)
print("queries-bench: \(items) items in \(options.folders) folders")

var logger = Logger(label: "queries-bench")
logger.logLevel = .error
let observer = try FileObserver(
    root: root, options: ObserverOptions(latency: .zero, pollingInterval: .seconds(3600)), logger: logger)
let clock = ContinuousClock()

// During the initial scan: queries start with it and stop at its end.
let scanStart = clock.now
let scanQueries = QueryLoop(observer, folders: options.folders, files: options.files)
try observer.start()
while !observer.scanProgress.isComplete { try await Task.sleep(for: .milliseconds(1)) }
let scanLasted = clock.now - scanStart
let scan = Summary(label: "during the initial scan", lasted: scanLasted, durations: await scanQueries.stop())

// At rest: the floor.
let restQueries = QueryLoop(observer, folders: options.folders, files: options.files)
try await Task.sleep(for: .seconds(options.seconds))
let rest = Summary(label: "at rest (the floor)", lasted: .seconds(options.seconds), durations: await restQueries.stop())

// During a rescan of the whole tree: a sync while polling.
let rescanQueries = QueryLoop(observer, folders: options.folders, files: options.files)
let rescanStart = clock.now
await observer.sync()
let rescan = Summary(label: "during a rescan", lasted: clock.now - rescanStart, durations: await rescanQueries.stop())
observer.stop()

print(rest.line(floor: nil))
print(scan.line(floor: rest))
print(rescan.line(floor: rest))
