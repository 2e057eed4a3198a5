import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What several `fileshare serve` processes of one folder share besides the
/// change log: WebDAV locks (in the database) and resumable uploads (their
/// bytes on the shared folder). Reuses `SeveralServersTests`' servers.
@Suite("several servers: locks and uploads", .timeLimit(.minutes(10)))
struct SeveralServersLockTests {
    typealias Server = SeveralServersTests.Server

    static let lockInfo = """
        <?xml version="1.0" encoding="utf-8" ?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype><D:owner><D:href>tester</D:href></D:owner></D:lockinfo>
        """

    /// `LOCK /dav/path` (depth 0, ten minutes).
    static func lock(_ server: Server, _ path: String) async throws -> CurlResponse {
        try await curlResponse([
            "-X", "LOCK", "-H", "Content-Type: text/xml", "-H", "Depth: 0", "-H", "Timeout: Second-600",
            "--data-binary", lockInfo, server.url + "dav/" + path,
        ])
    }

    /// The status of one request to `/dav/path` on `server`.
    static func dav(_ server: Server, _ method: String, _ path: String, _ extra: [String] = []) async -> Int {
        await SeveralServersTests.status(["-X", method] + extra + [server.url + "dav/" + path])
    }

    @Test("a lock taken on one server is honoured by the others (423); unlocked on a third, the first is free")
    func locksAcrossServers() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                var servers: [Server] = []
                for _ in 0..<3 { servers.append(try await SeveralServersTests.start(dir.path, database: database.url)) }
                defer { for server in servers { server.process.send(SIGKILL) } }
                let (a, b, c) = (servers[0], servers[1], servers[2])
                #expect(await Self.dav(a, "PUT", "doc.txt", ["--data-binary", "first"]) == 201)

                let locked = try await Self.lock(a, "doc.txt")
                #expect(locked.status == 200, "\(locked.body)")
                let token = try #require(locked.header("Lock-Token"), "\(locked.headers)")
                for other in [b, c] {
                    #expect(await Self.dav(other, "PUT", "doc.txt", ["--data-binary", "other"]) == 423)
                    #expect(await Self.dav(other, "DELETE", "doc.txt") == 423)
                    #expect(
                        await Self.dav(other, "MOVE", "doc.txt", ["-H", "Destination: \(other.url)dav/moved.txt"])
                            == 423)
                    #expect(try await Self.lock(other, "doc.txt").status == 423)
                    // The JSON API honours WebDAV locks too.
                    #expect(
                        await SeveralServersTests.status(["-T", "/etc/hostname", other.url + "api/files/doc.txt"])
                            == 423)
                    // And the other servers show it.
                    let found = try await curlResponse([
                        "-X", "PROPFIND", "-H", "Depth: 0", other.url + "dav/doc.txt",
                    ])
                    #expect(found.status == 207 && found.body.contains(token.dropFirst().dropLast()), "\(found.body)")
                }
                // The lock's token, sent to another server, is honoured there.
                #expect(
                    await Self.dav(b, "PUT", "doc.txt", ["-H", "If: (\(token))", "--data-binary", "second"]) == 204)
                #expect(await Self.dav(c, "UNLOCK", "doc.txt", ["-H", "Lock-Token: \(token)"]) == 204)
                #expect(await Self.dav(a, "PUT", "doc.txt", ["--data-binary", "third"]) == 204)
                #expect(try await Self.lock(b, "doc.txt").status == 200)
                #expect(try String(contentsOfFile: dir.path + "/doc.txt", encoding: .utf8) == "third")
            }
        }
    }

    @Test(
        "the database stopped: LOCK and writes answer 503 with a reason; once it is back, without a restart, locks work"
    )
    func databaseStopped() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                let server = try await SeveralServersTests.start(dir.path, database: database.url)
                defer { server.process.send(SIGKILL) }
                #expect(await Self.dav(server, "PUT", "doc.txt", ["--data-binary", "first"]) == 201)
                let locked = try await Self.lock(server, "doc.txt")
                let token = try #require(locked.header("Lock-Token"), "\(locked.status) \(locked.body)")

                await database.stop()
                let refused = try await Self.lock(server, "other.txt")
                #expect(refused.status == 503, "\(refused.body)")
                #expect(refused.body.contains("database"), "a reason: \(refused.body)")
                // A write that must check the locks is refused too, never let through.
                #expect(await Self.dav(server, "PUT", "doc.txt", ["--data-binary", "x"]) == 503)
                #expect(
                    await SeveralServersTests.status(["-T", "/etc/hostname", server.url + "api/files/doc.txt"]) == 503)

                try await database.startAgain()
                var last: CurlResponse?
                let back = await waitFor(timeout: .seconds(30)) {
                    last = try? await Self.lock(server, "again.txt")
                    // 201: a lock on a new name makes an empty file there.
                    return last?.status == 201
                }
                #expect(back, "LOCK works again (last: \(last?.status ?? 0) \(last?.body ?? ""))")
                // The lock taken before is still held.
                #expect(await Self.dav(server, "PUT", "doc.txt", ["--data-binary", "x"]) == 423)
                #expect(await Self.dav(server, "UNLOCK", "doc.txt", ["-H", "Lock-Token: \(token)"]) == 204)
                #expect(try String(contentsOfFile: dir.path + "/doc.txt", encoding: .utf8) == "first")
            }
        }
    }

    @Test("a tus upload started on one server goes on on a second and finishes on a third, byte for byte, one change")
    func tusAcrossServers() async throws {
        try await MachineSettings.shared {
            try await withPostgres { database in
                let dir = try TemporaryFolder()
                var servers: [Server] = []
                for _ in 0..<3 { servers.append(try await SeveralServersTests.start(dir.path, database: database.url)) }
                defer { for server in servers { server.process.send(SIGKILL) } }
                let content = (0..<3000).map { "line \($0)\n" }.joined()
                let bytes = Array(content.utf8)
                let third = bytes.count / 3
                let parts = [bytes[..<third], bytes[third..<(2 * third)], bytes[(2 * third)...]]
                let name = Data("travel.txt".utf8).base64EncodedString()
                let created = try await curlResponse([
                    "-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: \(bytes.count)",
                    "-H", "Upload-Metadata: path \(name)", servers[0].url + "api/tus/",
                ])
                #expect(created.status == 201, "\(created.body)")
                let location = try #require(created.header("Location"))
                let scratch = try TemporaryFolder()
                var offset = 0
                for (index, part) in parts.enumerated() {
                    let chunk = scratch("part\(index)")
                    try writeFile(Data(part), to: chunk)
                    let url = servers[index].url + location.dropFirst()
                    let patched = try await curlResponse([
                        "-X", "PATCH", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Offset: \(offset)",
                        "-H", "Content-Type: application/offset+octet-stream", "--data-binary", "@" + chunk, url,
                    ])
                    offset += part.count
                    #expect(patched.status == 204, "server \(index): \(patched.body)")
                    #expect(patched.header("Upload-Offset") == String(offset))
                }
                #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/travel.txt")) == Data(bytes))
                // One change for the file, as every server reads the log.
                var made: [[String: Any]] = []
                let logged = await waitFor(timeout: .seconds(20)) {
                    made = (await SeveralServersTests.records(servers[2].url) ?? []).filter {
                        $0["path"] as? String == "travel.txt"
                    }
                    return !made.isEmpty
                }
                #expect(logged && made.count == 1 && made.first?["type"] as? String == "added", "\(made)")
                #expect((made.first?["origin"] as? [String: Any])?["face"] as? String == "tus", "\(made)")
            }
        }
    }
}
