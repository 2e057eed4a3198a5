import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare changes` and `fileshare watch --state` end to end.
@Suite("fileshare changes and watch --state")
struct ChangesCommandTests {
    func json(_ lines: [String]) throws -> [[String: String]] {
        try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            return object.compactMapValues { $0 as? String }
        }
    }

    @Test("first run: every item added; then exactly what changed, with ids kept; --keep-state keeps the state")
    func changesCommand() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let root = dir.path + "/docs"
            try FileManager.default.createDirectory(atPath: root + "/a", withIntermediateDirectories: true)
            try "1".write(toFile: root + "/a/one.txt", atomically: false, encoding: .utf8)
            try "2".write(toFile: root + "/two.txt", atomically: false, encoding: .utf8)
            let state = dir.path + "/state.bin"

            let first = try CommandProcess(["changes", root, "--state", state, "--json"])
            #expect(await first.exitStatus() == 0)
            let added = try json(first.lines)
            #expect(Set(added.compactMap { $0["path"] }) == ["a", "a/one.txt", "two.txt"])
            #expect(added.allSatisfy { $0["type"] == "added" })
            let id = added.first { $0["path"] == "a/one.txt" }?["id"]

            try FileManager.default.moveItem(atPath: root + "/a/one.txt", toPath: root + "/uno.txt")
            try FileManager.default.removeItem(atPath: root + "/two.txt")
            let second = try CommandProcess(["changes", root, "--state", state, "--json", "--keep-state"])
            #expect(await second.exitStatus() == 0)
            let changes = try json(second.lines)
            #expect(changes.map { $0["type"] ?? "" }.sorted() == ["moved", "removed"])
            #expect(changes.first { $0["type"] == "moved" }?["id"] == id)
            #expect(changes.first { $0["type"] == "moved" }?["to"] == "uno.txt")

            // --keep-state: the same changes again; then saved, and nothing.
            let again = try CommandProcess(["changes", root, "--state", state, "--json"])
            #expect(await again.exitStatus() == 0)
            #expect(again.lines.count == 2)
            let quiet = try CommandProcess(["changes", root, "--state", state, "--json"])
            #expect(await quiet.exitStatus() == 0)
            #expect(quiet.lines.isEmpty)
        }
    }

    @Test("a damaged state: an error line on stderr and an error event, then every item as added")
    func damagedState() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try "x".write(toFile: dir.path + "/file", atomically: false, encoding: .utf8)
            let state = dir.path + "/../" + URL(fileURLWithPath: dir.path).lastPathComponent + ".state"
            defer { try? FileManager.default.removeItem(atPath: state) }
            try "not a state".write(toFile: state, atomically: false, encoding: .utf8)
            let run = try CommandProcess(["changes", dir.path, "--state", state, "--json"])
            #expect(await run.exitStatus() == 0)
            #expect(run.errorOutput.contains("not a fileshare state file"))
            #expect(run.lines.first?.contains(#""type":"error""#) == true)
            #expect(run.lines.contains { $0.contains(#""type":"added","path":"file""#) })
        }
    }

    @Test("a state file inside the watched folder is left out of the events")
    func stateInsideRoot() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let run = try CommandProcess(["changes", dir.path, "--state", dir.path + "/fileshare.state", "--json"])
            #expect(await run.exitStatus() == 0)
            let next = try CommandProcess(["changes", dir.path, "--state", dir.path + "/fileshare.state", "--json"])
            #expect(await next.exitStatus() == 0)
            #expect(next.lines.isEmpty, "\(next.lines)")
        }
    }

    @Test("watch --state: what changed while stopped comes before scan-completed")
    func watchWithState() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let root = dir.path + "/docs"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try "x".write(toFile: root + "/report.pdf", atomically: false, encoding: .utf8)
            let state = dir.path + "/watch.state"
            let first = try CommandProcess(["watch", root, "--json", "--state", state])
            #expect(await first.waitForLine { $0.contains("scan-completed") })
            #expect(
                first.lines.contains { $0.contains(#""type":"added","path":"report.pdf""#) },
                "no state yet: an empty view")
            first.send(SIGINT)
            #expect(await first.exitStatus() == 0)
            let id = try json(first.lines).first { $0["path"] == "report.pdf" }?["id"]

            try FileManager.default.moveItem(atPath: root + "/report.pdf", toPath: root + "/Report 2026.pdf")
            let second = try CommandProcess(["watch", root, "--json", "--state", state])
            #expect(await second.waitForLine { $0.contains("scan-completed") })
            let lines = try json(second.lines)
            #expect(lines.map { $0["type"] ?? "" } == ["scan-started", "renamed", "scan-completed"])
            #expect(lines[1]["id"] == id && lines[1]["to"] == "Report 2026.pdf")
            second.send(SIGTERM)
            #expect(await second.exitStatus() == 0)
        }
    }

    @Test("bad state locations: exit 2 with one line", arguments: ["missing-folder", "is-folder"])
    func badStateLocation(kind: String) async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let state = kind == "missing-folder" ? dir.path + "/nope/state" : dir.path
            for command in [["changes", dir.path, "--state", state], ["watch", dir.path, "--state", state]] {
                let run = try CommandProcess(command)
                #expect(await run.exitStatus() == 2)
                #expect(run.errorOutput.split(separator: "\n").count == 1)
                #expect(run.errorOutput.contains("cannot keep the state"))
            }
        }
    }

    @Test("killed (SIGKILL) at random moments while saving: the state is always the last good one")
    func killedWhileSaving() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let root = dir.path + "/docs"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            for i in 0..<300 { try "\(i)".write(toFile: root + "/file\(i)", atomically: false, encoding: .utf8) }
            let state = dir.path + "/state.bin"
            var random = SystemRandomNumberGenerator()
            for round in 0..<12 {
                let watch = try CommandProcess(["watch", root, "--json", "--state", state, "--latency", "0"])
                #expect(await watch.waitForLine { $0.contains("scan-completed") })
                // Keep changing files (saves every two seconds), then kill without warning.
                for i in 0..<20 {
                    try "\(round)".write(
                        toFile: root + "/file\((round * 20 + i) % 300)", atomically: false, encoding: .utf8)
                }
                try await Task.sleep(for: .milliseconds(Int64.random(in: 0...2500, using: &random)))
                watch.send(SIGKILL)
                _ = await watch.exitStatus()
                let check = try CommandProcess(["changes", root, "--state", state, "--json", "--keep-state"])
                #expect(await check.exitStatus() == 0)
                #expect(
                    !check.errorOutput.contains("damaged") && !check.errorOutput.contains("not a fileshare state"),
                    "round \(round): \(check.errorOutput)")
                #expect(
                    !FileManager.default.fileExists(atPath: state)
                        || check.lines.allSatisfy { !$0.contains(#""type":"added""#) },
                    "round \(round): a saved state never makes every item new again")
            }
        }
    }
}
