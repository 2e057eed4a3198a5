import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Sign-in sessions and link visitors' sessions of a server without a
/// database, kept in the folder's private state: a restart signs no one
/// out, the file holds no session id, and a session still ends as it would.
@Suite("fileshare serve: sessions across a restart")
struct SessionRestartTests {
    @Test("a session and a link visitor's survive a restart; the files hold only hashes, 0600; a removed user's ends")
    func sessionsSurviveRestart() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try FileManager.default.createDirectory(atPath: dir("share"), withIntermediateDirectories: true)
            try dir.write("the plan\n", to: "share/plan.txt")
            let users = dir.path + "/users.json"
            for (name, password) in [("alice", "alice password"), ("bob", "bob password")] {
                let run = try await UsersCommandTests.run(
                    ["add", name, "--admin"], users: users, input: password + "\n")
                try #require(run.status == 0, "\(run)")
            }
            let arguments = ["serve", dir.path + "/share", "--port", "0", "--users", users]
            var serve = try CommandProcess(arguments)
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            var url = SharedSessionsTests.url(serve)
            let alice = try #require(try await SharedSessionsTests.signIn(url, "alice", "alice password"))
            let bob = try #require(try await SharedSessionsTests.signIn(url, "bob", "bob password"))
            #expect(await SharedSessionsTests.whoAmI(url, alice) == 200)
            // A link with a password, and a visitor who gave it.
            let made = try await curlResponse([
                "-u", "alice:alice password", "-X", "POST", "-H", "Content-Type: application/json",
                "--data", #"{"path":"plan.txt","password":"link secret"}"#, url + "api/shares",
            ])
            #expect(made.status == 201, "\(made.body)")
            let token = try #require(
                (try JSONSerialization.jsonObject(with: Data(made.body.utf8)) as? [String: Any])?["token"] as? String)
            let gave = try await curlResponse([
                "-X", "POST", "--data-urlencode", "password=link secret", url + "s/\(token)/password",
            ])
            #expect(gave.status == 303, "\(gave.body)")
            let visitor = try #require(gave.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
            #expect(try await curl(["-H", "Cookie: " + visitor, url + "s/\(token)/download"]) == (200, "the plan\n"))

            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            for (file, cookie) in [("sessions.json", alice), ("link-sessions.json", visitor)] {
                let path = dir.path + "/share/.fileshare/" + file
                let text = try String(contentsOfFile: path, encoding: .utf8)
                let id = String(cookie.split(separator: "=", maxSplits: 1).last ?? "")
                #expect(id.count >= 40 && !text.contains(id), "\(file) holds the session id")
                #expect(text.contains("\"idHash\""), "\(text)")
                var info = stat()
                #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            }

            serve = try CommandProcess(arguments)
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            url = SharedSessionsTests.url(serve)
            #expect(await SharedSessionsTests.whoAmI(url, alice) == 200)
            #expect(await SharedSessionsTests.whoAmI(url, bob) == 200)
            #expect(try await curl(["-H", "Cookie: " + visitor, url + "s/\(token)/download"]) == (200, "the plan\n"))
            #expect(
                await SharedSessionsTests.whoAmI(url, "fileshare-session=" + String(repeating: "0", count: 64)) == 401)
            // Removed from the users file: the session ends, and stays ended after a restart.
            let removed = try await UsersCommandTests.run(["remove", "bob"], users: users)
            try #require(removed.status == 0, "\(removed)")
            #expect(await waitFor { await SharedSessionsTests.whoAmI(url, bob) == 401 })
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            let text = try String(contentsOfFile: dir.path + "/share/.fileshare/sessions.json", encoding: .utf8)
            #expect(text.contains("\"alice\"") && !text.contains("\"bob\""), "\(text)")
        }
    }
}
