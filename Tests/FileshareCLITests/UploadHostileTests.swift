import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Uploads against the real binary as a hostile or unlucky client leaves
/// them: cut by a crash, left unfinished by the hundred, with numbers
/// past what a file can hold.
@Suite("fileshare serve: uploads cut, piled up or malformed")
struct UploadHostileTests {
    static let credentials = ["-u", "u:p"]
    static let authorization = "Authorization: Basic " + Data("u:p".utf8).base64EncodedString()

    /// A server on `share` with one user (`u:p`); its URL and port.
    static func serve(_ share: String) async throws -> (CommandProcess, url: String, port: Int) {
        let serve = try CommandProcess(["serve", share, "--port", "0", "--user", "u", "--password", "p"])
        #expect(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
        let url = String(serve.lines.first?.split(separator: " ").last ?? "")
        let port = try #require(ServeLimitsTests.port(of: serve))
        return (serve, url, port)
    }

    /// The names in the server's staging folder.
    static func staging(_ share: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: share + "/.fileshare/staging")) ?? []).sorted()
    }

    /// Every file and folder a client sees (the private folder left out).
    static func visible(_ share: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: share)
        var found: [String] = []
        while let name = enumerator?.nextObject() as? String {
            if name.hasPrefix(".fileshare") { continue }
            found.append(name)
        }
        return found.sorted()
    }

    /// A file of `count` bytes to send with curl.
    static func bytes(_ count: Int, in dir: TemporaryFolder, named name: String) throws -> String {
        try dir.write([UInt8](repeating: UInt8(ascii: "x"), count: count), to: name)
    }

    /// Starts a resumable upload of `length` bytes on `/api/uploads`; its token.
    static func startResumable(_ url: String, path: String, length: Int) async throws -> (Int, String?) {
        let answer = try await curlResponse(
            credentials + ["-X", "POST", "-H", "Upload-Length: \(length)", url + "api/uploads?path=\(path)"])
        let token = answer.header("Location").map { String($0.split(separator: "/").last ?? "") }
        return (answer.status, token)
    }

    /// Starts a tus upload of `length` bytes; its status, `Location` and answer.
    static func startTus(_ url: String, path: String, length: Int) async throws -> (Int, String?, CurlResponse) {
        let metadata = "path " + Data(path.utf8).base64EncodedString()
        let answer = try await curlResponse(
            credentials + [
                "-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: \(length)", "-H",
                "Upload-Metadata: \(metadata)", url + "api/tus/",
            ])
        let token = answer.header("Location").map { String($0.split(separator: "/").last ?? "") }
        return (answer.status, token, answer)
    }

    /// Sends `file` as the chunk at `offset` of a resumable (`tus`: a tus) upload.
    static func patch(_ url: String, token: String, tus: Bool, offset: Int, file: String) async throws
        -> CurlResponse
    {
        let tusHeaders =
            tus
            ? ["-H", "Tus-Resumable: 1.0.0", "-H", "Content-Type: application/offset+octet-stream"] : []
        return try await curlResponse(
            credentials + tusHeaders + [
                "-X", "PATCH", "-H", "Upload-Offset: \(offset)", "--data-binary", "@" + file,
                url + (tus ? "api/tus/" : "api/uploads/") + token,
            ])
    }

    /// Where an upload stands (`HEAD`).
    static func head(_ url: String, token: String, tus: Bool) async throws -> CurlResponse {
        try await curlResponse(
            credentials + (tus ? ["-H", "Tus-Resumable: 1.0.0"] : []) + [
                "-I", url + (tus ? "api/tus/" : "api/uploads/") + token,
            ])
    }

    /// A connection that sends the head of a `PUT` of `length` bytes to
    /// `target` and `sent` bytes of its body, then nothing more.
    static func slowPut(port: Int, target: String, length: Int, sent: Int) throws -> Int32 {
        let fd = try DrippingClients.connect(port: port)
        let head =
            "PUT \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(authorization)\r\nContent-Length: \(length)\r\n\r\n"
        DrippingClients.sendAll(fd, Array(head.utf8) + [UInt8](repeating: UInt8(ascii: "y"), count: sent))
        return fd
    }

    @Test(
        "uploads cut by kill -9 or a stop are cleaned at the next start, on every face; resumable and tus uploads are kept and finish"
    )
    func cutUploadsAreCleaned() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let share = dir.path + "/share"
            var (serve, url, port) = try await Self.serve(share)
            let half = try Self.bytes(100_000, in: dir, named: "half.bin")
            // A resumable upload and a tus upload, each half sent.
            let (created, resumable) = try await Self.startResumable(url, path: "resumable.bin", length: 200_000)
            #expect(created == 201)
            let resumableToken = try #require(resumable)
            #expect(try await Self.patch(url, token: resumableToken, tus: false, offset: 0, file: half).status == 204)
            let (tusCreated, tus, _) = try await Self.startTus(url, path: "tus.bin", length: 200_000)
            #expect(tusCreated == 201)
            let tusToken = try #require(tus)
            #expect(try await Self.patch(url, token: tusToken, tus: true, offset: 0, file: half).status == 204)
            // A JSON API PUT and a WebDAV PUT, each with 1.5 MiB of 8 MiB sent (written past the first MiB).
            let put = try Self.slowPut(port: port, target: "/api/files/put.bin", length: 8 << 20, sent: 3 << 19)
            defer { close(put) }
            let dav = try Self.slowPut(port: port, target: "/dav/dav.bin", length: 8 << 20, sent: 3 << 19)
            defer { close(dav) }
            let staged = await waitFor(timeout: .seconds(30)) {
                let cut = Self.staging(share).filter { !$0.hasPrefix("resumable-") }
                let sizes = cut.map {
                    ((try? FileManager.default.attributesOfItem(atPath: share + "/.fileshare/staging/" + $0))?[.size]
                        as? Int) ?? 0
                }
                return cut.count == 2 && sizes.allSatisfy { $0 >= 1 << 20 }
            }
            #expect(staged, "both PUTs are staged: \(Self.staging(share))")
            serve.send(SIGKILL)
            _ = await serve.exitStatus()

            (serve, url, port) = try await Self.serve(share)
            let kept = [resumableToken, tusToken].flatMap { ["resumable-\($0)", "resumable-\($0).info"] }.sorted()
            #expect(Self.staging(share) == kept, "only the uploads that may go on are kept")
            #expect(Self.visible(share).isEmpty, "nothing partial is visible: \(Self.visible(share))")
            let resumableHead = try await Self.head(url, token: resumableToken, tus: false)
            #expect(resumableHead.header("Upload-Offset") == "100000")
            #expect(try await Self.head(url, token: tusToken, tus: true).header("Upload-Offset") == "100000")
            let finished = try await Self.patch(url, token: resumableToken, tus: false, offset: 100_000, file: half)
            #expect(finished.status == 201)
            #expect(try await Self.patch(url, token: tusToken, tus: true, offset: 100_000, file: half).status == 204)
            for name in ["resumable.bin", "tus.bin"] {
                let size = (try? FileManager.default.attributesOfItem(atPath: share + "/" + name))?[.size] as? Int
                #expect(size == 200_000, "\(name)")
            }
            #expect(Self.staging(share).isEmpty)

            // A stop (SIGTERM) with a PUT under way, whose client then goes:
            // nothing of it is left, and nothing at the next start.
            let stopped = try Self.slowPut(port: port, target: "/api/files/late.bin", length: 8 << 20, sent: 3 << 19)
            #expect(await waitFor(timeout: .seconds(30)) { !Self.staging(share).isEmpty })
            serve.send(SIGTERM)
            close(stopped)
            #expect(await serve.exitStatus(timeout: .seconds(60)) == 0)
            (serve, url, port) = try await Self.serve(share)
            #expect(Self.staging(share).isEmpty, "\(Self.staging(share))")
            #expect(Self.visible(share) == ["resumable.bin", "tus.bin"])
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "pending uploads: 20 per user on both faces, refused with 429 after, counted across a restart; a day without a chunk ends one, at start"
    )
    func pendingUploadsAreBounded() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let share = dir.path + "/share"
            var (serve, url, _) = try await Self.serve(share)
            let options = try await curlResponse(
                Self.credentials + ["-X", "OPTIONS", "-H", "Tus-Resumable: 1.0.0", url + "api/tus/"])
            #expect(options.header("Tus-Extension")?.contains("expiration") == true, "\(options.headers)")
            // The drop-box scenario: many opened at once, each declaring 1 MB.
            var tokens: [(token: String, tus: Bool)] = []
            var refused: [CurlResponse] = []
            for index in 0..<25 {
                let tus = index % 2 == 1
                let answer: CurlResponse
                if tus {
                    answer = try await Self.startTus(url, path: "f\(index).bin", length: 1_000_000).2
                } else {
                    answer = try await curlResponse(
                        Self.credentials + [
                            "-X", "POST", "-H", "Upload-Length: 1000000", url + "api/uploads?path=f\(index).bin",
                        ])
                }
                if answer.status == 201, let location = answer.header("Location") {
                    tokens.append((String(location.split(separator: "/").last ?? ""), tus))
                    let expires = try #require(answer.header("Upload-Expires"), "\(answer.headers)")
                    let date = try #require(Self.httpDate(expires))
                    let hours = date.timeIntervalSinceNow / 3600
                    #expect(hours > 23.9 && hours <= 24.01, "Upload-Expires: \(expires)")
                } else {
                    refused.append(answer)
                }
            }
            #expect(tokens.count == 20, "\(tokens.count) of 25 opened")
            #expect(refused.count == 5)
            for answer in refused {
                #expect(answer.status == 429, "\(answer.status) \(answer.body)")
                #expect(answer.body.contains("20 uploads under way"), "\(answer.body)")
            }
            #expect(refused.contains { $0.header("Tus-Resumable") == "1.0.0" }, "tus's refusals are tus answers")
            // Ending one makes room for one.
            let cancelled = try await curlResponse(
                Self.credentials + ["-X", "DELETE", url + "api/uploads/" + tokens[0].token])
            #expect(cancelled.status == 204)
            tokens.removeFirst()
            let (again, token) = try await Self.startResumable(url, path: "again.bin", length: 10)
            #expect(again == 201)
            tokens.append((try #require(token), false))
            #expect(try await Self.startResumable(url, path: "more.bin", length: 10).0 == 429)
            // A declared size past the free disk space: 507 on both faces.
            let huge = 1 << 62
            #expect(try await Self.startResumable(url, path: "huge.bin", length: huge).0 == 507)
            #expect(try await Self.startTus(url, path: "huge.bin", length: huge).0 == 507)

            // Still counted after a restart.
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            (serve, url, _) = try await Self.serve(share)
            #expect(try await Self.startResumable(url, path: "more.bin", length: 10).0 == 429)
            // Five no chunk came to for more than a day: gone at the next start, files and all.
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
            let old = Date(timeIntervalSinceNow: -25 * 3600)
            for (token, _) in tokens.prefix(5) {
                for name in ["resumable-\(token)", "resumable-\(token).info"] {
                    try FileManager.default.setAttributes(
                        [.modificationDate: old], ofItemAtPath: share + "/.fileshare/staging/" + name)
                }
            }
            (serve, url, _) = try await Self.serve(share)
            for (token, tus) in tokens.prefix(5) {
                #expect(try await Self.head(url, token: token, tus: tus).status == 404)
                #expect(!Self.staging(share).contains { $0.contains(token) })
            }
            for (token, tus) in tokens.dropFirst(5) {
                let head = try await Self.head(url, token: token, tus: tus)
                #expect(head.status == (tus ? 200 : 204) && head.header("Upload-Expires") != nil, "\(head.headers)")
            }
            #expect(Self.staging(share).count == 2 * 15)
            for index in 0..<5 {
                #expect(try await Self.startResumable(url, path: "new\(index).bin", length: 10).0 == 201)
            }
            #expect(try await Self.startResumable(url, path: "more.bin", length: 10).0 == 429)
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "byte counts and offsets past 2^63 - 1 are 400 naming the header, on both faces and for a body's framing",
        arguments: ["99999999999999999999", "9223372036854775808", "-1", "12abc"])
    func overflowingNumbers(value: String) async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let share = dir.path + "/share"
            let (serve, url, port) = try await Self.serve(share)
            let (_, token) = try await Self.startResumable(url, path: "r.bin", length: 10)
            let resumable = try #require(token)
            let (_, tus, _) = try await Self.startTus(url, path: "t.bin", length: 10)
            let tusToken = try #require(tus)
            let tusHeaders = ["-H", "Tus-Resumable: 1.0.0"]
            let metadata = "Upload-Metadata: path " + Data("o.bin".utf8).base64EncodedString()
            let chunk = ["-H", "Content-Type: application/offset+octet-stream", "--data-binary", "x"]
            let cases: [(header: String, arguments: [String])] = [
                ("Upload-Length", ["-X", "POST", "-H", "Upload-Length: \(value)", url + "api/uploads?path=o.bin"]),
                (
                    "Upload-Offset",
                    [
                        "-X", "PATCH", "-H", "Upload-Offset: \(value)", "--data-binary", "x",
                        url + "api/uploads/" + resumable,
                    ]
                ),
                (
                    "Upload-Length",
                    tusHeaders + ["-X", "POST", "-H", "Upload-Length: \(value)", "-H", metadata, url + "api/tus/"]
                ),
                (
                    "Upload-Offset",
                    tusHeaders + chunk + ["-X", "PATCH", "-H", "Upload-Offset: \(value)", url + "api/tus/" + tusToken]
                ),
            ]
            for (header, arguments) in cases {
                let answer = try await curlResponse(Self.credentials + arguments)
                #expect(answer.status == 400, "\(header): \(value): \(answer.status) \(answer.body)")
                #expect(answer.body.contains(header), "\(header): \(answer.body)")
            }
            // The framing of a body: a Content-Length or a chunk size (hexadecimal) past what a number
            // holds, on both faces that take a body whole; and a Content-Range, which no PUT takes.
            var framings = ["Content-Length: \(value)", "Content-Range: bytes 0-0/\(value)"]
            if value.utf8.contains(where: { !$0.isHexDigit }) || value.count > 16 {
                framings.append("Transfer-Encoding: chunked")
            }
            for target in ["/api/files/framed.bin", "/dav/framed.bin"] {
                for framing in framings {
                    let fd = try DrippingClients.connect(port: port, receiveTimeout: 10)
                    defer { close(fd) }
                    let chunked = framing.hasPrefix("Transfer")
                    let length = framing.hasPrefix("Content-Length") || chunked ? "" : "Content-Length: 1\r\n"
                    let body = chunked ? "\(value)\r\nx\r\n0\r\n\r\n" : "x"
                    let request =
                        "PUT \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(Self.authorization)\r\n\(framing)\r\n\(length)\r\n\(body)"
                    DrippingClients.sendAll(fd, Array(request.utf8))
                    let answer = await onOwnThread { Self.receiveAnswer(fd) }
                    #expect(answer.hasPrefix("HTTP/1.1 400"), "\(target) \(framing): \(answer.prefix(300))")
                    if framing.hasPrefix("Content-Range") {
                        #expect(answer.contains("Content-Range"), "\(target) \(framing): \(answer.prefix(300))")
                    }
                }
            }
            #expect(!serve.errorOutput.contains("request failed"), "\(serve.errorOutput)")
            #expect(Self.visible(share).isEmpty)
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }

    /// One answer: its head, and its body of `Content-Length` bytes (or
    /// what came until the server closed or stopped sending).
    static func receiveAnswer(_ fd: Int32) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        func complete() -> Bool {
            let text = String(decoding: received, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { return false }
            let length =
                text[..<end.lowerBound].split(separator: "\r\n").first {
                    $0.lowercased().hasPrefix("content-length:")
                }.flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            return text.utf8.count - text[..<end.upperBound].utf8.count >= length
        }
        while !complete() {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// An IMF-fixdate.
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}

extension UInt8 {
    /// Whether this is an ASCII hexadecimal digit.
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
