import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The audit, end to end: every change it records names the path it was
/// about, also where the URL does not say it (a restore from the trash or
/// of a version, a resumable upload's parts and its end), and a viewer's
/// ranges of one file are one download.
@Suite("fileshare audit: what was done, and where")
struct AuditPathsTests {
    @Test("restores, resumable uploads and a reader's ranges are audited with their paths")
    func pathsOfEveryChange() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            try FileManager.default.createDirectory(atPath: dir("share/Videos"), withIntermediateDirectories: true)
            try writeFile(Data((0..<200_000).map { UInt8($0 % 251) }), to: dir("share/comic.cbz"))
            let serve = try CommandProcess(["serve", dir("share"), "--port", "0", "--user", "u", "--password", "p"])
            try #require(await serve.waitForLine { $0.hasPrefix("Serving ") }, "\(serve.errorOutput)")
            let url = String(serve.lines.first?.split(separator: " ").last ?? "")
            let user = ["-u", "u:p"]
            func json(_ response: CurlResponse) -> [String: Any] {
                (try? JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any]) ?? [:]
            }
            // A file saved twice (a version), deleted (the trash), restored from both.
            for content in ["one", "two"] {
                let put = try await curlResponse(
                    user + ["-X", "PUT", "--data-binary", content, url + "api/files/a.txt"])
                #expect((200..<300).contains(put.status), "\(put.body)")
            }
            #expect(try await curlResponse(user + ["-X", "DELETE", url + "api/files/a.txt"]).status == 204)
            let trash = json(try await curlResponse(user + [url + "api/trash"]))
            let trashId = try #require((trash["items"] as? [[String: Any]])?.first?["trashId"] as? String)
            let restored = try await curlResponse(
                user + [
                    "-H", "Content-Type: application/json", "-d", #"{"trashId":"\#(trashId)"}"#,
                    url + "api/trash/restore",
                ])
            #expect(restored.status == 200, "\(restored.body)")
            let versions = json(try await curlResponse(user + [url + "api/versions?path=a.txt"]))
            let version = try #require((versions["versions"] as? [[String: Any]])?.first?["version"] as? String)
            let back = try await curlResponse(
                user + [
                    "-H", "Content-Type: application/json", "-d", #"{"path":"a.txt","version":"\#(version)"}"#,
                    url + "api/versions/restore",
                ])
            #expect(back.status == 200, "\(back.body)")
            // A resumable upload in two parts.
            let started = try await curlResponse(
                user + ["-X", "POST", "-H", "Upload-Length: 10", url + "api/uploads?path=Videos/v.bin"])
            let token = try #require(json(started)["upload"] as? String, "\(started.body)")
            for (offset, part) in [(0, "01234"), (5, "56789")] {
                let patched = try await curlResponse(
                    user + [
                        "-X", "PATCH", "-H", "Upload-Offset: \(offset)", "-H",
                        "Content-Type: application/offset+octet-stream", "--data-binary", part,
                        url + "api/uploads/\(token)",
                    ])
                #expect((200..<300).contains(patched.status), "\(patched.body)")
            }
            // A viewer reading a comic's pages: ranges of one file by one client.
            for range in ["0-999", "50000-59999", "100000-100999", "150000-199999", "1000-1999"] {
                #expect(try await curlResponse(user + ["-r", range, url + "api/files/comic.cbz"]).status == 206)
            }
            let expected = [
                ("restore", "a.txt", "from the trash"), ("restore", "a.txt", "version \(version)"),
                ("upload-start", "Videos/v.bin", nil), ("upload-part", "Videos/v.bin", nil),
                ("upload", "Videos/v.bin", nil),
            ]
            func events() async throws -> [[String: Any]] {
                let audit = try CommandProcess(["audit", dir("share"), "--json"])
                _ = await audit.exitStatus()
                return audit.lines.compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
            }
            func has(_ events: [[String: Any]], _ entry: (String, String, String?)) -> Bool {
                events.contains {
                    $0["action"] as? String == entry.0 && $0["path"] as? String == entry.1
                        && (entry.2 == nil || $0["detail"] as? String == entry.2)
                }
            }
            var recorded: [[String: Any]] = []
            #expect(
                await waitFor(timeout: .seconds(30)) {
                    recorded = (try? await events()) ?? []
                    return expected.allSatisfy { has(recorded, $0) }
                }, "\(recorded)")
            // No change without its path.
            let pathless = recorded.filter { $0["path"] == nil && $0["action"] as? String != "signin" }
            #expect(pathless.isEmpty, "\(pathless)")
            #expect(
                recorded.filter { $0["action"] as? String == "download" && $0["path"] as? String == "comic.cbz" }.count
                    == 1)
            // The command a person runs to ask whether a file arrived in Videos says so.
            let videos = try CommandProcess(["audit", dir("share"), "--path", "Videos"])
            #expect(await videos.exitStatus() == 0)
            #expect(videos.lines.contains { $0.contains("upload ") && $0.contains("Videos/v.bin") }, "\(videos.lines)")
            serve.send(SIGTERM)
            #expect(await serve.exitStatus() == 0)
        }
    }
}
