import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve` end to end: the real binary, a real socket, curl.
@Suite("fileshare serve")
struct ServeCommandTests {
    @Test("the first line names the folder and the URL; a random password on stderr; DIR is created; SIGINT exits 0")
    func startsAndStops() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try FileManager.default.createDirectory(atPath: dir.path + "/Shared", withIntermediateDirectories: false)
            let serve = try CommandProcess(["serve", "Shared/Docs", "--port", "0", "--print-changes"], in: dir.path)
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let first = try #require(serve.lines.first)
            let url = String(first.split(separator: " ").last ?? "")
            #expect(first == "Serving \(dir.path)/Shared/Docs at \(url)")
            #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/"))
            var isDirectory: ObjCBool = false
            #expect(
                FileManager.default.fileExists(atPath: dir.path + "/Shared/Docs", isDirectory: &isDirectory)
                    && isDirectory.boolValue)
            #expect(await waitFor { serve.errorOutput.contains("password '") })
            let password = try #require(serve.errorOutput.split(separator: "'").dropFirst(3).first.map(String.init))
            #expect(try await curl([url + "api/info"]).0 == 401)
            #expect(try await curl(["-u", "fileshare:" + password, url + "api/info"]).0 == 200)
            let page = try await curl(["-u", "fileshare:" + password, url])
            #expect(page.0 == 200 && page.1.contains("<html"))
            let upload = try await curl([
                "-u", "fileshare:" + password, "-T", "/etc/hostname", url + "api/files/host.txt",
            ])
            #expect(upload.0 == 201)
            // With --print-changes, changes go to stderr as JSON lines, with their origin.
            #expect(
                await waitFor {
                    serve.errorOutput.contains(#""path":"host.txt""#) && serve.errorOutput.contains(#""origin""#)
                })
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test("credentials from the environment; --read-only answers 403 to changes")
    func environmentAndReadOnly() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let serve = try CommandProcess(
                ["serve", dir.path, "--port", "0", "--read-only"],
                environment: ["FILESHARE_USER": "bob", "FILESHARE_PASSWORD": "pw"])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            #expect(!serve.errorOutput.contains("password '"))
            #expect(try await curl(["-u", "bob:pw", url + "api/info"]).0 == 200)
            #expect(try await curl(["-u", "bob:pw", "-T", "/etc/hostname", url + "api/files/x"]).0 == 403)
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "HTTPS with --tls-cert and --tls-key")
    func https() async throws {
        try ExternalTool.openssl.require()
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try await ServeConfigurationTests.makeCertificate(in: dir)
            let serve = try CommandProcess([
                "serve", dir.path + "/share", "--port", "0", "--no-auth",
                "--tls-cert", dir.path + "/cert.pem", "--tls-key", dir.path + "/key.pem",
            ])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            #expect(url.hasPrefix("https://127.0.0.1:"))
            let info = try await curlResponse(["-k", url + "api/info"])
            #expect(info.status == 200)
            // Browsers are told to come back by HTTPS only.
            #expect(info.header("Strict-Transport-Security") == "max-age=31536000")
            #expect(try await curl([url.replacingOccurrences(of: "https", with: "http") + "api/info"]).0 != 200)
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test("a port that is taken, or a folder another server shares: exit 1 with a clear line")
    func portTaken() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let first = try CommandProcess(["serve", dir.path, "--port", "0", "--no-auth"])
            #expect(await first.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(first.lines.first?.split(separator: " ").last ?? "")
            let port = String(url.split(separator: ":").last?.dropLast() ?? "")
            let other = try TemporaryFolder()
            let second = try CommandProcess(["serve", other.path, "--port", port, "--no-auth"])
            #expect(await second.exitStatus() == 1)
            #expect(second.errorOutput.contains("port \(port)") && second.errorOutput.contains("taken"))
            // The same folder twice: one change log has one writer.
            let third = try CommandProcess(["serve", dir.path, "--port", "0", "--no-auth"])
            #expect(await third.exitStatus() == 1)
            #expect(
                third.errorOutput.contains("another fileshare process is keeping the change log"),
                "\(third.errorOutput)")
            first.send(SIGINT)
            #expect(await first.exitStatus() == 0)
        }
    }

    @Test(
        "bad usage: exit 2, one line, nothing created",
        arguments: [
            ["serve", "D", "--no-auth", "--bind", "0.0.0.0"], ["serve", "D", "--user", "only"],
            ["serve", "D", "--tls-cert", "x.pem"],
            ["serve", "D", "--port", "70000"], ["serve", "D", "--tls-cert", "missing.pem", "--tls-key", "missing.key"],
            ["serve", "D", "--max-upload", "lots"], ["serve", "D", "--accept", "public.imgae"],
            ["serve", "D", "--accept", " , "],
            ["serve", "D", "--accept", "nonsense"], ["serve", "D", "--types", "missing.yaml"],
            ["serve", "D", "--types", "types.ini"],
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

    @Test(
        "a mistyped command or option: exit 2 and the one meant",
        arguments: [
            (["srve", "D"], "'srve' is not a fileshare command; did you mean 'serve'?"),
            (["wach", "D"], "did you mean 'watch'?"), (["audti"], "did you mean 'audit'?"),
            (["serve", "D", "--prot", "1"], "Did you mean '--port'?"),
        ])
    func typos(arguments: [String], meant: String) async throws {
        let dir = try TemporaryFolder()
        let run = try CommandProcess(arguments.map { $0 == "D" ? dir.path + "/new" : $0 }, in: dir.path)
        #expect(await run.exitStatus() == 2)
        #expect(run.errorOutput.contains(meant), "\(run.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/new"))
    }

    @Test("--accept and --types: the line names the problem")
    func badTypes() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let unknown = try CommandProcess(["serve", dir.path + "/new", "--accept", "public.image,public.imgae"])
            #expect(await unknown.exitStatus() == 2)
            #expect(
                unknown.errorOutput.contains("--accept: unknown type 'public.imgae' (did you mean 'public.image'?)"),
                "\(unknown.errorOutput)")
            try "accept: [com.adobe.pdf, public.imgae]\n".write(
                toFile: dir.path + "/types.yaml", atomically: true, encoding: .utf8)
            let file = try CommandProcess(["serve", dir.path + "/new", "--types", dir.path + "/types.yaml"])
            #expect(await file.exitStatus() == 2)
            #expect(
                file.errorOutput.contains("--types: \(dir.path)/types.yaml:1:25: unknown type 'public.imgae'"),
                "\(file.errorOutput)")
            #expect(file.errorOutput.split(separator: "\n").count == 1)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/new"))
        }
    }

    @Test(
        "--accept live: an accepted upload arrives, a refused one answers 415 with the reason and leaves nothing; --types applies its accept"
    )
    func acceptedTypesLive() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
            try writeFile(Data(png), to: dir.path + "/dot.png")
            let pdf = Data("%PDF-1.7\n".utf8) + Data(repeating: 0x20, count: 3 << 20) + Data("\n%%EOF\n".utf8)
            try writeFile(Data(pdf.prefix(2000)), to: dir.path + "/small.pdf")
            try writeFile(pdf, to: dir.path + "/large.pdf")
            let serve = try CommandProcess([
                "serve", dir.path + "/share", "--port", "0", "--no-auth", "--print-changes", "--accept", "public.image",
            ])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            #expect(try await curl([url + "api/info"]).1.contains(#""acceptedTypes":["public.image"]"#))
            #expect(try await curl(["-T", dir.path + "/dot.png", url + "api/files/dot.png"]).0 == 201)
            let reason =
                "the name of 'photo.jpg' says JPEG image, but the content is a PDF document, which this folder does not accept"
            let refused = try await curl(["-T", dir.path + "/small.pdf", url + "api/files/photo.jpg"])
            #expect(refused.0 == 415 && refused.1.contains(reason), "\(refused)")
            // Large: refused once its first bytes have arrived, over a real connection.
            let large = try await curl(["-T", dir.path + "/large.pdf", url + "api/files/photo.jpg"])
            #expect(large.0 == 415 && large.1.contains(reason), "\(large)")
            let dav = try await curl(["-T", dir.path + "/small.pdf", url + "dav/report.pdf"])
            #expect(dav.0 == 415 && dav.1.contains("'report.pdf' is a PDF document"), "\(dav)")
            #expect(try await curl([url + "api/info"]).0 == 200, "the connection and the server are fine")
            #expect(await waitFor { serve.errorOutput.contains(#""path":"dot.png""#) })
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
            #expect(!serve.errorOutput.contains("photo.jpg") && !serve.errorOutput.contains("report.pdf"))
            let shared = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/share").filter {
                !$0.hasPrefix(".")
            }
            #expect(shared == ["dot.png"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/share/.fileshare/staging").isEmpty)

            // A types file: its accept applies.
            try "accept = [\"com.adobe.pdf\"]\n".write(
                toFile: dir.path + "/types.toml", atomically: true, encoding: .utf8)
            let again = try CommandProcess([
                "serve", dir.path + "/share", "--port", "0", "--no-auth", "--types", dir.path + "/types.toml",
            ])
            #expect(await again.waitForLine { $0.hasPrefix("Serving ") })
            let second = String(again.lines.first?.split(separator: " ").last ?? "")
            #expect(try await curl(["-T", dir.path + "/small.pdf", second + "api/files/report.pdf"]).0 == 201)
            #expect(try await curl(["-T", dir.path + "/dot.png", second + "api/files/dot2.png"]).0 == 415)
            again.send(SIGINT)
            #expect(await again.exitStatus() == 0)
        }
    }

    @Test(
        "names that lie, live: refused by default with the reason even without --accept; with --fix-extensions put at the corrected name, reported",
        arguments: [false, true])
    func misleadingNamesLive(fixing: Bool) async throws {
        try await MachineSettings.shared { try await Self.misleadingNames(fixing: fixing) }
    }

    /// The body of ``misleadingNamesLive(fixing:)``.
    static func misleadingNames(fixing: Bool) async throws {
        let dir = try TemporaryFolder()
        try Data("%PDF-1.7\n1 0 obj << >> endobj\n%%EOF\n".utf8).write(
            to: URL(fileURLWithPath: dir.path + "/report.pdf"))
        let options: [String] = fixing ? ["--fix-extensions"] : []
        let serve = try CommandProcess(["serve", dir.path + "/share", "--port", "0", "--no-auth"] + options)
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        let api = try await curlResponse(["-T", dir.path + "/report.pdf", url + "api/files/notes.txt"])
        let dav = try await curlResponse(["-T", dir.path + "/report.pdf", url + "dav/scan.TXT"])
        let (apiStatus, apiBody, apiLocation) = (api.status, api.body, api.header("Location"))
        let (davStatus, davBody, davLocation) = (dav.status, dav.body, dav.header("Location"))
        if fixing {
            #expect(apiStatus == 201, "\(apiBody)")
            #expect(apiBody.contains(#""path":"notes.pdf","requestedPath":"notes.txt""#), "\(apiBody)")
            #expect(apiLocation == "/api/files/notes.pdf")
            #expect(davStatus == 201 && davLocation == "/dav/scan.pdf", "\(davStatus)")
        } else {
            #expect(apiStatus == 415)
            let reason =
                "the name of 'notes.txt' says plain text document, but the content is a PDF document: "
                + "rename it 'notes.pdf', or have such names corrected (--fix-extensions)"
            #expect(apiBody.contains(reason), "\(apiBody)")
            #expect(davStatus == 415 && davBody.contains("rename it 'scan.pdf'"), "\(davBody)")
        }
        serve.send(SIGINT)
        #expect(await serve.exitStatus() == 0)
        let shared = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/share").filter {
            !$0.hasPrefix(".")
        }
        let expected: [String] = fixing ? ["notes.pdf", "scan.pdf"] : []
        #expect(shared.sorted() == expected)
    }
}
