import ArgumentParser

/// `fileshare`: observe, share and take in a folder's documents.
@main
struct Fileshare: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fileshare",
        abstract: "Watch a folder tree and report precisely what changed.",
        subcommands: [Serve.self, Watch.self, Changes.self, InboxCommand.self]
    )

    /// Parses and runs, with the exit codes of `cli.md`: bad usage is 2
    /// (not argument-parser's 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                // One line that names the problem and where to read more.
                var text = message(for: error)
                if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
                let line = text.split(separator: "\n").first.map(String.init) ?? text
                CommandOutput.fail("\(line) (see 'fileshare help')", code: 2)
            }
            exit(withError: error)
        }
    }
}
