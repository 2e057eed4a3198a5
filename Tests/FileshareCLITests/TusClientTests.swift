import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// tus 1.0 with a real client: Tests/Clients/tus_client.py drives tuspy (PyPI)
/// against `fileshare serve` — interrupt, resume from the server's offset
/// with a new client, finish, a wrong offset, termination. It exits 77 when
/// tuspy is missing: the test is skipped then, except on CI, whose .ci/run
/// installs it.
@Suite("tus clients")
struct TusClientTests {
    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Clients/tus_client.py").path

    @Test("tuspy: interrupted, resumed by a new client, finished byte for byte; 409 for a wrong offset; terminated")
    func tuspy() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let serve = try CommandProcess([
                "serve", dir.path, "--port", "0", "--user", "tus", "--password", "resume", "--print-changes",
            ])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            let run = try CommandProcess(
                [
                    "python3", Self.script, "--url", url, "--folder", dir.path, "--user", "tus", "--password", "resume",
                ],
                executable: "/usr/bin/env")
            let status = await run.exitStatus(timeout: .seconds(120))
            let output = (run.lines + [run.errorOutput]).joined(separator: "\n")
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            try Requirement.require(
                status != 77, "tuspy is missing (PyPI package tuspy; .ci/run installs it): \(output)")
            #expect(status == 0, "tus_client.py exited with \(status) (-1: timed out):\n\(output)")
            #expect(run.lines.last == "passed", "\(output)")
            let added = serve.errorOutput.split(whereSeparator: \.isNewline).filter {
                $0.contains(#""path":"Uploads/tus ünïcode.bin""#) && $0.contains(#""face":"tus""#)
            }
            #expect(!added.isEmpty, "the change carries the tus origin:\n\(serve.errorOutput)")
        }
    }
}
