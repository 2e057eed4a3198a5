import FileshareTestSupport
import Foundation
import Testing

/// The JSON API's OpenAPI document is the truth: schemathesis (from PyPI)
/// reads `/api/openapi.json` of a running `fileshare serve` and sends what
/// it derives from it — the document's examples, requests covering each
/// parameter's edges, random ones, and sequences that feed one answer into
/// the next request — and checks every answer against the document: no
/// server error, only documented statuses, types, headers and bodies,
/// invalid requests refused, authentication enforced, 405 for undeclared
/// methods. Every check but `positive_data_acceptance` (a valid `Range`
/// past the end is rightly 416). Skipped without schemathesis, except on
/// CI, whose .ci/run installs it.
@Suite("OpenAPI conformance")
struct OpenAPIConformanceTests {
    static let user = "fuzzer"
    static let password = "0penAPI-pw"
    /// Test cases per operation and phase: about 700 requests, a few minutes on two loaded cores.
    static let examplesPerOperation = 20
    /// Fixed, so a run is repeatable: a failure found once is found again.
    static let seed = 1

    /// What the run is told beyond its command line, and why.
    static let configuration = """
        [generation]
        # An HTTP recipient ignores header fields it does not know (RFC 9110
        # section 5.1): a request with a made-up header is not invalid, so
        # none is sent as if it were (this also leaves out made-up query
        # parameters and JSON members, which the router tests cover).
        allow-extra-parameters = false

        [checks.not_a_server_error]
        # 507 is the documented answer when an announced size does not fit on
        # the disk (RFC 4918 section 11.5): the server is well, the disk is full.
        expected-statuses = ["2xx", "3xx", "4xx", "507"]

        """

    @Test("schemathesis: examples, coverage, fuzzing and stateful phases find no failure, with credentials")
    func schemathesis() async throws {
        try ExternalTool.schemathesis.require()
        try await MachineSettings.shared {
            let folder = try TemporaryFolder()
            let root = folder.path + "/share"
            try FileManager.default.createDirectory(atPath: root + "/docs", withIntermediateDirectories: true)
            try folder.write("hello\n", to: "share/docs/a.txt")
            try folder.write("# Notes\n", to: "share/notes.md")
            try folder.write(TestJPEG.bytes(thumbnail: nil, padding: 64), to: "share/photo.jpg")
            let work = folder.path + "/work"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            // Its cases with wrong or no credentials are failed sign-ins, which
            // the server counts per address: past 5 it would rightly tell this
            // one client to wait (429), correct credentials too, and the rest
            // of the run would test only that. The throttle has tests of its
            // own (AccountsTests "slowing failed sign-ins", ServeConfigurationTests);
            // here it allows all.
            let serve = try CommandProcess(
                ["serve", root, "--port", "0", "--user", Self.user, "--password", Self.password],
                environment: ["FILESHARE_SIGN_IN_FREE_FAILURES": "1000000"])
            let started = await serve.waitForLine { $0.hasPrefix("Serving ") }
            try #require(started, "fileshare serve did not start: \(serve.errorOutput)")
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            try Self.configuration.write(toFile: work + "/schemathesis.toml", atomically: false, encoding: .utf8)
            let arguments = [
                "--config-file", work + "/schemathesis.toml", "run", url + "api/openapi.json", "--phases",
                "examples,coverage,fuzzing,stateful", "--checks", "all",
                "--exclude-checks", "positive_data_acceptance", "--auth", Self.user + ":" + Self.password,
                "--max-examples", String(Self.examplesPerOperation), "--seed", String(Self.seed),
                "--generation-database", "none", "--workers", "1", "--no-color",
            ]
            // In its own folder: schemathesis may leave reports and caches where it runs.
            let run = try CommandProcess(
                arguments, in: work, executable: ExternalTool.schemathesis.path, environment: ["NO_COLOR": "1"],
                input: .text(""))
            let status = await run.exitStatus(timeout: .seconds(900))
            let output = run.lines.joined(separator: "\n") + "\n" + run.errorOutput
            let summary = run.lines.last { $0.contains(" generated, ") } ?? "(no summary)"
            #expect(status == 0, "schemathesis exited with \(status) (-1: timed out):\n\(output.suffix(20_000))")
            // It ran: cases were generated and every one passed.
            let counts = summary.firstMatch(of: #/(\d+) generated, (\d+) passed/#)
            #expect(
                counts.map { Int($0.1) ?? 0 > 100 && $0.1 == $0.2 } == true,
                "\(summary)\n\(output.suffix(5_000))")
            serve.send(SIGTERM)
            #expect(
                await serve.exitStatus(timeout: .seconds(30)) == 0,
                "the server survived: \(serve.errorOutput.suffix(2_000))")
        }
    }
}
