import FileWatching
public import Logging
import Subprocess
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Makes thumbnails with programs found at run time: the first page of a
/// PDF with `pdftoppm`, a video frame or an audio file's cover art with
/// `ffmpeg`. Each runs as a child process (swift-subprocess) reading the
/// file on its standard input (the server opened it, under the path rules),
/// writing a PNG to its standard output, with a time limit (killed after
/// it: CPU time, and an address-space limit, through `prlimit` where
/// installed; see ``Limits/time``), and at most
/// ``Limits/concurrent`` at once, so a hostile file costs a bounded share
/// of the machine and the server stays up.
public struct ExternalThumbnailer: Sendable {
    /// The bounds on each program run.
    public struct Limits: Sendable {
        /// How long one run may take before it is killed: in the program's
        /// own CPU time where `prlimit` is installed (the kernel stops it
        /// with `SIGXCPU`), with six times it on the wall clock for a run
        /// that waits rather than works; on the wall clock alone without
        /// `prlimit`. CPU time, so that a busy machine, which runs every
        /// program slowly, does not turn good files into icons.
        public var time: Duration
        /// The address space one run may use, in bytes.
        public var memoryBytes: Int
        /// The runs at once, at most.
        public var concurrent: Int
        /// The PNG's size, at most.
        public var outputBytes: Int

        public init(
            time: Duration = .seconds(10), memoryBytes: Int = 1 << 30, concurrent: Int = 2,
            outputBytes: Int = 4 << 20
        ) {
            self.time = time
            self.memoryBytes = memoryBytes
            self.concurrent = concurrent
            self.outputBytes = outputBytes
        }
    }

    /// The programs found, by kind.
    public let programs: [ThumbnailKind: String]
    /// `prlimit`, when installed.
    let prlimit: String?
    public let limits: Limits
    /// The thumbnail's longer side, in pixels.
    public let size: Int
    /// Where a program that cannot write to its standard output writes its
    /// image (`pdftoppm`), removed once read.
    public let scratchFolder: String
    let pool: RunPool
    let logger: Logger

    /// Finds the programs in `searchPath` (`PATH` by default).
    public init(
        searchPath: String? = nil, limits: Limits = Limits(), size: Int = 256, scratchFolder: String = "/tmp",
        logger: Logger = Logger(label: "fileshare.previews")
    ) {
        self.scratchFolder = scratchFolder
        let path = searchPath ?? (getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin")
        var programs: [ThumbnailKind: String] = [:]
        for kind in ThumbnailKind.allCases {
            if let found = ExternalThumbnailer.find(kind.program, in: path) { programs[kind] = found }
        }
        self.programs = programs
        self.prlimit = ExternalThumbnailer.find("prlimit", in: path)
        self.limits = limits
        self.size = size
        self.pool = RunPool(limit: max(1, limits.concurrent))
        self.logger = logger
    }

    /// A thumbnailer with these programs (a test's stand-ins, or another's found programs).
    public init(
        programs: [ThumbnailKind: String], limits: Limits = Limits(), size: Int = 256, scratchFolder: String = "/tmp",
        logger: Logger = Logger(label: "fileshare.previews")
    ) {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        self.programs = programs
        self.prlimit = ExternalThumbnailer.find("prlimit", in: path)
        self.limits = limits
        self.size = size
        self.scratchFolder = scratchFolder
        self.pool = RunPool(limit: max(1, limits.concurrent))
        self.logger = logger
    }

    /// The kinds this machine can make thumbnails of.
    public var kinds: [ThumbnailKind] { ThumbnailKind.allCases.filter { programs[$0] != nil } }

    /// A PNG thumbnail of the file open as `fd` (read from the start; the
    /// descriptor stays open and its offset is not relied on).
    /// - Parameter priority: A request's run goes before those made ahead of time.
    /// - Throws: ``ThumbnailError``.
    public func thumbnail(of fd: Int32, kind: ThumbnailKind, priority: ThumbnailPriority = .request)
        async throws(ThumbnailError) -> [UInt8]
    {
        guard let program = programs[kind] else {
            throw ThumbnailError(
                .programMissing, "\(kind.program) is not installed (Debian: apt-get install \(kind.package))")
        }
        switch kind {
        case .pdf:
            // pdftoppm writes its image to a file (`ROOT.png`), not to a pipe.
            var random = SystemRandomNumberGenerator()
            let root = scratchFolder + "/pdftoppm-\(random.next())"
            defer { unlink(root + ".png") }
            _ = try await run(
                program, ["-png", "-f", "1", "-l", "1", "-singlefile", "-scale-to", "\(size)", "/dev/stdin", root],
                input: fd, checkOutput: false, priority: priority)
            guard let image = try? AtomicFile.read(root + ".png"), image.count <= limits.outputBytes,
                image.starts(with: ExternalThumbnailer.pngSignature)
            else {
                throw ThumbnailError(.noImage, "\(kind.program) wrote no image")
            }
            return image
        case .video:
            // A second in (past a black first frame); a shorter video from its start.
            do {
                return try await run(program, ffmpegArguments(seek: "1"), input: fd, priority: priority)
            } catch  where error.reason == .noImage || error.reason == .failed {
                return try await run(program, ffmpegArguments(seek: nil), input: fd, priority: priority)
            }
        case .audio:
            return try await run(program, ffmpegArguments(seek: nil), input: fd, priority: priority)
        }
    }

    func ffmpegArguments(seek: String?) -> [String] {
        var arguments = ["-nostdin", "-v", "error"]
        if let seek { arguments += ["-ss", seek] }
        // The file through /dev/stdin: a regular file, so ffmpeg can seek in it.
        arguments += [
            "-i", "/dev/stdin", "-map", "0:v:0", "-frames:v", "1",
            "-vf", "scale=w='min(\(size),iw)':h='min(\(size),ih)':force_original_aspect_ratio=decrease",
            "-f", "image2pipe", "-c:v", "png", "-",
        ]
        return arguments
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47]

    /// Runs `program` with the file as its standard input; its output, which
    /// must be a PNG when `checkOutput`.
    func run(
        _ program: String, _ arguments: [String], input fd: Int32, checkOutput: Bool = true,
        priority: ThumbnailPriority = .request
    ) async throws(ThumbnailError) -> [UInt8] {
        await pool.acquire(priority)
        defer { Task { await pool.release() } }
        // Each run gets its own descriptor of the file, at offset 0.
        let own = open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC)
        guard own >= 0 else { throw ThumbnailError(.failed, "cannot reopen the file for \(program)") }
        let executable: String
        var all: [String]
        let wallTime: Duration
        if let prlimit {
            executable = prlimit
            // SIGXCPU at the limit; SIGKILL a second later for a program that ignores it.
            let cpu = ExternalThumbnailer.wholeSeconds(limits.time)
            all = ["--as=\(limits.memoryBytes)", "--cpu=\(cpu):\(cpu + 1)", "--", program] + arguments
            wallTime = limits.time * clockTimesCPULimit
        } else {
            executable = program
            all = arguments
            wallTime = limits.time
        }
        var options = PlatformOptions()
        options.teardownSequence = []  // killed at once when the time is up
        let limit = limits.outputBytes
        let configuration = Configuration(
            executable: .path(FilePath(executable)), arguments: Arguments(all), environment: .inherit,
            platformOptions: options)
        let outcome: Result<ExecutionRecord, any Error> = await withTaskGroup(
            of: Result<ExecutionRecord, any Error>?.self
        ) { group in
            group.addTask {
                do {
                    let result = try await Subprocess.run(
                        configuration, input: .fileDescriptor(.init(rawValue: own), closeAfterSpawningProcess: true),
                        output: .bytes(limit: limit), error: .string(limit: 4096))
                    return .success(
                        ExecutionRecord(
                            status: result.terminationStatus.isSuccess,
                            outOfTime: result.terminationStatus == .signaled(SIGXCPU), output: result.standardOutput,
                            error: result.standardError))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: wallTime)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(ThumbnailError(.tookTooLong, "\(program) took longer than \(wallTime)"))
        }
        switch outcome {
        case .failure(let error as ThumbnailError):
            logger.notice("thumbnail program timed out", metadata: ["program": "\(program)"])
            throw error
        case .failure(let error):
            throw ThumbnailError(.failed, "\(program) could not run: \(error)")
        case .success(let record) where record.outOfTime:
            logger.notice("thumbnail program used up its CPU time", metadata: ["program": "\(program)"])
            throw ThumbnailError(.timedOut, "\(program) used more than \(limits.time) of CPU time")
        case .success(let record):
            guard record.status else {
                throw ThumbnailError(.failed, "\(program) failed: \(record.error.prefix(200))")
            }
            guard !checkOutput || record.output.starts(with: ExternalThumbnailer.pngSignature) else {
                throw ThumbnailError(.noImage, "\(program) wrote no image")
            }
            return record.output
        }
    }

    struct ExecutionRecord: Sendable {
        var status: Bool
        /// Stopped by the kernel at its CPU time limit.
        var outOfTime: Bool
        var output: [UInt8]
        var error: String
    }

    /// `duration` in whole seconds, rounded up (at least 1): `RLIMIT_CPU` counts seconds.
    static func wholeSeconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds + (attoseconds > 0 ? 1 : 0))
    }

    /// The executable `name` in the colon-separated `path`, if any.
    static func find(_ name: String, in path: String) -> String? {
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = folder + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// At most `limit` runs at once; the others wait their turn in order, a
/// request's before any made ahead of time (``ThumbnailPriority``), so a
/// folder's thumbnails being made in the background never keep a person
/// waiting longer than one run.
actor RunPool {
    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var waitingInBackground: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = limit }

    func acquire(_ priority: ThumbnailPriority = .request) async {
        if running < limit {
            running += 1
            return
        }
        switch priority {
        case .request: await withCheckedContinuation { waiting.append($0) }
        case .background: await withCheckedContinuation { waitingInBackground.append($0) }
        }
    }

    func release() {
        if !waiting.isEmpty {
            waiting.removeFirst().resume()
        } else if !waitingInBackground.isEmpty {
            waitingInBackground.removeFirst().resume()
        } else {
            running -= 1
        }
    }
}

/// Whose thumbnail it is: a request's goes before any made ahead of time.
public enum ThumbnailPriority: Sendable, Hashable {
    /// Someone asked for it.
    case request
    /// Made ahead, for a folder being viewed.
    case background
}
