import FileshareTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `fileshare serve` end to end: the real binary, a real socket, curl.
@Suite("fileshare serve")
struct ServeCommandTests {
    /// Runs curl and returns (status, body).
    func curl(_ arguments: [String]) throws -> (Int, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "10"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test("the first line names the folder and the URL; a random password on stderr; DIR is created; SIGINT exits 0")
    func startsAndStops() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let serve = try CommandProcess(["serve", "Shared/Docs", "--port", "0"], in: dir.path)
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let first = try #require(serve.lines.first)
            let url = String(first.split(separator: " ").last ?? "")
            #expect(first == "Serving \(dir.path)/Shared/Docs at \(url)")
            #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/"))
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: dir.path + "/Shared/Docs", isDirectory: &isDirectory) && isDirectory.boolValue)
            #expect(await waitFor { serve.errorOutput.contains("password '") })
            let password = try #require(serve.errorOutput.split(separator: "'").dropFirst(3).first.map(String.init))
            #expect(try curl([url + "api/info"]).0 == 401)
            #expect(try curl(["-u", "fileshare:" + password, url + "api/info"]).0 == 200)
            let page = try curl(["-u", "fileshare:" + password, url])
            #expect(page.0 == 200 && page.1.contains("<html"))
            let upload = try curl(["-u", "fileshare:" + password, "-T", "/etc/hostname", url + "api/files/host.txt"])
            #expect(upload.0 == 201)
            // Changes go to stderr as JSON lines, with their origin.
            #expect(await waitFor { serve.errorOutput.contains(#""path":"host.txt""#) && serve.errorOutput.contains(#""origin""#) })
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test("credentials from the environment; --read-only answers 403 to changes")
    func environmentAndReadOnly() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let serve = try CommandProcess(["serve", dir.path, "--port", "0", "--read-only"],
                                           environment: ["FILESHARE_USER": "bob", "FILESHARE_PASSWORD": "pw"])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            #expect(!serve.errorOutput.contains("password '"))
            #expect(try curl(["-u", "bob:pw", url + "api/info"]).0 == 200)
            #expect(try curl(["-u", "bob:pw", "-T", "/etc/hostname", url + "api/files/x"]).0 == 403)
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test("HTTPS with --tls-cert and --tls-key", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func https() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let openssl = Process()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                                 "-keyout", dir.path + "/key.pem", "-out", dir.path + "/cert.pem"]
            openssl.standardError = FileHandle.nullDevice
            try openssl.run()
            openssl.waitUntilExit()
            let serve = try CommandProcess(["serve", dir.path + "/share", "--port", "0", "--no-auth",
                                            "--tls-cert", dir.path + "/cert.pem", "--tls-key", dir.path + "/key.pem"])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            #expect(url.hasPrefix("https://127.0.0.1:"))
            #expect(try curl(["-k", url + "api/info"]).0 == 200)
            #expect(try curl([url.replacingOccurrences(of: "https", with: "http") + "api/info"]).0 != 200)
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test("a port that is taken: exit 1 with a clear line")
    func portTaken() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let first = try CommandProcess(["serve", dir.path, "--port", "0", "--no-auth"])
            #expect(await first.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(first.lines.first?.split(separator: " ").last ?? "")
            let port = String(url.split(separator: ":").last?.dropLast() ?? "")
            let second = try CommandProcess(["serve", dir.path, "--port", port, "--no-auth"])
            #expect(await second.exitStatus() == 1)
            #expect(second.errorOutput.contains("port \(port)") && second.errorOutput.contains("taken"))
            first.send(SIGINT)
            #expect(await first.exitStatus() == 0)
        }
    }

    @Test("bad usage: exit 2, one line, nothing created",
          arguments: [
            ["serve", "D", "--no-auth", "--bind", "0.0.0.0"], ["serve", "D", "--user", "only"], ["serve", "D", "--tls-cert", "x.pem"],
            ["serve", "D", "--port", "70000"], ["serve", "D", "--tls-cert", "missing.pem", "--tls-key", "missing.key"],
            ["serve", "D", "--max-upload", "lots"],
          ])
    func badUsage(arguments: [String]) async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let run = try CommandProcess(arguments.map { $0 == "D" ? dir.path + "/new" : $0 }, in: dir.path)
            #expect(await run.exitStatus() == 2)
            #expect(run.errorOutput.split(separator: "\n").count == 1, "\(run.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/new"))
        }
    }
}

func waitFor(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<1000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
