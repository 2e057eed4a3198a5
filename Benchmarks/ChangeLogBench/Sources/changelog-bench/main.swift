import ChangeLog
import FileWatching
import Logging

#if canImport(Glibc)
    import Glibc
#endif

// changelog-bench FOLDER RECORDS BATCH
// Appends RECORDS observer-like records in batches of BATCH (as the observer
// hands them over), then waits until all are durable; prints one JSON line:
// appends per second (durable), and the time one lone append takes to become
// durable (p50/p99 of 200, each waited for: the fdatasync the group commit
// pays when nothing else is pending).

func monotonic() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let records = Int(arguments[2]), let batch = Int(arguments[3]), records > 0, batch > 0
else {
    print("usage: changelog-bench FOLDER RECORDS BATCH")
    exit(2)
}
var logger = Logger(label: "bench")
logger.logLevel = .error
let log = try FileChangeLog(folder: arguments[1], logger: logger)

func entry(_ index: Int) -> ChangeLogEntry {
    let item = ChangedItem(
        path: ItemPath("Photos/2026/November/IMG_\(index).jpg"),
        id: ItemID(rawValue: UInt64(index) &* 0x9E37_79B9_7F4A_7C15),
        kind: .file, size: Int64(index) * 1000, isWriting: index % 2 == 0)
    return ChangeLogEntry(.added(item), time: FileChangeLog.wallClock())
}

let start = monotonic()
var index = 0
while index < records {
    let count = min(batch, records - index)
    try log.append((index..<(index + count)).map(entry))
    index += count
}
try await log.flush()
let elapsed = monotonic() - start

var latencies: [Double] = []
for lone in 0..<200 {
    let began = monotonic()
    try log.append([entry(records + lone)])
    try await log.flush()
    latencies.append(monotonic() - began)
}
latencies.sort()
log.close()
print(
    "{\"records\":\(records),\"batch\":\(batch),\"seconds\":\(elapsed),\"appends_per_second\":\(Double(records) / elapsed),"
        + "\"lone_p50_ms\":\(latencies[100] * 1000),\"lone_p99_ms\":\(latencies[198] * 1000)}")
