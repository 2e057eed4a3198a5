import FileshareTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve` on a disk that fills up, on every face that writes: the
/// right error (507), nothing partial, the server goes on, and nothing the
/// log owes is lost.
@Suite("fileshare serve: a full disk on every face")
struct FullDiskTests {
    /// The bytes free on the file system of `path`.
    static func free(_ path: String) -> Int {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return 0 }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }

    /// Fills the file system of `folder` with a file there, leaving about
    /// `leaving` bytes free; its path.
    static func fill(_ folder: String, leaving: Int) throws -> String {
        let path = folder + "/filler"
        let size = max(0, free(folder) - leaving)
        try writeFile(Data(count: size), to: path)
        return path
    }

    /// Every record of the server's log (asked as the test's user), read page by page.
    static func records(_ url: String) async -> [[String: Any]]? {
        var all: [[String: Any]] = []
        var since = 0
        while true {
            guard
                let (status, body) = try? await curl(
                    UploadHostileTests.credentials + [url + "api/changes?since=\(since)&limit=10000"]),
                status == 200,
                let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let page = object["changes"] as? [[String: Any]], let next = object["next"] as? Int
            else { return nil }
            all += page
            if page.isEmpty || next == since { return all }
            since = next
        }
    }

    @Test(
        "a disk that fills up: 507 on the JSON API, WebDAV, tus and resumable uploads and a replace, nothing partial or lost, the server goes on, and the log keeps every change, gapless"
    )
    func everyFace() async throws {
        try Requirement.requireRoot(for: "mounting a small disk")
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let body = try UploadHostileTests.bytes(1 << 20, in: dir, named: "body.bin")
            let done: Void? = try await SmallDisk.with(size: "8m") { mount in
                let share = mount + "/share"
                let (serve, url, _) = try await UploadHostileTests.serve(share)
                let auth = UploadHostileTests.credentials
                // Started while there is room: they go on after the disk fills.
                let (created, resumableToken) = try await UploadHostileTests.startResumable(
                    url, path: "resumable.bin", length: 1 << 20)
                #expect(created == 201)
                let resumable = try #require(resumableToken)
                let (tusCreated, tusToken, _) = try await UploadHostileTests.startTus(
                    url, path: "tus.bin", length: 1 << 20)
                #expect(tusCreated == 201)
                let tus = try #require(tusToken)

                let first = try dir.write(Array("the first draft\n".utf8), to: "draft.txt")
                #expect(try await curlResponse(auth + ["-T", first, url + "api/files/draft.txt"]).status == 201)

                let filler = try Self.fill(mount, leaving: 256 << 10)
                // A file replaced while the disk is full (its old content kept
                // as a version first): refused, and the file as it was.
                let replaced = try await curlResponse(
                    auth + ["-T", body, "-H", "Transfer-Encoding: chunked", url + "api/files/draft.txt"])
                #expect(replaced.status == 507, "\(replaced.status) \(replaced.body)")
                #expect(FileManager.default.contents(atPath: share + "/draft.txt") == Data("the first draft\n".utf8))
                // Sent chunked, so no size is announced: the disk fills while writing.
                for target in ["api/files/api.bin", "dav/dav.bin"] {
                    let answer = try await curlResponse(
                        auth + ["-T", body, "-H", "Transfer-Encoding: chunked", url + target])
                    #expect(answer.status == 507, "\(target): \(answer.status) \(answer.body)")
                    #expect(answer.body.contains("full"), "\(target): \(answer.body)")
                }
                for (token, isTus) in [(resumable, false), (tus, true)] {
                    let answer = try await UploadHostileTests.patch(
                        url, token: token, tus: isTus, offset: 0, file: body)
                    #expect(answer.status == 507, "\(isTus ? "tus" : "resumable"): \(answer.status) \(answer.body)")
                }
                // Made beside the server while the disk is full: the log owes it a record.
                #expect(FileManager.default.createFile(atPath: share + "/made-while-full.txt", contents: nil))
                #expect(
                    UploadHostileTests.visible(share) == ["draft.txt", "made-while-full.txt"],
                    "nothing partial is visible")
                let listing = try await curlResponse(auth + [url + "api/list?path="])
                #expect(listing.status == 200, "the server goes on: \(listing.status) \(listing.body)")

                // Room again: the uploads go on from the offset they report, and a new one lands.
                try FileManager.default.removeItem(atPath: filler)
                for (token, isTus) in [(resumable, false), (tus, true)] {
                    let head = try await UploadHostileTests.head(url, token: token, tus: isTus)
                    let offset = try #require(head.header("Upload-Offset").flatMap { Int($0) }, "\(head.headers)")
                    let rest = try dir.write(
                        [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) - offset), to: "rest-\(token)")
                    let answer = try await UploadHostileTests.patch(
                        url, token: token, tus: isTus, offset: offset, file: rest)
                    #expect(answer.status == 201 || answer.status == 204, "\(answer.status) \(answer.body)")
                }
                let put = try await curlResponse(auth + ["-T", body, url + "api/files/after.bin"])
                #expect(put.status == 201, "\(put.status) \(put.body)")
                for name in ["resumable.bin", "tus.bin", "after.bin"] {
                    let data = FileManager.default.contents(atPath: share + "/" + name)
                    #expect(data == Data(repeating: UInt8(ascii: "x"), count: 1 << 20), "\(name) whole")
                }
                #expect(UploadHostileTests.staging(share).isEmpty, "\(UploadHostileTests.staging(share))")
                // Every change in the log once, numbered without a gap.
                var records: [[String: Any]] = []
                let logged = await waitFor(timeout: .seconds(20)) {
                    records = await Self.records(url) ?? []
                    let paths = Set(records.compactMap { $0["path"] as? String })
                    return paths.isSuperset(of: ["made-while-full.txt", "resumable.bin", "tus.bin", "after.bin"])
                }
                #expect(logged, "\(records.map { $0["path"] ?? "?" })")
                let seqs = records.compactMap { $0["seq"] as? Int }
                #expect(seqs == Array(1...max(1, seqs.count)), "gapless: \(seqs)")
                serve.send(SIGTERM)
                #expect(await serve.exitStatus() == 0)
            }
            if done == nil { Issue.record("cannot mount a small tmpfs here: \(String(cString: strerror(errno)))") }
        }
    }
}
