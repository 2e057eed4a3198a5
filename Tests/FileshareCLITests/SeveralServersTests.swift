import FileshareTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Three `fileshare serve` processes on one folder and one database: one
/// leads (observes the folder, writes the log), the others follow; all
/// serve every request and read the same log. The leader killed, another
/// takes over and numbers what changed meanwhile, each change once.
///
/// `FILESHARE_KILLS=N` kills the leader N times (2 by default, to keep the
/// suite short); the takeover times are printed.
@Suite("several servers on one folder", .timeLimit(.minutes(10)))
struct SeveralServersTests {
    /// One running server.
    final class Server: Sendable {
        let process: CommandProcess
        let url: String
        init(process: CommandProcess, url: String) {
            self.process = process
            self.url = url
        }
    }

    static func start(_ dir: String, database: String) async throws -> Server {
        let (process, url) = try await DatabaseCommandTests.serve(dir, ["--database", database])
        return Server(process: process, url: url)
    }

    /// The status curl got (0 for none).
    static func status(_ arguments: [String]) async -> Int { (try? await curl(arguments))?.0 ?? 0 }

    /// Whether the server at `url` says it leads (`nil`: it does not answer).
    static func leads(_ url: String) async -> Bool? {
        guard let (status, body) = try? await curl(["--max-time", "2", url + "api/info"]), status == 200 else {
            return nil
        }
        return body.contains(#""leader":true"#)
    }

    /// Every record of the server's log, read page by page.
    static func records(_ url: String) async -> [[String: Any]]? {
        var all: [[String: Any]] = []
        var since = 0
        while true {
            guard let (status, body) = try? await curl([url + "api/changes?since=\(since)&limit=10000"]), status == 200,
                let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let page = object["changes"] as? [[String: Any]], let next = object["next"] as? Int
            else { return nil }
            all += page
            if page.isEmpty || next == since { return all }
            since = next
        }
    }

    /// A record as compared between servers: its number, type and paths.
    static func summary(_ record: [String: Any]) -> String {
        let fields = ["seq", "type", "path", "from", "to", "id"].map { "\(record[$0] ?? "-")" }
        return fields.joined(separator: " ")
    }

    /// Waits until exactly one of `servers` leads; returns its index.
    static func leader(of servers: [Server?], timeout: Duration = .seconds(30)) async -> Int? {
        var found: Int?
        _ = await waitFor(timeout: timeout) {
            var leading: [Int] = []
            for index in servers.indices {
                if let server = servers[index], await leads(server.url) == true { leading.append(index) }
            }
            found = leading.count == 1 ? leading[0] : nil
            return found != nil
        }
        return found
    }

    @Test("three servers read one gapless log; the leader killed, another takes over and numbers every change once")
    func threeServers() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                var servers: [Server?] = []
                for _ in 0..<3 { servers.append(try await Self.start(dir.path, database: database.url)) }
                defer { for server in servers { server?.process.send(SIGKILL) } }
                let first = await Self.leader(of: servers)
                #expect(first != nil, "one server leads")

                // Driven at once through all three: uploads, renames, deletes.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, server) in servers.enumerated() {
                        guard let url = server?.url else { continue }
                        group.addTask {
                            for file in 0..<6 {
                                await #expect(
                                    Self.status(["-T", "/etc/hostname", url + "api/files/s\(index)-\(file).txt"]) == 201
                                )
                            }
                            let move = #"{"from":"s\#(index)-0.txt","to":"moved-\#(index).txt"}"#
                            await #expect(
                                Self.status([
                                    "-X", "POST", "-H", "Content-Type: application/json", "--data", move,
                                    url + "api/move",
                                ]) == 200)
                            await #expect(Self.status(["-X", "DELETE", url + "api/files/s\(index)-1.txt"]) == 204)
                        }
                    }
                    try await group.waitForAll()
                }
                // Every server reads the same sequence, without gaps, each change with its origin.
                var logs: [[String]] = []
                let complete = await waitFor(timeout: .seconds(30)) {
                    logs = []
                    for case let server? in servers {
                        if let records = await Self.records(server.url) { logs.append(records.map(Self.summary)) }
                    }
                    let removals = logs.first?.filter { $0.contains(" removed ") }.count ?? 0
                    return logs.count == 3 && removals == 3 && logs.allSatisfy { $0 == logs[0] }
                }
                #expect(complete, "\(logs)")
                let all = await Self.records(servers[0]!.url) ?? []
                #expect(all.compactMap { $0["seq"] as? Int } == Array(1...max(1, all.count)), "\(all)")
                let made = all.filter {
                    ($0["path"] as? String)?.hasPrefix("s") == true && $0["type"] as? String == "added"
                }
                #expect(made.count == 18, "\(all)")
                #expect(made.allSatisfy { $0["origin"] != nil }, "the followers' changes carry their origin: \(made)")

                // Failover: the leader killed while files arrive, through the servers and beside them.
                let kills = ProcessInfo.processInfo.environment["FILESHARE_KILLS"].flatMap(Int.init) ?? 2
                var takeovers: [Duration] = []
                var expected = Set<String>()
                for round in 0..<kills {
                    guard let leader = await Self.leader(of: servers) else {
                        Issue.record("no leader before kill \(round)")
                        break
                    }
                    let followers = servers.indices.filter { $0 != leader }.compactMap { servers[$0]?.url }
                    let arriving = Task {
                        var names: [String] = []
                        var count = 0
                        while !Task.isCancelled && count < 40 {
                            let name = "k\(round)-\(count).txt"
                            if count % 2 == 0 {
                                // Beside the servers: only the leader's observer sees it.
                                _ = FileManager.default.createFile(
                                    atPath: dir.path + "/" + name, contents: Data("x".utf8))
                                names.append(name)
                            } else if let (status, _) = try? await curl(
                                ["-T", "/etc/hostname", followers[count % followers.count] + "api/files/" + name]),
                                status == 201
                            {
                                names.append(name)
                            }
                            count += 1
                            try? await Task.sleep(for: .milliseconds(40))
                        }
                        return names
                    }
                    try await Task.sleep(for: .milliseconds(300))
                    let killedAt = ContinuousClock.now
                    servers[leader]?.process.send(SIGKILL)
                    _ = await servers[leader]?.process.exitStatus()
                    servers[leader] = nil
                    let next = await Self.leader(of: servers)
                    let took = ContinuousClock.now - killedAt
                    #expect(next != nil && next != leader, "another server takes over")
                    takeovers.append(took)
                    expected.formUnion(await arriving.value)
                    servers[leader] = try await Self.start(dir.path, database: database.url)
                }

                // Every file made is in the log exactly once, as every server reads it.
                var counts: [String: Int] = [:]
                let settled = await waitFor(timeout: .seconds(30)) {
                    guard let first = servers.compactMap({ $0 }).first, let records = await Self.records(first.url)
                    else {
                        return false
                    }
                    counts = [:]
                    for record in records where record["type"] as? String == "added" {
                        if let path = record["path"] as? String, expected.contains(path) {
                            counts[path, default: 0] += 1
                        }
                    }
                    return counts.count == expected.count
                }
                #expect(settled, "missing: \(expected.subtracting(counts.keys).sorted())")
                #expect(counts.values.allSatisfy { $0 == 1 }, "twice: \(counts.filter { $0.value > 1 })")
                var sequences: [[String]] = []
                for case let server? in servers {
                    if let records = await Self.records(server.url) { sequences.append(records.map(Self.summary)) }
                }
                #expect(sequences.count == 3 && sequences.allSatisfy { $0 == sequences[0] })
                let seqs = sequences.first?.compactMap { Int($0.split(separator: " ")[0]) } ?? []
                #expect(seqs == Array(1...max(1, seqs.count)), "gapless")

                let sorted = takeovers.sorted()
                if let maximum = sorted.last {
                    print(
                        "takeover after kill -9, \(sorted.count) kills: p50 \(sorted[sorted.count / 2]), max \(maximum)"
                    )
                }
            }
        }
    }

    /// Runs `sql` with `psql` (Debian's postgresql depends on its client)
    /// through `template1`: the servers' database may refuse connections meanwhile.
    static func admin(_ server: PostgresServer, _ sql: String) async throws {
        let psql = try CommandProcess(
            [
                "-h", server.socketFolder, "-U", PostgresServer.user, "-d", "template1", "-v", "ON_ERROR_STOP=1", "-c",
                sql,
            ],
            executable: "/usr/bin/psql")
        #expect(await psql.exitStatus() == 0, "psql: \(psql.errorOutput)")
    }

    @Test(
        "the database cut off under load: 503 with a reason, never a wrong answer; the servers recover without a restart"
    )
    func databaseOutage() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                var servers: [Server?] = []
                for _ in 0..<2 { servers.append(try await Self.start(dir.path, database: database.url)) }
                defer { for server in servers { server?.process.send(SIGKILL) } }
                #expect(await Self.leader(of: servers) != nil)
                let urls = servers.compactMap { $0?.url }
                for (index, url) in urls.enumerated() {
                    await #expect(Self.status(["-T", "/etc/hostname", url + "api/files/before-\(index).txt"]) == 201)
                }
                var latest = 0
                #expect(
                    await waitFor(timeout: .seconds(20)) {
                        latest = await Self.records(urls[0])?.count ?? 0
                        return latest >= 2
                    })

                // Cut off: no new session, and every open one ended.
                try await Self.admin(
                    database,
                    """
                    ALTER DATABASE postgres ALLOW_CONNECTIONS false;
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = 'postgres' AND pid <> pg_backend_pid();
                    """)
                // Files still arrive beside the servers; through them, a write
                // must check the WebDAV locks, which are in the database: 503
                // with the reason, never written as if no lock were held.
                for (index, url) in urls.enumerated() {
                    let (status, body) = try await curl(["-T", "/etc/hostname", url + "api/files/during-\(index).txt"])
                    #expect(status == 503 && body.contains("database"), "\(status) \(body)")
                }
                _ = FileManager.default.createFile(atPath: dir.path + "/during-disk.txt", contents: Data("x".utf8))
                // Whoever answers the log says why it cannot, and no server says it leads.
                // Every answer until a server notices is recorded: the log
                // still read (200) or 503, never another.
                for url in urls {
                    var answer = (0, "")
                    var seen: [Int] = []
                    let refused = await waitFor(timeout: .seconds(30)) {
                        answer = (try? await curl([url + "api/changes?since=\(latest)"])) ?? (0, "")
                        seen.append(answer.0)
                        return answer.0 == 503
                    }
                    #expect(refused, "\(answer)")
                    #expect(seen.allSatisfy { $0 == 200 || $0 == 503 }, "answers during the outage: \(seen)")
                    #expect(answer.1.contains("database"), "\(answer.1)")
                }
                #expect(
                    await waitFor(timeout: .seconds(30)) {
                        for url in urls where await Self.leads(url) != false { return false }
                        return true
                    })

                try await Self.admin(database, "ALTER DATABASE postgres ALLOW_CONNECTIONS true")
                #expect(await Self.leader(of: servers, timeout: .seconds(60)) != nil, "one leads again")
                // Through the servers again, once it is back.
                for (index, url) in urls.enumerated() {
                    var status = 0
                    let accepted = await waitFor(timeout: .seconds(30)) {
                        status = await Self.status(["-T", "/etc/hostname", url + "api/files/during-\(index).txt"])
                        return status == 201
                    }
                    #expect(accepted, "last: \(status)")
                }
                let names = ["during-0.txt", "during-1.txt", "during-disk.txt"]
                var logs: [[[String: Any]]] = []
                let recovered = await waitFor(timeout: .seconds(60)) {
                    logs = []
                    for url in urls { if let records = await Self.records(url) { logs.append(records) } }
                    guard logs.count == urls.count else { return false }
                    let summaries = logs.map { $0.map(Self.summary) }
                    let paths = logs[0].filter { $0["type"] as? String == "added" }.compactMap { $0["path"] as? String }
                    return summaries.allSatisfy { $0 == summaries[0] } && names.allSatisfy(paths.contains)
                }
                #expect(recovered, "\(logs.map { $0.map(Self.summary) })")
                let added = logs.first?.filter { $0["type"] as? String == "added" }.compactMap { $0["path"] as? String }
                #expect(names.allSatisfy { name in added?.filter { $0 == name }.count == 1 }, "\(added ?? [])")
                let seqs = logs.first?.compactMap { $0["seq"] as? Int } ?? []
                #expect(seqs == Array(1...max(1, seqs.count)), "gapless")
            }
        }
    }

    @Test("with --inbox, only the leader takes in the Inbox; after it is killed, the next leader does")
    func inboxFollowsTheLead() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                let root = dir.path + "/share"
                try InboxCommandTests.write(dir.path + "/report.pdf", Array(InboxCommandTests.pdf.utf8))
                var servers: [Server?] = []
                for _ in 0..<2 {
                    let (process, url) = try await DatabaseCommandTests.serve(
                        root, ["--database", database.url, "--inbox", "--print-changes"])
                    servers.append(Server(process: process, url: url))
                }
                defer { for server in servers { server?.process.send(SIGKILL) } }
                guard let leader = await Self.leader(of: servers) else {
                    Issue.record("no leader")
                    return
                }
                let follower = 1 - leader
                let takenIn = #""type":"taken-in","from":"Inbox/report.pdf""#
                await #expect(
                    Self.status(["-T", dir.path + "/report.pdf", servers[follower]!.url + "api/files/Inbox/report.pdf"])
                        == 201)
                #expect(
                    await waitFor(timeout: .seconds(30)) {
                        servers[leader]!.process.errorOutput.contains(takenIn)
                    }, "\(servers[leader]!.process.errorOutput)")
                #expect(!servers[follower]!.process.errorOutput.contains(takenIn), "a follower takes in nothing")
                #expect(InboxCommandTests.read(root + "/report.pdf") == InboxCommandTests.pdf)

                servers[leader]?.process.send(SIGKILL)
                _ = await servers[leader]?.process.exitStatus()
                servers[leader] = nil
                #expect(await Self.leader(of: servers) == follower, "the other takes over")
                await #expect(
                    Self.status(["-T", dir.path + "/report.pdf", servers[follower]!.url + "api/files/Inbox/report.pdf"])
                        == 201)
                #expect(
                    await waitFor(timeout: .seconds(30)) {
                        servers[follower]!.process.errorOutput.contains(takenIn)
                    }, "\(servers[follower]!.process.errorOutput)")
                #expect(InboxCommandTests.read(root + "/report 2.pdf") == InboxCommandTests.pdf)
            }
        }
    }
}
