import ArgumentParser
import ChangeLog
import FileWatching
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare changes [DIR] --state FILE`: what changed since the state was
/// saved; `fileshare changes [DIR] --since SEQ`: the server's change log after SEQ.
struct Changes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Print what changed in DIR since the state in FILE was saved, or since change SEQ of the server's log, then exit.",
        discussion: """
            With --state: renamed and moved items keep their ids. The new state is saved for next time \
            (unless --keep-state). Without FILE yet, every item is printed as added.

            With --since: the numbered records that 'fileshare serve DIR' keeps of every change \
            (also while it runs), after SEQ (0: from the oldest kept), each the event object with \
            "seq", "time" and, for changes made through the server, "origin". When SEQ is older than \
            the log keeps, it says so (with --json, as {"resync":true,"oldest":N}) and exits 1: \
            list the folder again and go on from the newest number.
            """
    )

    @Argument(help: "The folder.")
    var directory: String = "./Documents"

    @Option(help: ArgumentHelp("The saved state (written by watch --state or by this command).", valueName: "FILE"))
    var state: String?

    @Option(
        help: ArgumentHelp(
            "Print the server's change log after this number (0: from the oldest kept).", valueName: "SEQ"))
    var since: UInt64?

    @Option(help: ArgumentHelp("With --since: print at most this many records.", valueName: "N"))
    var limit: Int?

    /// With `--since`: where the server kept its log.
    @OptionGroup var stateFolder: StateFolderOption

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Flag(help: "Include names starting with a dot.")
    var hidden = false

    @Option(
        name: .customLong("exclude"),
        help: ArgumentHelp("Leave matching names out, with their subtrees (repeatable).", valueName: "GLOB"))
    var excludes: [String] = []

    @Flag(help: "Report a new file with the same content as an existing one as duplicated.")
    var duplicates = false

    @Flag(
        name: .customLong("keep-state"), help: "Do not save the new state: the next run reports the same changes again."
    )
    var keepState = false

    func validate() throws {
        if excludes.contains("") { throw ValidationError("--exclude needs a glob, such as '*.tmp'") }
        switch (state, since) {
        case (nil, nil):
            throw ValidationError(
                "give --state FILE (changes since a saved state) or --since SEQ (the server's change log)")
        case (.some, .some): throw ValidationError("--state and --since cannot be combined; give one of them")
        case (nil, .some):
            if hidden || duplicates || keepState || !excludes.isEmpty {
                throw ValidationError("--hidden, --exclude, --duplicates and --keep-state go with --state, not --since")
            }
        case (.some, nil):
            if limit != nil { throw ValidationError("--limit goes with --since") }
        }
        if let limit, limit < 1 { throw ValidationError("--limit takes a number of records, 1 or more") }
    }

    func run() async throws {
        guard let state else { return printLog(after: since ?? 0) }
        StateFileOption.validate(state)
        var handler = StreamLogHandler.standardError(label: "fileshare.changes")
        handler.logLevel = .error
        let logger = Logger(label: "fileshare.changes") { _ in handler }
        let options = ObserverOptions(
            includesHidden: hidden, excludedNames: excludes, detectsDuplicateContent: duplicates)
        let changes: [Change]
        do {
            changes = try FileObserver.changesSinceSavedState(
                root: directory, stateFile: state, options: options, saving: !keepState, logger: logger)
        } catch  where error.code == .io {
            CommandOutput.fail(error.message, code: 1)
        } catch {
            CommandOutput.fail(error.message, code: 2)
        }
        var text = ""
        for change in changes {
            switch change {
            case .scanStarted, .scanCompleted: continue
            case .error(let message, _): CommandOutput.writeError("fileshare: \(message)\n")
            default: break
            }
            text += (json ? change.jsonLine : change.humanLine) + "\n"
        }
        CommandOutput.write(text)
    }
}

extension Changes {
    /// Prints the records of the server's change log after `cursor`.
    func printLog(after cursor: UInt64) {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            CommandOutput.fail("\(directory) is not a folder; give the folder 'fileshare serve' shares", code: 2)
        }
        var handler = StreamLogHandler.standardError(label: "fileshare.changes")
        handler.logLevel = .error
        let logger = Logger(label: "fileshare.changes") { _ in handler }
        let log: FileChangeLog
        do {
            log = try FileChangeLog(
                folder: FileChangeLog.folder(forPrivateFolder: stateFolder.folder(sharing: directory)), mode: .reading,
                logger: logger)
        } catch  where error.code == .notFound {
            CommandOutput.fail(error.message, code: 2)
        } catch {
            CommandOutput.fail(error.message, code: 1)
        }
        var cursor = cursor
        var remaining = limit ?? Int.max
        while remaining > 0 {
            let page: ChangeLogPage
            do {
                page = try log.readNow(after: cursor, limit: min(remaining, 4096))
            } catch {
                CommandOutput.fail(error.message, code: 1)
            }
            switch page {
            case .expired(let oldest, let latest):
                if json {
                    CommandOutput.write(
                        "{\"error\":\"the change log no longer holds the changes after \(cursor)\",\"resync\":true,\"oldest\":\(oldest)}\n"
                    )
                }
                let reason =
                    cursor > latest
                    ? "change \(cursor) is newer than the newest in the log (\(latest)): the log was reset"
                    : "the log keeps changes from \(oldest) on; those after \(cursor) and before it are gone"
                CommandOutput.fail("\(reason); list the folder again and go on from \(latest)", code: 1)
            case .records(let records, let next):
                if records.isEmpty { return }
                var text = ""
                for record in records { text += (json ? record.jsonLine : record.humanLine) + "\n" }
                CommandOutput.write(text)
                cursor = next
                remaining -= records.count
            }
        }
    }
}

extension ChangeRecord {
    /// One line for a person: number, time, the change as `watch` prints it,
    /// and who made it: `12  2026-11-24T02:30:00.123Z  added     a.txt (3 bytes)  (api PUT by alice from 127.0.0.1:50412)`.
    var humanLine: String {
        var time: [UInt8] = []
        CivilTime(nanoseconds: self.time).writeRFC3339(into: &time, fractionDigits: 3)
        var line = "\(seq)  \(String(decoding: time, as: UTF8.self))  " + (change?.humanLine ?? event)
        if let origin {
            line += "  (\(origin.face) \(origin.method)\(origin.user.map { " by \($0)" } ?? "") from \(origin.client))"
        }
        return line
    }
}
