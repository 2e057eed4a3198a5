import FileshareTestSupport
import Foundation
import Testing

/// Runs one of the headless-browser scripts in Tests/Browser against
/// `fileshare serve` and records its failure. The scripts exit 77 when
/// selenium, axe-selenium-python or Chromium is missing: nothing is recorded
/// then, except on CI, whose .ci/run installs them.
func runBrowserScript(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/\(name)").path
    // A turn among the browsers first, holding nothing else while waiting.
    try await StartLimit.browsers.run {
        try await MachineSettings.shared {
            let run = try CommandProcess(
                ["python3", script, "--binary", CommandProcess.binary], executable: "/usr/bin/env")
            let status = await run.exitStatus(timeout: .seconds(300))
            let output = (run.lines + [run.errorOutput]).joined(separator: "\n")
            try Requirement.require(
                status != 77,
                "the browser cannot run here (selenium, axe-selenium-python or Chromium is missing; .ci/run installs them): "
                    + (run.lines.last ?? output),
                sourceLocation: sourceLocation)
            #expect(
                status == 0, "\(name) exited with \(status) (-1: timed out after 5 minutes):\n\(output)",
                sourceLocation: sourceLocation)
        }
    }
}
