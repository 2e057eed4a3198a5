import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve --config FILE` end to end: every setting from the file
/// alone, the environment and flags over it, mistakes named by file, line
/// and key, `--check-config`, and reloading on SIGHUP and on a change.
@Suite("fileshare serve --config")
struct ServeConfigurationTests {
    /// The `Serving` line's URL.
    static func url(of serve: CommandProcess) -> String {
        String(serve.lines.first { $0.hasPrefix("Serving ") }?.split(separator: " ").last ?? "")
    }

    /// `--check-config`'s lines, by key: the value and where it came from.
    static func settings(_ lines: [String]) -> [String: (value: String, source: String)] {
        var found: [String: (value: String, source: String)] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), let open = line.range(of: " (", options: .backwards),
                line.hasSuffix(")")
            else { continue }
            let value = line[line.index(after: colon)..<open.lowerBound].trimmingCharacters(in: .whitespaces)
            found[String(line[..<colon])] = (value, String(line[open.upperBound..<line.index(before: line.endIndex)]))
        }
        return found
    }

    /// The port of a URL such as `http://127.0.0.1:8080/`.
    static func port(of url: String) -> Int? {
        url.split(separator: ":").last.flatMap { Int($0.filter(\.isNumber)) }
    }

    /// Connects to 127.0.0.1:`port`, sends `bytes`, then reads until the
    /// server closes (or `limit` passes): what came back and when it closed.
    static func exchange(port: Int, sending bytes: String, limit: Int = 20) throws -> (
        text: String, closedAfter: Duration
    ) {
        let fd = try DrippingClients.connect(port: port, receiveTimeout: limit)
        defer { close(fd) }
        let start = ContinuousClock.now
        DrippingClients.sendAll(fd, Array(bytes.utf8))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return (String(decoding: received, as: UTF8.self), ContinuousClock.now - start)
    }

    /// The width and height of a JPEG, from its first start-of-frame segment.
    static func jpegSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if (0xC0...0xC3).contains(marker) {
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                return (width, height)
            }
            index += 2 + length
        }
        return nil
    }

    /// Makes a self-signed certificate and key in `dir`.
    static func makeCertificate(in dir: TemporaryFolder) async throws {
        let openssl = try await ProgramRun.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                "-keyout", dir.path + "/key.pem", "-out", dir.path + "/cert.pem",
            ])
        try #require(openssl.status == 0, "openssl: \(openssl.errorOutput)")
    }

    @Test(
        "a file alone (no flag) sets the folder, port, address, users, read-only and TLS",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func fileSetsServingOptions() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try await Self.makeCertificate(in: dir)
            let users = dir.path + "/users.json"
            for arguments in [["add", "alice"], ["grant", "alice", "/", "write"]] {
                let run = try await UsersCommandTests.run(arguments, users: users, input: "first password\n")
                try #require(run.status == 0, "\(run)")
            }
            let config = try dir.write(
                """
                folder: \(dir.path)/from-file
                port: 0
                bind: 127.0.0.2
                users: \(users)
                read-only: true
                tls-cert: \(dir.path)/cert.pem
                tls-key: \(dir.path)/key.pem
                """, to: "fileshare.yaml")
            let serve = try CommandProcess(["serve", "--config", config])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            let url = Self.url(of: serve)
            #expect(serve.lines.first?.hasPrefix("Serving \(dir.path)/from-file at https://127.0.0.2:") == true)
            let alice = ["-k", "-u", "alice:first password"]
            #expect(try await curl(alice + [url + "api/info"]).0 == 200)
            #expect(try await curl(["-k", "-u", "alice:wrong", url + "api/info"]).0 == 401)
            // Read-only: a change is refused even for a user who may write.
            #expect(try await curl(alice + ["-T", "/etc/hostname", url + "api/files/x.txt"]).0 == 403)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/from-file/x.txt"))
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "a file alone sets the upload limit, the three timeouts, versions and trash retention, thumbnails and uploads under way"
    )
    func fileSetsLimits() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try FileManager.default.createDirectory(atPath: dir.path + "/share", withIntermediateDirectories: true)
            try await Samples.make(["png", dir.path + "/share/wide.png", "400", "200"])
            let config = try dir.write(
                """
                folder: \(dir.path)/share
                port: 0
                no-auth: true
                max-upload: 1K
                header-timeout: 1
                keep-alive-timeout: 2s
                body-timeout: 3
                versions:
                  max-count: 1
                trash:
                  max-size: 10
                thumbnails:
                  size: 40
                uploads:
                  per-user: 2
                """, to: "fileshare.yaml")
            let serve = try CommandProcess(["serve", "--config", config])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            let url = Self.url(of: serve)
            let port = try #require(Self.port(of: url))
            // max-upload: 1K.
            #expect(
                try await curl([
                    "-X", "PUT", "--data-binary", String(repeating: "x", count: 2000), url + "api/files/big.txt",
                ]).0 == 413)
            for round in 1...3 {
                let put = try await curl(["-X", "PUT", "--data-binary", "round \(round)", url + "api/files/doc.txt"])
                #expect([200, 201, 204].contains(put.0), "\(put)")
            }
            // versions.max-count: 1, where 20 are kept by default.
            let versions = try await curl([url + "api/versions?path=doc.txt"])
            #expect(
                versions.0 == 200 && versions.1.components(separatedBy: "\"version\":").count - 1 == 1, "\(versions)")
            // trash.max-size: 10 bytes: of two files deleted, only the last stays.
            for name in ["a.txt", "b.txt"] {
                _ = try await curl(["-X", "PUT", "--data-binary", "twelve bytes", url + "api/files/" + name])
                #expect(try await curl(["-X", "DELETE", url + "api/files/" + name]).0 == 204)
            }
            let trash = try await curl([url + "api/trash"])
            #expect(trash.1.contains("b.txt") && !trash.1.contains("a.txt"), "\(trash)")
            // thumbnails.size: 40, where 256 is the default.
            if try await curl([url + "api/info"]).1.contains("\"png\"") {
                let thumbnail = try await onOwnThread {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
                    process.arguments = ["-s", url + "api/thumbnail/wide.png"]
                    let pipe = Pipe()
                    process.standardOutput = pipe
                    try process.run()
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    return [UInt8](data)
                }
                let size = try #require(Self.jpegSize(thumbnail))
                #expect(max(size.width, size.height) <= 40 && size.width >= 30, "\(size)")
            } else if ProcessInfo.processInfo.environment["CI"] != nil {
                Issue.record("libpng16 or libturbojpeg is missing (.ci/run installs them)")
            }
            // uploads.per-user: 2.
            var statuses: [Int] = []
            for index in 0..<3 {
                statuses.append(
                    try await curl(["-X", "POST", "-H", "Upload-Length: 10", url + "api/uploads?path=u\(index).bin"]).0)
            }
            #expect(statuses == [201, 201, 429], "\(statuses)")
            // header-timeout: 1 s (60 by default): a header that stops coming gets 408.
            let header = try await onOwnThread { try Self.exchange(port: port, sending: "GET /api/info HTTP/1.1\r\n") }
            #expect(header.text.hasPrefix("HTTP/1.1 408"), "\(header.text)")
            #expect(header.closedAfter < .seconds(8), "\(header.closedAfter)")
            // keep-alive-timeout: 2 s (75 by default): an idle connection is closed.
            let idle = try await onOwnThread {
                try Self.exchange(port: port, sending: "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            }
            #expect(idle.text.hasPrefix("HTTP/1.1 200"), "\(idle.text)")
            #expect(idle.closedAfter < .seconds(8), "\(idle.closedAfter)")
            // body-timeout: 3 s (300 by default; longer than the header's, which
            // would otherwise race it on a header that stops): a body that stops coming is given up.
            let body = try await onOwnThread {
                try Self.exchange(
                    port: port,
                    sending: "PUT /api/files/slow.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nabc")
            }
            #expect(body.closedAfter < .seconds(8), "\(body.closedAfter)")
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/share/slow.txt"))
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "sign-in.free-failures and sign-in.longest-wait: failures past the free ones make every attempt wait, the right password too, never longer than the longest wait"
    )
    func signInThrottleSettings() async throws {
        let dir = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: dir.path + "/share", withIntermediateDirectories: true)
        let config = try dir.write(
            """
            folder: \(dir.path)/share
            port: 0
            user: ann
            password: right-one
            sign-in:
              free-failures: 2
              longest-wait: 2s
            """, to: "fileshare.yaml")
        let serve = try CommandProcess(["serve", "--config", config])
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
        let url = Self.url(of: serve)
        /// The status and Retry-After of each attempt, sent one after the
        /// other by one curl on one connection: within milliseconds of each
        /// other even on a loaded machine, where a curl started for each
        /// took more than the first second's wait.
        func attempts(_ passwords: [String]) async throws -> [(status: Int, retryAfter: String)] {
            var arguments: [String] = []
            for (index, password) in passwords.enumerated() {
                if index > 0 { arguments.append("--next") }
                arguments += [
                    "-s", "-o", "/dev/null", "-w", "%{http_code} %header{retry-after}\\n", "-u", "ann:" + password,
                    url + "api/info",
                ]
            }
            let curl = try await ProgramRun.run("/usr/bin/curl", arguments)
            try #require(curl.status == 0, "curl: \(curl.errorOutput)")
            return curl.output.split(separator: "\n").map { line in
                let parts = line.split(separator: " ", maxSplits: 1)
                return (Int(parts.first ?? "") ?? 0, parts.count > 1 ? String(parts[1]) : "")
            }
        }
        // Two free failures (five by default), and a third that is checked and
        // counted: then even the right password waits its second.
        let first = try await attempts(["wrong", "wrong", "wrong", "right-one"])
        #expect(first.map(\.status) == [401, 401, 401, 429], "\(first)")
        #expect(first.last?.retryAfter == "1", "\(first)")
        // Each failure after a wait doubles it (2 s, 4 s, 8 s), held to 2 s.
        var waits: [String] = []
        for _ in 0..<3 {
            var pair: [(status: Int, retryAfter: String)] = []
            #expect(
                await waitFor(timeout: .seconds(20)) {
                    guard let answers = try? await attempts(["wrong", "wrong"]) else { return false }
                    pair = answers
                    return answers.first?.status == 401
                }, "a wrong password was checked again after its wait")
            #expect(pair.last?.status == 429, "\(pair)")
            waits.append(pair.last?.retryAfter ?? "none")
        }
        // Rounded up from what is left of the wait: 2, or 1 when the second
        // request came late; never the 4 or 8 of a wait not held.
        #expect(waits.allSatisfy { $0 == "1" || $0 == "2" }, "Retry-After after each failure: \(waits)")
        // After the wait the right password signs in.
        #expect(
            await waitFor(timeout: .seconds(20)) { (try? await attempts(["right-one"]).first?.status) == 200 },
            "the right password after the wait")
        serve.send(SIGTERM)
        #expect(await serve.exitStatus() == 0)
    }

    @Test("the environment overrides the file, and a flag overrides both")
    func layers() async throws {
        let dir = try TemporaryFolder()
        let config = try dir.write(
            "port: 1111\nread-only: true\nmax-upload: 1K\nversions:\n  max-count: 3\n", to: "fileshare.yaml")
        func check(_ arguments: [String], environment: [String: String]) async throws -> [String: (
            value: String, source: String
        )] {
            let run = try CommandProcess(
                ["serve", dir.path + "/share", "--check-config", "--config", config] + arguments,
                environment: environment)
            #expect(await run.exitStatus() == 0, "\(run.errorOutput)")
            return Self.settings(run.lines)
        }
        var lines = try await check([], environment: [:])
        #expect(lines["port"]?.value == "1111" && lines["port"]?.source == "file \(config), line 1")
        #expect(lines["versions.max-count"]?.source == "file \(config), line 5")
        lines = try await check([], environment: ["FILESHARE_PORT": "2222", "FILESHARE_VERSIONS_MAX_COUNT": "7"])
        #expect(lines["port"]?.value == "2222" && lines["port"]?.source == "environment FILESHARE_PORT")
        #expect(lines["versions.max-count"]?.value == "7")
        #expect(lines["max-upload"]?.value == "1K" && lines["max-upload"]?.source == "file \(config), line 3")
        lines = try await check(["--port", "3333", "--max-upload", "2K"], environment: ["FILESHARE_PORT": "2222"])
        #expect(lines["port"]?.value == "3333" && lines["port"]?.source == "flag --port")
        #expect(lines["max-upload"]?.value == "2K" && lines["max-upload"]?.source == "flag --max-upload")
        #expect(lines["folder"]?.value == dir.path + "/share" && lines["folder"]?.source == "argument DIR")
        #expect(lines["bind"]?.value == "127.0.0.1" && lines["bind"]?.source == "default")
        // JSON is YAML too.
        let json = try dir.write(#"{"port": 4444,"# + "\n" + #""thumbnails": {"size": 64}}"#, to: "fileshare.json")
        let run = try CommandProcess(["serve", "--check-config", "--config", json])
        #expect(await run.exitStatus() == 0, "\(run.errorOutput)")
        lines = Self.settings(run.lines)
        #expect(lines["port"]?.value == "4444" && lines["port"]?.source == "file \(json), line 1")
        #expect(lines["thumbnails.size"]?.value == "64" && lines["thumbnails.size"]?.source == "file \(json), line 2")

        // And in a running server: the file's read-only and port 1111 lose to the environment.
        try await MachineSettings.shared {
            let serve = try CommandProcess(
                ["serve", "--config", config, dir.path + "/share", "--no-auth"],
                environment: [
                    "FILESHARE_PORT": "0", "FILESHARE_READ_ONLY": "false", "FILESHARE_CONFIG": "/nonexistent",
                ])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            let url = Self.url(of: serve)
            #expect(Self.port(of: url) != 1111)
            #expect(try await curl(["-X", "PUT", "--data-binary", "hello", url + "api/files/a.txt"]).0 == 201)
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "a mistake in the file: exit 2, naming the file, the line and the key; nothing is made",
        arguments: [
            ("bind: 127.0.0.1\nprot: 8080\n", ", line 2: unknown key 'prot'; did you mean 'port'?"),
            ("port: [1, 2]\n", ", line 1: 'port' takes a whole number from 0 to 65535, not a list"),
            ("port: 99999\n", ", line 1: 'port' takes a whole number from 0 to 65535, not '99999'"),
            (
                "versions:\n  max-count: many\n",
                ", line 2: 'versions.max-count' takes a whole number from 0, not 'many'"
            ),
            ("thumbnails:\n  sise: 64\n", ", line 2: unknown key 'thumbnails.sise'; did you mean 'thumbnails.size'?"),
            ("max-count: 4\n", ", line 1: unknown key 'max-count'; did you mean 'versions.max-count'?"),
            ("versions: 5\n", ", line 1: 'versions' is a section"),
            ("max-upload: lots\n", ", line 1: 'max-upload' takes a size such as 500M or 2G, or unlimited, not 'lots'"),
            ("read-only: maybe\n", ", line 1: 'read-only' takes true or false, not 'maybe'"),
            ("header-timeout: 0\n", ", line 1: 'header-timeout' takes a time such as 90s, 30m, 12h or 30d, not '0'"),
            ("port: 80\nport: 81\n", "'port' is given twice"),
            (#"{"port": 80,"# + "\n" + #" "versions": {"max-count": -1}}"#, ", line 2: 'versions.max-count' takes"),
            ("port: 80\n  bind: [\n", "not valid YAML"),
        ])
    func mistakes(text: String, expected: String) async throws {
        let dir = try TemporaryFolder()
        let config = try dir.write(text, to: "bad.yaml")
        for extra in [[], ["--check-config"]] {
            let serve = try CommandProcess(["serve", dir.path + "/share", "--config", config] + extra)
            #expect(await serve.exitStatus() == 2)
            #expect(serve.errorOutput.hasPrefix("fileshare: \(config), line "), "\(serve.errorOutput)")
            #expect(serve.errorOutput.contains(expected), "\(serve.errorOutput)")
            #expect(serve.lines.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/share"))
        }
    }

    @Test("a bad environment variable or flag, and settings that contradict each other: exit 2 naming them")
    func otherMistakes() async throws {
        let dir = try TemporaryFolder()
        let config = try dir.write("tls-cert: \(dir.path)/cert.pem\n", to: "fileshare.yaml")
        for (arguments, environment, expected) in [
            (
                [String](), ["FILESHARE_THUMBNAILS_SIZE": "huge"],
                "FILESHARE_THUMBNAILS_SIZE: 'thumbnails.size' takes a whole number"
            ),
            (["--max-upload", "lots"], [:], "--max-upload: 'max-upload' takes a size"),
            (["--keep-alive-timeout", "-1"], [:], "--keep-alive-timeout: 'keep-alive-timeout' takes a time"),
            (["--config", config], [:], "--tls-cert and --tls-key (tls-cert, tls-key) go together"),
            ([], ["FILESHARE_CONFIG": dir.path + "/missing.yaml"], "missing.yaml: cannot read the configuration file"),
        ] {
            let serve = try CommandProcess(
                ["serve", dir.path + "/share", "--port", "0"] + arguments, environment: environment)
            #expect(await serve.exitStatus() == 2)
            #expect(serve.errorOutput.contains(expected), "\(serve.errorOutput)")
        }
    }

    @Test("--check-config prints every setting, its value and where it came from, and starts nothing")
    func checkConfig() async throws {
        let dir = try TemporaryFolder()
        let config = try dir.write(
            "# a comment\nport: 9000\npassword: hunter22\nuser: me\nversions:\n  max-age: unlimited\n",
            to: "fileshare.yaml")
        let run = try CommandProcess(
            ["serve", "--check-config", "--read-only"], in: dir.path,
            environment: ["FILESHARE_CONFIG": config, "FILESHARE_TRASH_MAX_SIZE": "5G"])
        #expect(await run.exitStatus() == 0, "\(run.errorOutput)")
        let settings = Self.settings(run.lines)
        // One line for each setting of the reference (configuration.md's table).
        let reference = try String(
            contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Documentation/configuration.md").path,
            encoding: .utf8)
        let documented =
            reference.components(separatedBy: "## Every setting").last?.split(separator: "\n")
            .filter { $0.hasPrefix("| `") }.count ?? 0
        #expect(documented > 30, "the reference's table of settings")
        #expect(run.lines.count == documented && settings.count == documented, "\(run.lines)")
        #expect(settings["port"]?.value == "9000" && settings["port"]?.source == "file \(config), line 2")
        #expect(settings["password"]?.value == "(secret)" && settings["password"]?.source == "file \(config), line 3")
        #expect(!run.lines.joined().contains("hunter22") && !run.errorOutput.contains("hunter22"))
        #expect(settings["read-only"]?.value == "true" && settings["read-only"]?.source == "flag --read-only")
        #expect(settings["trash.max-size"]?.value == "5G")
        #expect(settings["trash.max-size"]?.source == "environment FILESHARE_TRASH_MAX_SIZE")
        #expect(settings["versions.max-age"]?.value == "unlimited")
        #expect(settings["folder"]?.value == "./Documents" && settings["folder"]?.source == "default")
        #expect(settings["tls-cert"]?.value == "(not set)" && settings["tls-cert"]?.source == "default")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/Documents"))
    }

    @Test("SIGHUP and a change of the file: retention applies at once, other changes need a restart; each logged")
    func reload() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let users = dir.path + "/users.json"
            for arguments in [["add", "alice", "--admin"]] {
                let run = try await UsersCommandTests.run(arguments, users: users, input: "first password\n")
                try #require(run.status == 0, "\(run)")
            }
            func configuration(maxCount: Int, port: Int, extra: String = "") -> String {
                "folder: \(dir.path)/share\nport: \(port)\nusers: \(users)\nversions:\n  max-count: \(maxCount)\n\(extra)"
            }
            let config = try dir.write(configuration(maxCount: 5, port: 0), to: "fileshare.yaml")
            let serve = try CommandProcess(["serve", "--config", config])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            let url = Self.url(of: serve)
            let alice = ["-u", "alice:first password"]
            for round in 1...5 {
                _ = try await curl(alice + ["-X", "PUT", "--data-binary", "round \(round)", url + "api/files/doc.txt"])
            }
            func versionCount() async throws -> Int {
                try await curl(alice + [url + "api/versions?path=doc.txt"]).1.components(separatedBy: "\"version\":")
                    .count - 1
            }
            #expect(try await versionCount() == 4)
            // A user added while no request comes (the users file is looked at
            // only when one does): SIGHUP reads it at once.
            let added = try await UsersCommandTests.run(["add", "bob"], users: users, input: "bob's password\n")
            try #require(added.status == 0, "\(added)")
            serve.send(SIGHUP)
            #expect(await waitFor { serve.errorOutput.contains("the users file changed") }, "\(serve.errorOutput)")
            #expect(serve.errorOutput.contains("read the configuration again (SIGHUP)"))
            #expect(try await curl(["-u", "bob:bob's password", url + "api/info"]).0 == 200)
            // The file replaced at once (a rename), then SIGHUP.
            let replacement = try dir.write(configuration(maxCount: 2, port: 8123), to: "next.yaml")
            #expect(rename(replacement, config) == 0)
            serve.send(SIGHUP)
            #expect(
                await waitFor { serve.errorOutput.contains("versions.max-count is now 2 (was 5)") },
                "\(serve.errorOutput)")
            #expect(serve.errorOutput.contains("port changed to 8123 in \(config): needs a restart; 0 stays in force"))
            #expect(await waitFor { (try? await versionCount()) == 2 })
            // A change of the file alone, no signal.
            try configuration(maxCount: 1, port: 8123).write(toFile: config, atomically: true, encoding: .utf8)
            #expect(
                await waitFor { serve.errorOutput.contains("versions.max-count is now 1 (was 2)") },
                "\(serve.errorOutput)")
            #expect(await waitFor { (try? await versionCount()) == 1 })
            // Each change is logged once.
            #expect(serve.errorOutput.components(separatedBy: "versions.max-count is now 2").count == 2)
            // A mistake changes nothing, and says so.
            try configuration(maxCount: 9, port: 0, extra: "prot: 1\n").write(
                toFile: config, atomically: true, encoding: .utf8)
            #expect(await waitFor { serve.errorOutput.contains("unknown key 'prot'") }, "\(serve.errorOutput)")
            #expect(serve.errorOutput.contains("the running settings stay"))
            #expect(!serve.errorOutput.contains("versions.max-count is now 9"))
            #expect(try await curl(alice + [url + "api/info"]).0 == 200)
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }
}
