import FileshareTestSupport
import Foundation
import Testing

/// `fileshare --version` and `fileshare --help`: what the tool is, from the real binary.
@Suite("fileshare --version and --help")
struct OverviewCommandTests {
    @Test("--version prints the release and, built from source, that the commit is unknown, and exits 0")
    func version() async throws {
        let run = try CommandProcess(["--version"])
        #expect(await run.exitStatus() == 0)
        // Only Packaging/build-release names the commit; Packaging/test-package checks that one.
        #expect(run.lines == ["0.9.0 (unknown commit)"])
        #expect(run.errorOutput.isEmpty)
    }

    @Test("--help says what the tool does now and names every command; no link leads outside the repository")
    func overview() async throws {
        let run = try CommandProcess(["--help"])
        #expect(await run.exitStatus() == 0)
        let text = run.lines.joined(separator: "\n")
        // Help is wrapped to the terminal's width: compare words, not lines.
        let words = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("OVERVIEW: Share a folder over HTTP"))
        for phrase in ["web page", "JSON API", "WebDAV", "/api/openapi.json", "exactly once", "Documentation/cli.md"] {
            #expect(words.contains(phrase), "the overview does not mention \(phrase)")
        }
        for command in ["serve", "watch", "changes", "inbox"] {
            #expect(text.contains("\n  \(command) "), "the overview does not list \(command)")
        }
        #expect(!words.contains("Watch a folder tree and report precisely what changed."))
        #expect(!text.contains("shared/contracts") && !text.contains("../") && !text.contains("://"))
    }

    @Test("no command's help points outside the repository", arguments: ["serve", "watch", "changes", "inbox"])
    func commandHelp(command: String) async throws {
        let run = try CommandProcess(["help", command])
        #expect(await run.exitStatus() == 0)
        let text = run.lines.joined(separator: "\n")
        #expect(text.contains("USAGE: fileshare \(command)"))
        #expect(!text.contains("shared/contracts") && !text.contains("../") && !text.contains("://"))
    }
}
