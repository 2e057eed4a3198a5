import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Sessions and share links kept in the database three `fileshare serve`
/// processes of one folder share: a sign-in on one works on the others, a
/// sign-out, a changed password or a revoked link ends on all at once,
/// downloads are counted once across them, and while the database is cut
/// off what needs it answers 503 with a reason, never a wrong 401 or 404.
@Suite("sessions and share links across several servers", .timeLimit(.minutes(10)))
struct SharedSessionsTests {
    /// Three servers on `dir/share`, with `dir/users.json` and the database.
    static func startServers(_ dir: TemporaryFolder, database: String) async throws -> [CommandProcess] {
        var servers: [CommandProcess] = []
        for _ in 0..<3 {
            let serve = try CommandProcess([
                "serve", dir.path + "/share", "--port", "0", "--users", dir.path + "/users.json", "--database",
                database,
            ])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            servers.append(serve)
        }
        return servers
    }

    static func url(_ server: CommandProcess) -> String {
        String(server.lines.first?.split(separator: " ").last ?? "")
    }

    /// Signs in through `url`; answers the cookie (`fileshare-session=…`).
    static func signIn(_ url: String, _ name: String, _ password: String) async throws -> String? {
        let body = #"{"name":"\#(name)","password":"\#(password)"}"#
        let response = try await curlResponse([
            "-X", "POST", "-H", "Content-Type: application/json", "--data", body, url + "api/session",
        ])
        guard response.status == 200, let cookie = response.header("Set-Cookie") else { return nil }
        return cookie.split(separator: ";").first.map(String.init)
    }

    /// The status of `GET /api/session` with `cookie` through `url`.
    static func whoAmI(_ url: String, _ cookie: String) async -> Int {
        (try? await curl(["-H", "Cookie: " + cookie, url + "api/session"]))?.0 ?? 0
    }

    @Test("a session started on one server works on all; signed out, its password changed or its user removed, on none")
    func sessions() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                try FileManager.default.createDirectory(atPath: dir("share"), withIntermediateDirectories: true)
                let users = dir.path + "/users.json"
                for (name, password) in [("alice", "alice password"), ("bob", "bob password")] {
                    let run = try await UsersCommandTests.run(["add", name], users: users, input: password + "\n")
                    try #require(run.status == 0, "\(run)")
                }
                let servers = try await Self.startServers(dir, database: database.url)
                defer { for server in servers { server.send(SIGKILL) } }
                let (a, b, c) = (Self.url(servers[0]), Self.url(servers[1]), Self.url(servers[2]))

                // Signed in on A, known on B and C; signed out on B, refused on A at once.
                let cookie = try #require(try await Self.signIn(a, "alice", "alice password"))
                #expect(await Self.whoAmI(b, cookie) == 200)
                #expect(try await curl(["-H", "Cookie: " + cookie, c + "api/session"]).1.contains(#""user":"alice""#))
                #expect(try await curl(["-X", "DELETE", "-H", "Cookie: " + cookie, b + "api/session"]).0 == 204)
                #expect(await Self.whoAmI(a, cookie) == 401)
                #expect(await Self.whoAmI(c, cookie) == 401)

                // A password changed: the session of the old one ends on every server.
                let old = try #require(try await Self.signIn(b, "alice", "alice password"))
                #expect(await Self.whoAmI(c, old) == 200)
                let passwd = try await UsersCommandTests.run(
                    ["passwd", "alice"], users: users, input: "a new password\n")
                try #require(passwd.status == 0, "\(passwd)")
                // Each server looks at the users file once a second.
                #expect(await waitFor { await Self.whoAmI(a, old) == 401 })
                #expect(await Self.whoAmI(b, old) == 401)
                #expect(await Self.whoAmI(c, old) == 401)
                // A has read the new file (it refused the old session by
                // its own stamp); C may read it up to a second later: a
                // sign-in there could still meet the old password (and a
                // retried one would count as failures).
                let new = try #require(try await Self.signIn(a, "alice", "a new password"))
                #expect(await waitFor { await Self.whoAmI(c, new) == 200 })
                #expect(await Self.whoAmI(a, new) == 200)

                // A user removed: their sessions end everywhere.
                let bobs = try #require(try await Self.signIn(a, "bob", "bob password"))
                #expect(await Self.whoAmI(c, bobs) == 200)
                let remove = try await UsersCommandTests.run(["remove", "bob"], users: users)
                try #require(remove.status == 0, "\(remove)")
                #expect(await waitFor { await Self.whoAmI(b, bobs) == 401 })
                #expect(await Self.whoAmI(a, bobs) == 401)
                #expect(await Self.whoAmI(c, bobs) == 401)
                #expect(await Self.whoAmI(b, new) == 200, "alice's session is not bob's")

                // The database cut off: a session can be neither honoured nor
                // refused: 503 with the reason, never 401.
                try await SeveralServersTests.admin(
                    database,
                    """
                    ALTER DATABASE postgres ALLOW_CONNECTIONS false;
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = 'postgres' AND pid <> pg_backend_pid();
                    """)
                // Every answer until the server notices is recorded: the
                // session still honoured (200) or 503, never another.
                var answer = (0, "")
                var seen: [Int] = []
                #expect(
                    await waitFor(timeout: .seconds(20)) {
                        answer = (try? await curl(["-H", "Cookie: " + new, b + "api/session"])) ?? (0, "")
                        seen.append(answer.0)
                        return answer.0 == 503
                    }, "\(answer)")
                #expect(seen.allSatisfy { $0 == 200 || $0 == 503 }, "answers during the outage: \(seen)")
                #expect(answer.1.contains("database"), "\(answer.1)")
                for url in [a, c] {
                    let during = try await curl(["-H", "Cookie: " + new, url + "api/files/"])
                    #expect(during.0 == 503 && during.1.contains("database"), "\(during)")
                }
                try await SeveralServersTests.admin(database, "ALTER DATABASE postgres ALLOW_CONNECTIONS true")
                // Back without a restart, the session still there.
                #expect(await waitFor(timeout: .seconds(30)) { await Self.whoAmI(a, new) == 200 })
                #expect(await Self.whoAmI(b, new) == 200)
                #expect(await Self.whoAmI(c, new) == 200)
            }
        }
    }

    @Test("a link made on one server opens on the others, is revoked on all at once, and counts downloads once")
    func links() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                try FileManager.default.createDirectory(atPath: dir("share/Team"), withIntermediateDirectories: true)
                try dir.write("plan\n", to: "share/Team/plan.txt")
                let users = dir.path + "/users.json"
                let run = try await UsersCommandTests.run(
                    ["add", "alice", "--admin"], users: users, input: "alice password\n")
                try #require(run.status == 0, "\(run)")
                let servers = try await Self.startServers(dir, database: database.url)
                defer { for server in servers { server.send(SIGKILL) } }
                let urls = servers.map(Self.url)
                let (a, b, c) = (urls[0], urls[1], urls[2])
                let alice = ["-u", "alice:alice password"]

                func make(_ json: String, on url: String) async throws -> String? {
                    // A follower knows the file once the leader's log says so.
                    var token: String?
                    _ = await waitFor(timeout: .seconds(20)) {
                        guard
                            let (status, body) = try? await curl(
                                alice + [
                                    "-X", "POST", "-H", "Content-Type: application/json", "--data", json,
                                    url + "api/shares",
                                ]), status == 201,
                            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                        else { return false }
                        token = object["token"] as? String
                        return true
                    }
                    return token
                }

                // Made on A, opened on B, revoked on C: gone on A at once.
                let token = try #require(try await make(#"{"path":"Team/plan.txt"}"#, on: a))
                #expect(await waitFor(timeout: .seconds(20)) { (try? await curl([b + "s/" + token]))?.0 == 200 })
                #expect(try await curl([b + "s/\(token)/download"]) == (200, "plan\n"))
                #expect(try await curl(alice + ["-X", "DELETE", c + "api/shares/" + token]).0 == 204)
                let gone = try await curl([a + "s/" + token])
                #expect(gone.0 == 410 && gone.1.contains("revoked"), "\(gone)")
                #expect(try await curl([b + "s/\(token)/download"]).0 == 410)

                // Three downloads allowed, twelve asked at once through the three: three counted.
                let limited = try #require(try await make(#"{"path":"Team/plan.txt","maxDownloads":3}"#, on: b))
                for url in urls {
                    #expect(
                        await waitFor(timeout: .seconds(20)) { (try? await curl([url + "s/" + limited]))?.0 == 200 })
                }
                let statuses = await withTaskGroup(of: Int.self) { group in
                    for index in 0..<12 {
                        group.addTask { (try? await curl([urls[index % 3] + "s/\(limited)/download"]))?.0 ?? 0 }
                    }
                    return await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 200 || $0 == 410 }, "\(statuses)")
                #expect(statuses.filter { $0 == 200 }.count >= 3, "\(statuses)")
                // Counted once each body is sent: the last may come a moment after curl is done.
                var listed = (0, "")
                let counted = await waitFor {
                    listed = (try? await curl(alice + [c + "api/shares"])) ?? (0, "")
                    return listed.1.contains(#""state":"used-up""#)
                }
                #expect(counted && listed.1.contains(#""maxDownloads":3,"downloads":3,"#), "\(listed.1)")
                for url in urls {
                    let after = try await curl([url + "s/\(limited)/download"])
                    #expect(after.0 == 410 && after.1.contains("used-up"), "\(after)")
                }

                // A link's password given on one server admits on the others.
                let guarded = try #require(try await make(#"{"path":"Team","password":"open sesame"}"#, on: c))
                for url in urls {
                    #expect(
                        await waitFor(timeout: .seconds(20)) { (try? await curl([url + "s/" + guarded]))?.0 == 401 })
                }
                let given = try await curlResponse(["--data", "password=open+sesame", a + "s/\(guarded)/password"])
                #expect(given.status == 303, "\(given.status) \(given.body)")
                let visitor = try #require(given.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
                #expect(try await curl(["-H", "Cookie: " + visitor, b + "s/\(guarded)/download/plan.txt"]).0 == 200)

                // The audit of the three servers, one file: whole lines only.
                let auditFolder = dir.path + "/share/.fileshare/audit"
                var lines: [Substring] = []
                let whole = await waitFor(timeout: .seconds(20)) {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: auditFolder)) ?? []
                    lines = names.filter { $0.hasSuffix(".jsonl") }.flatMap { name in
                        ((try? String(contentsOfFile: auditFolder + "/" + name, encoding: .utf8)) ?? "")
                            .split(whereSeparator: \.isNewline)
                    }
                    return lines.filter { $0.contains(#""download""#) }.count >= 5
                }
                #expect(whole, "\(lines.count) lines")
                for line in lines {
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    #expect(object != nil, "a broken audit line: \(line)")
                }

                // The database cut off: a link can be neither opened nor
                // refused: 503 with the reason, never 404.
                try await SeveralServersTests.admin(
                    database,
                    """
                    ALTER DATABASE postgres ALLOW_CONNECTIONS false;
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = 'postgres' AND pid <> pg_backend_pid();
                    """)
                // Every answer until the server notices is recorded: the link
                // still opened (200) or 503, never another.
                var answer = (0, "")
                var seen: [Int] = []
                #expect(
                    await waitFor(timeout: .seconds(20)) {
                        answer = (try? await curl([a + "s/" + limited])) ?? (0, "")
                        seen.append(answer.0)
                        return answer.0 == 503
                    }, "\(answer)")
                #expect(seen.allSatisfy { $0 == 200 || $0 == 503 }, "answers during the outage: \(seen)")
                #expect(answer.1.contains("database"), "\(answer.1)")
                try await SeveralServersTests.admin(database, "ALTER DATABASE postgres ALLOW_CONNECTIONS true")
                #expect(await waitFor(timeout: .seconds(30)) { (try? await curl([a + "s/" + limited]))?.0 == 410 })
            }
        }
    }
}
