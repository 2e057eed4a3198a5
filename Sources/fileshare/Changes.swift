import ArgumentParser
import FileWatching
import Logging

/// `fileshare changes [DIR] --state FILE`: what changed since the state was saved.
struct Changes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what changed in DIR since the state in FILE was saved, then exit.",
        discussion: """
            Renamed and moved items keep their ids. The new state is saved for next time \
            (unless --keep-state). Without FILE yet, every item is printed as added.
            """
    )

    @Argument(help: "The folder.")
    var directory: String = "./Documents"

    @Option(help: ArgumentHelp("The saved state (written by watch --state or by this command).", valueName: "FILE"))
    var state: String

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Flag(help: "Include names starting with a dot.")
    var hidden = false

    @Option(name: .customLong("exclude"), help: ArgumentHelp("Leave matching names out, with their subtrees (repeatable).", valueName: "GLOB"))
    var excludes: [String] = []

    @Flag(help: "Report a new file with the same content as an existing one as duplicated.")
    var duplicates = false

    @Flag(name: .customLong("keep-state"), help: "Do not save the new state: the next run reports the same changes again.")
    var keepState = false

    func validate() throws {
        if excludes.contains("") { throw ValidationError("--exclude needs a glob, such as '*.tmp'") }
    }

    func run() async throws {
        StateFileOption.validate(state)
        var handler = StreamLogHandler.standardError(label: "fileshare.changes")
        handler.logLevel = .error
        let logger = Logger(label: "fileshare.changes") { _ in handler }
        let options = ObserverOptions(includesHidden: hidden, excludedNames: excludes, detectsDuplicateContent: duplicates)
        let changes: [Change]
        do {
            changes = try FileObserver.changesSinceSavedState(
                root: directory, stateFile: state, options: options, saving: !keepState, logger: logger)
        } catch where error.code == .io {
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
