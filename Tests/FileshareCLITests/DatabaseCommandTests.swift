import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare db check` and `fileshare serve --database`, end to end against
/// a throwaway PostgreSQL.
@Suite("the shared database from the command line")
struct DatabaseCommandTests {
    static func serve(_ dir: String, _ extra: [String], environment: [String: String] = [:]) async throws
        -> (CommandProcess, String)
    {
        let serve = try CommandProcess(
            ["serve", dir, "--port", "0", "--no-auth"] + extra, environment: environment)
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        return (serve, url)
    }

    /// The records of `/api/changes?since=0`, once `condition` holds for them (or 20 s passed).
    static func changes(_ url: String, until condition: ([[String: Any]]) -> Bool) async throws -> [[String: Any]] {
        var records: [[String: Any]] = []
        _ = await waitFor(timeout: .seconds(20)) {
            guard let (status, body) = try? await curl([url + "api/changes?since=0"]), status == 200,
                let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let found = object["changes"] as? [[String: Any]]
            else { return false }
            records = found
            return condition(found)
        }
        return records
    }

    @Test(
        "db check says what is due; serve --database migrates, keeps the log there across restarts, and /api/info says so"
    )
    func checkAndServe() async throws {
        try await MachineSettings.shared {
            try await withPostgres { server in
                let fresh = try CommandProcess(["db", "check", server.url])
                #expect(await fresh.exitStatus() == 3, "\(fresh.errorOutput)")
                #expect(fresh.lines.contains { $0.hasPrefix("server: PostgreSQL ") }, "\(fresh.lines)")
                #expect(fresh.lines.contains { $0.hasPrefix("schema: version 0; due: 1 (the change log)") })
                #expect(!fresh.lines.joined().contains("fileshare@"), "no user in what is printed")

                let dir = try TemporaryFolder()
                var (serve, url) = try await Self.serve(dir.path, ["--database", server.url])
                #expect(try await curl(["-T", "/etc/hostname", url + "api/files/a.txt"]).0 == 201)
                var records = try await Self.changes(url) { found in
                    found.contains { $0["path"] as? String == "a.txt" }
                }
                #expect(records.first?["seq"] as? Int == 1, "\(records)")
                let (status, info) = try await curl([url + "api/info"])
                #expect(status == 200)
                #expect(info.contains(#""database":"postgresql:///postgres?host=\#(server.socketFolder)""#), "\(info)")
                #expect(info.contains(#""leader":true"#))
                #expect(!FileManager.default.fileExists(atPath: dir.path + "/.fileshare/changes"), "no log on disk")
                serve.send(SIGTERM)
                #expect(await serve.exitStatus() == 0, "\(serve.errorOutput)")

                // Again, by the environment: the numbers go on.
                (serve, url) = try await Self.serve(dir.path, [], environment: ["FILESHARE_DATABASE": server.url])
                #expect(try await curl(["-T", "/etc/hostname", url + "api/files/b.txt"]).0 == 201)
                records = try await Self.changes(url) { found in found.contains { $0["path"] as? String == "b.txt" } }
                let seqs = records.compactMap { $0["seq"] as? Int }
                #expect(seqs == Array(1...max(1, seqs.count)) && seqs.count >= 2, "\(records)")
                serve.send(SIGTERM)
                #expect(await serve.exitStatus() == 0)

                let migrated = try CommandProcess(["db", "check"], environment: ["FILESHARE_DATABASE": server.url])
                #expect(await migrated.exitStatus() == 0)
                // Whatever the newest version is: every migration applied.
                #expect(
                    migrated.lines.contains { $0.hasPrefix("schema: version ") && $0.contains(", up to date") },
                    "\(migrated.lines)")
            }
        }
    }

    @Test(
        "bad URLs exit 2, unreachable databases exit 1, each with one line",
        arguments: [
            (["db", "check", "http://example/db"], 2, "scheme"),
            (["db", "check", "postgresql:///x?host=/nonexistent-socket-folder"], 1, "cannot connect"),
            (["db", "check"], 2, "give the database URL"),
            (["serve", "DIR", "--port", "0", "--no-auth", "--database", "postgres://h/db?colour=red"], 2, "colour"),
            (
                [
                    "serve", "DIR", "--port", "0", "--no-auth", "--database",
                    "postgresql:///x?host=/nonexistent-socket-folder",
                ],
                1, "cannot connect"
            ),
        ])
    func badUse(arguments: [String], code: Int32, message: String) async throws {
        let dir = try TemporaryFolder()
        let process = try CommandProcess(
            arguments.map { $0 == "DIR" ? dir.path : $0 }, environment: ["FILESHARE_DATABASE": ""])
        #expect(await process.exitStatus() == code, "\(process.errorOutput)")
        let lines = process.errorOutput.split(whereSeparator: \.isNewline).filter { !$0.contains("open file limit") }
        #expect(lines.count == 1 && lines.first?.contains(message) == true, "\(process.errorOutput)")
    }
}
