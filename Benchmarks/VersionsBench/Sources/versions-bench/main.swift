import FileWatching
import Logging
import Versions

#if canImport(Glibc)
    import Glibc
#endif

// versions-bench FOLDER BYTES SAVES MODE
// Saves a file of BYTES bytes SAVES times the way the server does (written
// to a staging file, flushed, renamed over the file), and, by MODE, keeps
// the content each save replaces:
//   none  nothing kept (the server before versions);
//   link  the replaced inode linked into the version store (the server's way);
//   copy  a copy kept (VersionStore.keepCopy: FICLONE where the file system
//         can, copy_file_range otherwise), what a save that replaces in
//         place would need.
// Prints one JSON line: milliseconds per save (p50, p99, mean; and of its
// parts: writing, flushing, keeping, renaming into place), the bytes
// the version store takes per save (its blocks), and whether the folder's
// file system can reflink.

func monotonic() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// The bytes of the blocks under `path` (what it takes on disk).
func blocks(_ path: String) -> Int64 {
    var info = stat()
    guard lstat(path, &info) == 0 else { return 0 }
    var total = Int64(info.st_blocks) * 512
    if (info.st_mode & S_IFMT) == S_IFDIR, let names = try? folderNames(path) {
        for name in names { total += blocks(path + "/" + name) }
    }
    return total
}

/// Whether FICLONE works between two files of `folder`.
func canReflink(_ folder: String) -> Bool {
    let source = open(folder + "/.probe-a", O_RDWR | O_CREAT | O_TRUNC, 0o600)
    let target = open(folder + "/.probe-b", O_RDWR | O_CREAT | O_TRUNC, 0o600)
    defer {
        close(source)
        close(target)
        unlink(folder + "/.probe-a")
        unlink(folder + "/.probe-b")
    }
    var byte: UInt8 = 1
    _ = write(source, &byte, 1)
    fsync(source)
    return ioctl(target, 0x4004_9409, source) == 0  // FICLONE
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let size = Int(arguments[2]), let saves = Int(arguments[3]), saves > 0,
    ["none", "link", "copy"].contains(arguments[4])
else {
    print("usage: versions-bench FOLDER BYTES SAVES none|link|copy")
    exit(2)
}
let folder = arguments[1]
let mode = arguments[4]
mkdir(folder, 0o755)
mkdir(folder + "/.fileshare", 0o700)
mkdir(folder + "/.fileshare/staging", 0o700)
var logger = Logger(label: "bench")
logger.logLevel = .error
// No retention: every version stays, so the store's blocks are what the saves cost.
let store = try VersionStore(
    path: folder + "/.fileshare/versions",
    retention: VersionRetention(maximumCount: .max, maximumAge: nil, maximumBytes: nil), logger: logger)
let folderFD = open(folder, O_RDONLY | O_DIRECTORY)
let id = ItemID(rawValue: 42)
var content = [UInt8](repeating: 0, count: size)
for index in content.indices { content[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 12) }

@MainActor func save(_ round: Int) throws {
    content[round % size] &+= 1
    let staging = folder + "/.fileshare/staging/save"
    let fd = open(staging, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let writing = monotonic()
    _ = content.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    let flushing = monotonic()
    fsync(fd)
    close(fd)
    if round > 0 {
        writeTimes.append(flushing - writing)
        flushTimes.append(monotonic() - flushing)
    }
    if round > 0 {
        let began = monotonic()
        defer { keepTimes.append(monotonic() - began) }
        switch mode {
        case "link": try store.keep("document", in: folderFD, id: id, path: "document", origin: nil)
        case "copy":
            let current = open(folder + "/document", O_RDONLY)
            defer { close(current) }
            try store.keepCopy(of: current, id: id, path: "document", origin: nil)
        default: break
        }
    }
    let placing = monotonic()
    rename(staging, folder + "/document")
    fsync(folderFD)
    if round > 0 { placeTimes.append(monotonic() - placing) }
}

var times: [Double] = []
/// The part of each save spent keeping the version.
var keepTimes: [Double] = []
/// The parts spent writing the new content and flushing it.
var writeTimes: [Double] = []
var flushTimes: [Double] = []
/// The part spent renaming the new content into place and flushing the folder.
var placeTimes: [Double] = []
for round in 0...saves {
    let began = monotonic()
    try save(round)
    if round > 0 { times.append(monotonic() - began) }
}
let storeBytes = blocks(folder + "/.fileshare/versions")
times.sort()
keepTimes.sort()
placeTimes.sort()
writeTimes.sort()
flushTimes.sort()
let mean = times.reduce(0, +) / Double(times.count)
print(
    "{\"mode\":\"\(mode)\",\"bytes\":\(size),\"saves\":\(saves),\"ms_p50\":\(times[times.count / 2] * 1000),"
        + "\"ms_p99\":\(times[min(times.count - 1, times.count * 99 / 100)] * 1000),\"ms_mean\":\(mean * 1000),"
        + "\"keep_ms_p50\":\(keepTimes[keepTimes.count / 2] * 1000),"
        + "\"place_ms_p50\":\(placeTimes[placeTimes.count / 2] * 1000),"
        + "\"write_ms_p50\":\(writeTimes[writeTimes.count / 2] * 1000),"
        + "\"flush_ms_p50\":\(flushTimes[flushTimes.count / 2] * 1000),\"store_bytes_per_save\":\(storeBytes / Int64(saves)),\"versions\":\(store.versions(of: id).count),"
        + "\"reflink\":\(canReflink(folder))}")
