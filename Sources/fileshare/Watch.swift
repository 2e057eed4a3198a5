import ArgumentParser
import FileWatching
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare watch [DIR]`: prints the folder's changes, as `events.md` says.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch DIR recursively and print its changes.",
        discussion: """
            Prints one line per change (with --json, one JSON object per line, as in Documentation/events.md). \
            Stops cleanly on SIGINT or SIGTERM; exits 1 when DIR itself is removed.
            """
    )

    @Argument(help: "The folder to watch.")
    var directory: String = "./Documents"

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Flag(help: "Report every existing item as added before scan-completed.")
    var initial = false

    @Flag(help: "Include names starting with a dot.")
    var hidden = false

    @Option(
        name: .customLong("exclude"),
        help: ArgumentHelp("Leave matching names out, with their subtrees (repeatable).", valueName: "GLOB"))
    var excludes: [String] = []

    @Option(
        help: ArgumentHelp("Seconds a file must stay unchanged after its last writer closed it.", valueName: "SECONDS"))
    var settle: Double = 1

    @Option(help: ArgumentHelp("The longest time changes are held back to be coalesced.", valueName: "SECONDS"))
    var latency: Double = 0.05

    @Option(help: ArgumentHelp("Watch by polling at this interval instead of kernel events.", valueName: "SECONDS"))
    var poll: Double?

    @Option(
        help: ArgumentHelp(
            "Keep the observer's state in FILE; on start, what changed while it was not running is reported first.",
            valueName: "FILE"))
    var state: String?

    @Flag(
        name: .customLong("id-attribute"),
        help:
            "Keep each item's id in a user.fileshare.id extended attribute, so it survives copies between file systems (writes to your files)."
    )
    var idAttribute = false

    @Flag(
        help:
            "Report a new file with the same content as an existing one as duplicated (new files are then reported once complete)."
    )
    var duplicates = false

    @Flag(name: .shortAndLong, help: "Log what the observer does to stderr.")
    var verbose = false

    func validate() throws {
        if state != nil && initial {
            throw ValidationError("--state cannot be combined with --initial; drop one of them")
        }
        if !(settle >= 0 && settle.isFinite) {
            throw ValidationError("--settle must be a number of seconds, 0 or more")
        }
        if !(latency >= 0 && latency.isFinite) {
            throw ValidationError("--latency must be a number of seconds, 0 or more")
        }
        if let poll, !(poll > 0 && poll.isFinite) {
            throw ValidationError("--poll must be a number of seconds above 0")
        }
        if excludes.contains("") { throw ValidationError("--exclude needs a glob, such as '*.tmp'") }
    }

    func run() async throws {
        if let state { StateFileOption.validate(state) }
        let logger = CommandOutput.startLogging("fileshare.watch", level: verbose ? .debug : .warning)
        let options = ObserverOptions(
            includesHidden: hidden,
            excludedNames: excludes,
            settleTime: .seconds(settle),
            latency: .seconds(latency),
            pollingInterval: poll.map { .seconds($0) },
            reportsInitialItems: initial,
            storesIdentityAttribute: idAttribute,
            stateFile: state,
            detectsDuplicateContent: duplicates
        )
        let observer: FileObserver
        do {
            observer = try FileObserver(root: directory, options: options, logger: logger)
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        let changes = observer.changes()
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: observer, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        let json = self.json
        // Long scans on a terminal show progress on stderr; on a pipe it stays quiet.
        let progressLine = ScanProgressLine()
        let progress = isatty(2) == 1 ? Task { await progressLine.show(for: observer) } : nil
        defer { progress?.cancel() }
        // The printer drains the stream, which ends (after its last batch)
        // when the observer stops.
        async let printed: Void = ChangePrinter.print(changes, json: json, before: { progressLine.finish() })
        do {
            try await group.run()
            await printed
        } catch let error as FileWatchingError where error.code == .rootRemoved {
            await printed
            CommandOutput.fail(error.message, code: 1)
        } catch {
            await printed
            CommandOutput.fail("\(error)", code: 1)
        }
    }
}

/// Prints each change as it arrives, one write per batch.
enum ChangePrinter {
    static func print(_ changes: AsyncStream<[Change]>, json: Bool, before: () -> Void) async {
        for await batch in changes {
            before()
            var text = ""
            for change in batch {
                text += json ? change.jsonLine : change.humanLine
                text += "\n"
            }
            CommandOutput.write(text)
        }
    }
}

/// Checks up front that a state file can be written where it is asked for.
enum StateFileOption {
    static func validate(_ path: String) {
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        var info = stat()
        if stat(folder.isEmpty ? "/" : folder, &info) != 0 || info.st_mode & S_IFMT != S_IFDIR {
            CommandOutput.fail(
                "cannot keep the state in \(path): the folder \(folder) does not exist; create it first", code: 2)
        }
        if access(folder.isEmpty ? "/" : folder, W_OK) != 0 {
            CommandOutput.fail("cannot keep the state in \(path): the folder \(folder) is not writable", code: 2)
        }
        if stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
            CommandOutput.fail("cannot keep the state in \(path): it is a folder; give a file name", code: 2)
        }
    }
}

/// "scanning DIR: 48000 items" on stderr, updated in place while the initial
/// scan runs, and cleared before the first change is printed.
final class ScanProgressLine: Sendable {
    private let state = Mutex((shown: false, finished: false))

    func show(for observer: FileObserver) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let (items, complete) = observer.scanProgress
            if complete { break }
            state.withLock { state in
                guard !state.finished else { return }
                CommandOutput.writeError("\rscanning \(observer.root): \(items) items\u{1B}[K")
                state.shown = true
            }
        }
        finish()
    }

    /// Clears the line, once; nothing is shown after.
    func finish() {
        state.withLock { state in
            if state.shown && !state.finished { CommandOutput.writeError("\r\u{1B}[K") }
            state.finished = true
        }
    }
}

enum CommandOutput {
    /// What every long-running command does first: a closed pipe is an
    /// error to report, not a signal that kills; diagnostics go to stderr.
    static func startLogging(_ label: String, level: Logger.Level = .warning) -> Logger {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, level: level) }
        return Logger(label: label)
    }

    /// Writes all of `text` to standard output at once (unbuffered, so
    /// every line is out before the call returns, also on a pipe).
    static func write(_ text: String) {
        writeAll(text, to: 1)
    }

    static func writeError(_ text: String) {
        writeAll(text, to: 2)
    }

    static func fail(_ message: String, code: Int32) -> Never {
        writeAll("fileshare: \(message)\n", to: 2)
        exit(code)
    }

    private static func writeAll(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE { exit(0) }
                    return
                }
                offset += written
            }
        }
    }
}

extension Change {
    /// A short line for a person.
    var humanLine: String {
        switch self {
        case .scanStarted(let root): "scanning \(root)"
        case .scanCompleted(_, let items, let elapsed): "watching \(items) items (scanned in \(elapsed) ms)"
        case .added(let item): "added     \(item.path)\(item.detail)"
        case .modified(let item): "modified  \(item.path)\(item.detail)"
        case .finished(let path, _, let size): "finished  \(path) (\(size) bytes)"
        case .removed(let path, _, _): "removed   \(path)"
        case .renamed(let from, let to, _, _): "renamed   \(from) -> \(to)"
        case .moved(let from, let to, _, _): "moved     \(from) -> \(to)"
        case .duplicated(let item, let source): "duplicated \(item.path) from \(source)"
        case .rescanned(let path, let reason): "rescanned \(path.isRoot ? "." : path.description) (\(reason))"
        case .degraded(let path, let reason, let hint):
            "degraded  \(path.isRoot ? "." : path.description) (\(reason)): \(hint)"
        case .error(let message, _): "error     \(message)"
        case .rootRemoved(let root): "root removed: \(root)"
        }
    }
}

extension ChangedItem {
    fileprivate var detail: String {
        switch kind {
        case .file: " (\(size) bytes\(isWriting ? ", writing" : ""))"
        case .directory: "/"
        case .symlink: " (symlink)"
        case .other: " (other)"
        }
    }
}
