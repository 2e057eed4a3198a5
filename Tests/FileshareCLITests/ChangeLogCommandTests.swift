import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The change log end to end: `fileshare serve` keeps it, `fileshare changes
/// --since` reads it (beside the server and after it), kills leave it whole,
/// and hundreds of event streams are served fairly.
@Suite("the change log of fileshare serve")
struct ChangeLogCommandTests {
    static func objects(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    static func serve(_ dir: String) async throws -> (CommandProcess, String) {
        let serve = try CommandProcess(["serve", dir, "--port", "0", "--no-auth", "--print-changes"])
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        return (serve, url)
    }

    @Test(
        "changes --since reads the server's log beside it and after it: records, pages, human lines; bad cursors exit 1"
    )
    func changesSince() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let (serve, url) = try await Self.serve(dir.path)
            #expect(try await curl(["-T", "/etc/hostname", url + "api/files/a.txt"]).0 == 201)
            #expect(try await curl(["-T", "/etc/hostname", url + "api/files/b.txt"]).0 == 201)
            try FileManager.default.moveItem(atPath: dir.path + "/a.txt", toPath: dir.path + "/c.txt")
            #expect(await waitFor { serve.errorOutput.contains(#""type":"renamed""#) })
            // Beside the running server.
            let beside = try CommandProcess(["changes", dir.path, "--since", "0", "--json"])
            #expect(await beside.exitStatus() == 0)
            var records = Self.objects(beside.lines)
            #expect(
                records.count >= 3 && records.map { $0["seq"] as? Int } == Array(1...records.count).map { $0 },
                "\(beside.lines)")
            #expect((records.first?["origin"] as? [String: Any])?["method"] as? String == "PUT")
            #expect(
                records.contains {
                    $0["type"] as? String == "renamed" && $0["to"] as? String == "c.txt" && $0["origin"] == nil
                })
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            // After it, the same; paged.
            let after = try CommandProcess(["changes", dir.path, "--since", "1", "--limit", "1", "--json"])
            #expect(await after.exitStatus() == 0)
            records = Self.objects(after.lines)
            #expect(
                records.count == 1 && records.first?["seq"] as? Int == 2 && records.first?["path"] as? String == "b.txt"
            )
            // For a person.
            let human = try CommandProcess(["changes", dir.path, "--since", "0"])
            #expect(await human.exitStatus() == 0)
            let first = human.lines.first ?? ""
            #expect(
                first.hasPrefix("1  20") && first.contains("Z  added     a.txt (")
                    && first.contains("(api PUT from 127.0.0.1:"), "\(first)")
            #expect(human.lines.contains { $0.contains("renamed   a.txt -> c.txt") })
            // A cursor the log does not have.
            let ahead = try CommandProcess(["changes", dir.path, "--since", "999", "--json"])
            #expect(await ahead.exitStatus() == 1)
            #expect(ahead.lines.first?.contains(#""resync":true"#) == true)
            #expect(
                ahead.errorOutput.contains("newer than the newest")
                    && ahead.errorOutput.contains("list the folder again"))
        }
    }

    @Test(
        "bad use of changes --since: exit 2 with one line, nothing created",
        arguments: [
            (["--since", "1", "--state", "S"], "cannot be combined"),
            ([String](), "give --state FILE"),
            (["--since", "x"], "since"),
            (["--since", "0", "--limit", "0"], "--limit"),
            (["--since", "0", "--hidden"], "go with --state"),
        ])
    func badUse(arguments: [String], message: String) async throws {
        let dir = try TemporaryFolder()
        let run = try CommandProcess(["changes", dir.path] + arguments)
        #expect(await run.exitStatus() == 2)
        #expect(run.errorOutput.contains(message), "\(run.errorOutput)")
        #expect(run.lines.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test("a folder no server has shared: exit 2, it says so, nothing created")
    func noLog() async throws {
        let dir = try TemporaryFolder()
        let run = try CommandProcess(["changes", dir.path, "--since", "0"])
        #expect(await run.exitStatus() == 2)
        #expect(run.errorOutput.contains("there is no change log") && run.errorOutput.contains("fileshare serve"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
    }

    @Test(
        "killed at random moments while files arrive: every restart opens the log, numbers stay gapless, every file is logged"
    )
    func kills() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let rounds = Int(ProcessInfo.processInfo.environment["FILESHARE_LOG_KILLS"] ?? "") ?? 8
            var generator = SystemRandomNumberGenerator()
            var made = 0
            for _ in 0..<rounds {
                let (serve, _) = try await Self.serve(dir.path)
                // Files keep arriving, then the server dies mid-stream.
                let count = Int.random(in: 20...80, using: &generator)
                for _ in 0..<count {
                    try "x".write(toFile: dir.path + "/f\(made).txt", atomically: false, encoding: .utf8)
                    made += 1
                    if Int.random(in: 0..<count, using: &generator) == 0 { serve.send(SIGKILL) }
                }
                serve.send(SIGKILL)
                _ = await serve.exitStatus()
                // Some arrive while no server runs.
                for _ in 0..<5 {
                    try "y".write(toFile: dir.path + "/f\(made).txt", atomically: false, encoding: .utf8)
                    made += 1
                }
            }
            let (serve, _) = try await Self.serve(dir.path)
            #expect(await waitFor(timeout: .seconds(30)) { serve.errorOutput.contains("f\(made - 1).txt") })
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            let read = try CommandProcess(["changes", dir.path, "--since", "0", "--json"])
            #expect(await read.exitStatus() == 0)
            let records = Self.objects(read.lines)
            #expect(records.count == read.lines.count, "every line is one JSON record")
            #expect(records.map { $0["seq"] as? Int } == Array(1...max(1, records.count)).map { $0 })
            let logged = Set(records.compactMap { $0["type"] as? String == "added" ? $0["path"] as? String : nil })
            let missing = (0..<made).map { "f\($0).txt" }.filter { !logged.contains($0) }
            #expect(missing.isEmpty, "\(missing.count) of \(made) files never logged as added: \(missing.prefix(10))")
        }
    }

    static let loadScript = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Load/sse_fairness.py").path

    @Test("200 event streams while 10,000 files arrive: every client gets every record in order")
    func fairDelivery() async throws {
        try await MachineSettings.alone {
            let dir = try TemporaryFolder()
            let clients = ProcessInfo.processInfo.environment["FILESHARE_SSE_CLIENTS"] ?? "200"
            let files = ProcessInfo.processInfo.environment["FILESHARE_SSE_FILES"] ?? "10000"
            let (serve, url) = try await Self.serve(dir.path)
            let load = try CommandProcess(
                [
                    "python3", Self.loadScript, "--url", String(url.dropLast()), "--folder", dir.path,
                    "--clients", clients, "--files", files,
                ],
                executable: "/usr/bin/env")
            #expect(await load.exitStatus(timeout: .seconds(300)) == 0, "\(load.errorOutput)")
            let summary = try #require(Self.objects(load.lines).last, "\(load.lines) \(load.errorOutput)")
            print("sse fairness:", load.lines.last ?? "")
            let records = summary["records"] as? Int ?? 0
            #expect(records >= 2 * (Int(files) ?? 0), "added and finished for every file: \(summary)")
            #expect(summary["complete_clients"] as? Int == Int(clients), "\(summary)")
            #expect(summary["verified_in_order"] as? Bool == true, "\(summary)")
            #expect((summary["errors"] as? [Any])?.isEmpty == true, "\(summary)")
            // How long a stream may wait while others are served is a speed
            // figure: Benchmarks/changelog-run --only fanout measures it.
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }
}
