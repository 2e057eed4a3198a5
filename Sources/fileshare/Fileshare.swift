import ArgumentParser
import CFileshareShim

/// `fileshare`: observe, share and take in a folder's documents.
@main
struct Fileshare: AsyncParsableCommand {
    /// The release this source is.
    static let release = "0.9.0"

    /// What `fileshare --version` prints: the release and the commit it was
    /// built from, which only a release build knows (a build from source
    /// says so rather than guess).
    static let version: String = {
        guard let commit = cfs_build_commit() else { return "\(release) (unknown commit)" }
        return "\(release) (commit \(String(cString: commit)))"
    }()

    static let configuration = CommandConfiguration(
        commandName: "fileshare",
        abstract: "Share a folder over HTTP, watch what changes in it, and take in the documents that arrive.",
        discussion: """
            'serve' shares DIR with people and their tools: a web page (upload with resume, download, \
            rename, move, delete, previews, live updates), a JSON API (its OpenAPI document at \
            /api/openapi.json) and WebDAV at /dav/, with uploads limited to the document types you \
            accept. 'watch' and 'changes' report precisely what changed (added and finished, modified, \
            removed, renamed, moved, duplicated) with stable ids. 'inbox' takes in the documents that \
            arrive in DIR/Inbox exactly once. DIR is ./Documents unless given. Output formats and exit \
            codes: Documentation/cli.md, events.md and http-api.md in the source repository.
            """,
        version: version,
        subcommands: [
            Serve.self, Watch.self, Changes.self, InboxCommand.self, Users.self, DatabaseCommand.self,
            AuditCommand.self,
        ]
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
                // A mistyped command: name the one meant, as argument-parser does for options.
                if let typed = CommandLine.arguments.dropFirst().first, !typed.hasPrefix("-"),
                    let meant = closestCommand(to: typed)
                {
                    CommandOutput.fail("'\(typed)' is not a fileshare command; did you mean '\(meant)'?", code: 2)
                }
                // One line that names the problem and where to read more.
                var text = message(for: error)
                if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
                let line = text.split(separator: "\n").first.map(String.init) ?? text
                CommandOutput.fail("\(line) (see 'fileshare help')", code: 2)
            }
            exit(withError: error)
        }
    }

    /// The command `typed` most likely meant: one whose name is within two
    /// edits of it (and not `typed` itself); `nil` when none is that close.
    static func closestCommand(to typed: String) -> String? {
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(typed) else { return nil }
        let best = names.map { ($0, editDistance(Array(typed.lowercased()), Array($0))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= min(2, max(1, typed.count / 2)) else { return nil }
        return best.0
    }

    /// The Levenshtein distance of two words: the fewest insertions,
    /// deletions and substitutions that turn one into the other.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
