import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve --users FILE` end to end: accounts made with `fileshare
/// users`, applied by the running server, and changed while it runs.
@Suite("fileshare serve --users")
struct ServeUsersTests {
    @Test("each user's rights apply; passwd, grant and remove take effect without a restart")
    func liveUsers() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let users = dir.path + "/users.json"
            for folder in ["share/Team", "share/Private"] {
                try FileManager.default.createDirectory(atPath: dir(folder), withIntermediateDirectories: true)
            }
            try dir.write("plan\n", to: "share/Team/plan.txt")
            try dir.write("diary\n", to: "share/Private/diary.txt")
            for arguments in [["add", "alice"], ["grant", "alice", "Team", "read"]] {
                let run = try await UsersCommandTests.run(arguments, users: users, input: "first password\n")
                try #require(run.status == 0, "\(run)")
            }
            let serve = try CommandProcess(["serve", dir.path + "/share", "--port", "0", "--users", users])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            #expect(!serve.errorOutput.contains("password '"))  // no made-up password with a users file
            let first = ["-u", "alice:first password"]
            #expect(try await curl(first + [url + "api/files/Team/plan.txt"]) == (200, "plan\n"))
            #expect(try await curl(first + [url + "api/files/Private/diary.txt"]).0 == 404)
            #expect(try await curl(first + ["-T", "/etc/hostname", url + "api/files/Team/x.txt"]).0 == 403)
            #expect(try await curl(["-u", "alice:wrong", url + "api/info"]).0 == 401)
            // A right granted while it runs applies at the next request (the file is looked at once a second).
            _ = try await UsersCommandTests.run(["grant", "alice", "Private", "write"], users: users)
            #expect(await waitFor { (try? await curl(first + [url + "api/files/Private/diary.txt"]).0) == 200 })
            // A new password: the old one is refused, though it was just verified and remembered.
            _ = try await UsersCommandTests.run(["passwd", "alice"], users: users, input: "second password\n")
            #expect(await waitFor { (try? await curl(first + [url + "api/info"]).0) == 401 })
            #expect(try await curl(["-u", "alice:second password", url + "api/info"]).0 == 200)
            _ = try await UsersCommandTests.run(["remove", "alice"], users: users)
            #expect(await waitFor { (try? await curl(["-u", "alice:second password", url + "api/info"]).0) == 401 })
            #expect(await waitFor { serve.errorOutput.contains("the users file changed") })
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "with --user and --password, the page signs in through the same form and sessions as with a users file; Basic still works for scripts and WebDAV"
    )
    func signInPageWithoutUsersFile() async throws {
        let dir = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: dir("Family"), withIntermediateDirectories: true)
        try dir.write("plan\n", to: "Family/plan.txt")
        let serve = try CommandProcess([
            "serve", dir.path + "/Family", "--port", "0", "--user", "mum", "--password", "mum-pw-1234",
        ])
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        let cookies = dir.path + "/cookies.txt"
        let browser = ["-H", "Accept: text/html", "-H", "Sec-Fetch-Mode: navigate", "-b", cookies, "-c", cookies]

        // A browser opening the page goes to the form, never to the password dialog.
        let opened = try await curlResponse(browser + [url])
        #expect(opened.status == 303 && opened.header("Location") == "/signin", "\(opened.status) \(opened.headers)")
        #expect(opened.header("WWW-Authenticate") == nil)
        let form = try await curlResponse(browser + [url + "signin"])
        #expect(form.status == 200 && form.body.contains("Sign in to “Family”"), "\(form.body)")

        // A wrong password: the form again, the name kept, no dialog.
        let wrong = try await curlResponse(
            browser + ["--data-urlencode", "name=mum", "--data-urlencode", "password=wrong", url + "signin"])
        #expect(wrong.status == 401 && wrong.body.contains("value=\"mum\""), "\(wrong.status) \(wrong.body)")
        #expect(wrong.header("WWW-Authenticate") == nil)

        // The right one: a session, the page, and sign-out.
        let signedIn = try await curlResponse(
            browser + ["--data-urlencode", "name=mum", "--data-urlencode", "password=mum-pw-1234", url + "signin"])
        #expect(signedIn.status == 303 && signedIn.header("Location") == "/", "\(signedIn.status)")
        #expect(try await curl(["-b", cookies, url + "api/files/plan.txt"]) == (200, "plan\n"))
        #expect(try await curl(["-b", cookies, url + "api/session"]).1.contains("\"mum\""))
        let signedOut = try await curlResponse(["-b", cookies, "-c", cookies, "-X", "POST", url + "signout"])
        #expect(signedOut.status == 303, "\(signedOut.status)")
        #expect(try await curl(["-b", cookies, url + "api/files/plan.txt"]).0 == 401)

        // Scripts and WebDAV clients: HTTP Basic, as before.
        #expect(try await curl(["-u", "mum:mum-pw-1234", url + "api/files/plan.txt"]) == (200, "plan\n"))
        let challenged = try await curlResponse([url + "api/files/plan.txt"])
        #expect(challenged.status == 401 && challenged.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
        let propfind = try await curl([
            "-u", "mum:mum-pw-1234", "-X", "PROPFIND", "-H", "Depth: 0", url + "dav/plan.txt",
        ])
        #expect(propfind.0 == 207, "\(propfind)")
        #expect(try await curl(["-u", "mum:wrong", url + "api/files/plan.txt"]).0 == 401)
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }

    @Test("a folder link lists small images, sorts as the page does, and opens a file without spending a download")
    func folderLinkAsThePage() async throws {
        let dir = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: dir("share/Photos/Album"), withIntermediateDirectories: true)
        // A photo with its camera's small image: served as the thumbnail whatever libraries are installed.
        let embedded: [UInt8] = [0xFF, 0xD8] + [UInt8](repeating: 0x42, count: 200) + [0xFF, 0xD9]
        for name in ["IMG_10.jpg", "IMG_2.jpg", "b.jpg"] {
            try dir.write(TestJPEG.bytes(thumbnail: embedded, padding: 64), to: "share/Photos/" + name)
        }
        let serve = try CommandProcess([
            "serve", dir.path + "/share", "--port", "0", "--user", "mum", "--password", "pw",
        ])
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        let site = String(url.dropLast())
        let owner = ["-u", "mum:pw"]
        #expect(await waitFor { (try? await curl(owner + [url + "api/list?path=Photos"]).1.contains("IMG_2")) == true })
        for body in [#"{"path":"Photos"}"#, #"{"path":"Photos","maxDownloads":1}"#] {
            let made = try await curl(
                owner + ["-X", "POST", "-H", "Content-Type: application/json", "-d", body, url + "api/shares"])
            let link = try #require(made.1.firstMatch(of: #/"url":"(/s/[^"]+)"/#).map { String($0.1) }, "\(made)")
            let page = try await curl([site + link])
            #expect(page.0 == 200)
            // Where each is listed: the folder's link, then each file's Download.
            let order = ["page/Album", "download/b.jpg?", "download/IMG_2.jpg?", "download/IMG_10.jpg?"].map {
                page.1.range(of: link + "/" + $0)?.lowerBound
            }
            #expect(order.allSatisfy { $0 != nil } && order.map { $0! } == order.map { $0! }.sorted(), "\(page.1)")
            #expect(page.1.contains("src=\"\(link)/thumbnail/IMG_2.jpg\""), "\(page.1)")
            let thumbnail = try await curlResponse([site + link + "/thumbnail/IMG_2.jpg"])
            #expect(thumbnail.status == 200 && thumbnail.header("Content-Type")?.hasPrefix("image/") == true)
            if body.contains("maxDownloads") {
                // Only the Download spends one: the name opens nothing.
                #expect(!page.1.contains("\(link)/view/"), "\(page.1)")
                #expect(!(try await curl(owner + [url + "api/shares"]).1.contains(#""downloads":1"#)))
            } else {
                #expect(page.1.contains("href=\"\(link)/view/IMG_2.jpg\""), "\(page.1)")
                #expect(try await curl([site + link + "/view/IMG_2.jpg"]).0 == 200)
            }
        }
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }

    @Test("--users with --user, or a missing users file: exit 2 naming the problem")
    func refusals() async throws {
        let dir = try TemporaryFolder()
        let both = try CommandProcess([
            "serve", dir.path, "--port", "0", "--users", dir.path + "/u.json", "--user", "a", "--password", "b",
        ])
        #expect(await both.exitStatus() == 2)
        #expect(both.errorOutput.contains("--users cannot be combined"))
        let missing = try CommandProcess(["serve", dir.path + "/share", "--port", "0", "--users", dir.path + "/u.json"])
        #expect(await missing.exitStatus() == 2)
        #expect(missing.errorOutput.contains("no users file"))
    }
}
