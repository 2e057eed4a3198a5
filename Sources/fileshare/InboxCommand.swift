import ArgumentParser
import DocumentTypes
import FileWatching
import Inbox
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare inbox [DIR]`: takes in the documents that arrive in `DIR/Inbox`.
struct InboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inbox",
        abstract: "Take in the documents that arrive in DIR/Inbox, exactly once.",
        discussion: """
            Each complete file (or folder) in the Inbox is identified by its content first and its name second. \
            An accepted one is moved into DIR (or a folder per type) under a name that clashes with nothing, \
            and --exec runs with its final path; a refused one goes to the quarantine with a reason file \
            beside it. A journal in DIR/.fileshare makes every step survive a crash: the next start finishes \
            the work. Events are printed to stdout, one JSON object per line.
            """
    )

    @Argument(help: "The folder whose Inbox is taken in.")
    var directory: String = "./Documents"

    @Option(
        help: ArgumentHelp(
            "Accepted types: identifiers or file name extensions, comma-separated (public.image,pdf,epub).",
            valueName: "LIST"))
    var accept: String?

    @Option(
        help: ArgumentHelp(
            "Declared and accepted types from a configuration file (JSON, YAML or TOML).", valueName: "FILE"))
    var types: String?

    @Flag(
        help: ArgumentHelp(
            "Take in a document whose name lies about its content (a PDF named notes.txt) under the corrected name (notes.pdf) rather than quarantining it."
        ))
    var fixExtensions = false

    @Option(
        help: ArgumentHelp(
            "Run for each accepted document, with its final absolute path as the last argument (FILESHARE_REPEAT=1 when it is a repeat after a crash).",
            valueName: "CMD"))
    var exec: String?

    @Option(help: ArgumentHelp("The Inbox's name inside DIR.", valueName: "NAME"))
    var inbox: String = "Inbox"

    @Option(
        help: ArgumentHelp(
            "Where refused documents go, with a reason file beside each (relative to DIR, or absolute).",
            valueName: "PATH"))
    var quarantine: String = "Quarantine"

    @Option(
        help: ArgumentHelp(
            "Folders in the Inbox: 'package' (moved whole) or 'unpack' (each file on its own).", valueName: "MODE"))
    var folders: String = "package"

    @Flag(help: "Put accepted documents in a folder named after their type.")
    var folderPerType = false

    @Option(
        help: ArgumentHelp("Seconds a file must stay unchanged after its last writer closed it.", valueName: "SECONDS"))
    var settle: Double = 1

    @Flag(help: "Take in what is there now (waiting for files still being written), then exit.")
    var once = false

    func run() async throws {
        let logger = CommandOutput.startLogging("fileshare.inbox")
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            CommandOutput.fail("\(directory) is not a folder; give the folder whose Inbox to take in", code: 2)
        }
        guard let handling = InboxOptions.FolderHandling(rawValue: folders) else {
            CommandOutput.fail("--folders takes 'package' or 'unpack', not '\(folders)'", code: 2)
        }
        guard settle >= 0 && settle <= 3600 else {
            CommandOutput.fail("--settle must be between 0 and 3600 seconds", code: 2)
        }
        let accepted: AcceptedTypes
        do {
            accepted = try TypeOptions.acceptedTypes(typesFile: types, accept: accept) ?? .all()
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        let options = InboxOptions(
            inboxName: inbox, quarantine: quarantine, acceptedTypes: accepted,
            misleadingNames: fixExtensions ? .correct : .refuse, foldersPerType: folderPerType,
            folderHandling: handling, settleTime: .milliseconds(Int64(settle * 1000)))
        let command = exec
        let processor: InboxProcessor
        do {
            processor = try InboxProcessor(
                root: directory, options: options, logger: logger,
                report: { event in CommandOutput.write(event.jsonLine + "\n") },
                handler: { delivery in
                    guard let command else { return }
                    try await InboxCommand.run(command, path: delivery.path, isRepeat: delivery.isRepeat)
                })
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        if once {
            do {
                try await processor.processOnce()
            } catch {
                CommandOutput.fail("\(error)", code: 1)
            }
            return
        }
        let group = ServiceGroup(
            configuration: .init(services: [processor], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            CommandOutput.fail("the Inbox stopped: \(error)", code: 1)
        }
    }

    /// Runs `command` through the shell with `path` as its last argument; throws on a non-zero exit.
    static func run(_ command: String, path: String, isRepeat: Bool) async throws {
        let status: Int32 = await runBlocking { () -> Int32 in
            var environment = ProcessInfoLite.environment.filter { $0.key != "FILESHARE_REPEAT" }.map {
                "\($0.key)=\($0.value)"
            }
            if isRepeat { environment.append("FILESHARE_REPEAT=1") }
            let arguments = ["/bin/sh", "-c", command + " \"$1\"", "fileshare-inbox", path]
            var pid: pid_t = 0
            let cArguments = arguments.map { strdup($0) } + [nil]
            let cEnvironment = environment.map { strdup($0) } + [nil]
            defer {
                cArguments.forEach { free($0) }
                cEnvironment.forEach { free($0) }
            }
            let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, cArguments, cEnvironment)
            guard spawned == 0 else { return -1 }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return status
        }
        if status == -1 { throw CommandFailure(message: "cannot run /bin/sh") }
        if status & 0x7f != 0 { throw CommandFailure(message: "--exec was killed by signal \(status & 0x7f)") }
        let code = (status >> 8) & 0xff
        if code != 0 { throw CommandFailure(message: "--exec exited with status \(code)") }
    }

    struct CommandFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
