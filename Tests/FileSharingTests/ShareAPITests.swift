import FileSharing
import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The JSON API through the router (no sockets) and live, on real folders.
@Suite("JSON API")
struct ShareAPITests {
    @Test("upload, list, download, move, mkdir, delete: statuses and effects")
    func lifecycle() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let created = try await client.request("/api/files/Comics/Issue%201.txt", .put, body: "first")
                #expect(created.status == .created)
                #expect(share.read("Comics/Issue 1.txt") == "first")
                #expect(
                    try await client.request("/api/files/Comics/Issue%201.txt", .put, body: "second!").status == .ok)
                let list = try await client.request("/api/list?path=Comics")
                #expect(list.status == .ok)
                let items = list.json["items"] as? [[String: Any]] ?? []
                #expect(items.count == 1)
                #expect(items.first?["name"] as? String == "Issue 1.txt")
                #expect(items.first?["size"] as? Int == 7)
                #expect((items.first?["modified"] as? String)?.hasSuffix("Z") == true)
                #expect((items.first?["id"] as? String)?.count == 16)
                let download = try await client.request("/api/files/Comics/Issue%201.txt")
                #expect(download.status == .ok && download.text == "second!")
                #expect(download.headers[.eTag] != nil && download.headers[.lastModified] != nil)
                #expect(try await client.request("/api/files/Comics", .put, body: "x").status == .conflict)
                #expect(try await client.request("/api/mkdir", .post, body: #"{"path":"Library"}"#).status == .created)
                #expect(try await client.request("/api/mkdir", .post, body: #"{"path":"Library"}"#).status == .conflict)
                #expect(
                    try await client.request("/api/move", .post, body: #"{"from":"Comics","to":"Library/Comics"}"#)
                        .status == .ok)
                #expect(share.read("Library/Comics/Issue 1.txt") == "second!")
                #expect(
                    try await client.request("/api/move", .post, body: #"{"from":"Comics","to":"x"}"#).status
                        == .notFound)
                try share.write("Other.txt", "o")
                #expect(
                    try await client.request(
                        "/api/move", .post, body: #"{"from":"Other.txt","to":"Library/Comics/Issue 1.txt"}"#
                    ).status == .conflict)
                #expect(
                    try await client.request(
                        "/api/move", .post,
                        body: #"{"from":"Other.txt","to":"Library/Comics/Issue 1.txt","overwrite":true}"#
                    ).status == .ok)
                #expect(share.read("Library/Comics/Issue 1.txt") == "o")
                #expect(try await client.request("/api/files/Library", .delete).status == .noContent)
                #expect(try await client.request("/api/files/Library", .delete).status == .notFound)
                #expect(try await client.request("/api/list?path=missing").status == .notFound)
                #expect(share.visibleTree().isEmpty)
                #expect(share.stagingContent().isEmpty)
            }
        }
    }

    @Test(
        "path traversal in every form is refused and touches nothing",
        arguments: [
            "/api/files/../outside", "/api/files/%2e%2e/outside", "/api/files/a%2fb", "/api/files/a%2Fb",
            "/api/files/a%00b", "/api/files/%c0%ae%c0%ae/outside", "/api/files/.fileshare/staging/x",
            "/api/files/.hidden", "/api/files/a/./b", "/api/files/%zz",
        ])
    func traversal(uri: String) async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("a/b", "inside")
            try await share.test { (client: any TestClientProtocol) async throws in
                for method in [HTTPRequest.Method.get, .put, .delete] {
                    let response = try await client.request(uri, method, body: method == .put ? "evil" : nil)
                    #expect([400, 403, 404].contains(response.status.code), "\(method) \(uri): \(response.status)")
                    #expect(response.json["error"] is String)
                }
            }
            #expect(share.visibleTree() == ["a", "a/b"])
            #expect(share.read("a/b") == "inside")
        }
    }

    @Test("a symbolic link is never followed: one leading out, or one that stays inside, is refused")
    func symlinks() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("real/file.txt", "inside")
            try FileManager.default.createSymbolicLink(atPath: share.path("out"), withDestinationPath: "/etc")
            try FileManager.default.createSymbolicLink(atPath: share.path("up"), withDestinationPath: "../")
            try FileManager.default.createSymbolicLink(atPath: share.path("in"), withDestinationPath: "real")
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/out/passwd").status == .forbidden)
                #expect(try await client.request("/api/files/up/etc/passwd").status == .forbidden)
                #expect(try await client.request("/api/list?path=out").status == .forbidden)
                #expect(try await client.request("/api/files/out/evil", .put, body: "x").status == .forbidden)
                // A link that stays inside is not followed either: rights and hidden names are judged on
                // the path asked, so no path may lead elsewhere.
                let inside = try await client.request("/api/files/in/file.txt")
                #expect(inside.status == .forbidden && inside.text.contains("symbolic link"))
                #expect(try await client.request("/api/files/real/file.txt").text == "inside")
            }
            #expect(!FileManager.default.fileExists(atPath: "/etc/evil"))
        }
    }

    @Test("credentials: none or wrong is 401 with a challenge; right is 200")
    func authentication() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let none = try await client.request("/api/info", authorized: false)
                #expect(none.status == .unauthorized)
                #expect(none.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
                let wrong = try await client.request(
                    "/api/info", headers: [.authorization: "Basic " + Data("alice:nope".utf8).base64EncodedString()],
                    authorized: false)
                #expect(wrong.status == .unauthorized)
                let garbage = try await client.request(
                    "/api/info", headers: [.authorization: "Basic !!!"], authorized: false)
                #expect(garbage.status == .unauthorized)
                #expect(try await client.request("/", authorized: false).status == .unauthorized)
                #expect(try await client.request("/api/info").status == .ok)
            }
        }
    }

    @Test("read-only: every change is 403, reads work")
    func readOnly() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(readOnly: true)
            try share.write("keep.txt", "k")
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/files/new.txt", .put, body: "x").status == .forbidden)
                #expect(try await client.request("/api/files/keep.txt", .delete).status == .forbidden)
                #expect(try await client.request("/api/mkdir", .post, body: #"{"path":"d"}"#).status == .forbidden)
                #expect(
                    try await client.request("/api/move", .post, body: #"{"from":"keep.txt","to":"k2"}"#).status
                        == .forbidden)
                #expect(
                    try await client.request("/api/uploads?path=x", .post, headers: [.init("Upload-Length")!: "1"])
                        .status == .forbidden)
                #expect(try await client.request("/api/files/keep.txt").text == "k")
                #expect(try await client.request("/api/info").json["readOnly"] as? Bool == true)
            }
            #expect(share.visibleTree() == ["keep.txt"])
        }
    }

    @Test("ranges, validators and conditional requests")
    func ranges() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("movie.mp4", "0123456789")
            try await share.test { (client: any TestClientProtocol) async throws in
                let full = try await client.request("/api/files/movie.mp4")
                let etag = try #require(full.headers[.eTag])
                #expect(full.headers[.contentType] == "video/mp4")
                let part = try await client.request("/api/files/movie.mp4", headers: [.range: "bytes=2-5"])
                #expect(part.status == .partialContent && part.text == "2345")
                #expect(part.headers[.contentRange] == "bytes 2-5/10")
                #expect(try await client.request("/api/files/movie.mp4", headers: [.range: "bytes=-3"]).text == "789")
                #expect(try await client.request("/api/files/movie.mp4", headers: [.range: "bytes=7-"]).text == "789")
                let outside = try await client.request("/api/files/movie.mp4", headers: [.range: "bytes=20-30"])
                #expect(outside.status == .rangeNotSatisfiable && outside.headers[.contentRange] == "bytes */10")
                #expect(
                    try await client.request("/api/files/movie.mp4", headers: [.ifNoneMatch: etag]).status
                        == .notModified)
                #expect(
                    try await client.request(
                        "/api/files/movie.mp4", headers: [.ifModifiedSince: full.headers[.lastModified]!]
                    ).status == .notModified)
                let stale = try await client.request(
                    "/api/files/movie.mp4", headers: [.range: "bytes=0-1", .ifRange: "\"other\""])
                #expect(stale.status == .ok && stale.text == "0123456789")
                let head = try await client.request("/api/files/movie.mp4", .head)
                #expect(head.status == .ok && head.headers[.contentLength] == "10" && head.body.readableBytes == 0)
                let attachment = try await client.request("/api/files/movie.mp4?download=1")
                #expect(attachment.headers[.contentDisposition]?.hasPrefix("attachment") == true)
            }
        }
    }

    @Test("resumable upload: continued from the server's offset, wrong offsets refused, cancel leaves nothing")
    func resumable() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let start = try await client.request(
                    "/api/uploads?path=big/file.bin", .post, headers: [.init("Upload-Length")!: "10"])
                #expect(start.status == .created)
                let token = try #require(start.json["upload"] as? String)
                let offset = HTTPField.Name("Upload-Offset")!
                let first = try await client.request(
                    "/api/uploads/\(token)", .patch, headers: [offset: "0"], body: "01234")
                #expect(first.status == .noContent && first.headers[offset] == "5")
                #expect(share.visibleTree().isEmpty, "nothing visible before the end")
                let wrong = try await client.request(
                    "/api/uploads/\(token)", .patch, headers: [offset: "2"], body: "xx")
                #expect(wrong.status == .conflict && wrong.headers[offset] == "5")
                #expect(try await client.request("/api/uploads/\(token)", .head).headers[offset] == "5")
                let last = try await client.request(
                    "/api/uploads/\(token)", .patch, headers: [offset: "5"], body: "56789")
                #expect(last.status == .created)
                #expect(share.read("big/file.bin") == "0123456789")
                #expect(try await client.request("/api/uploads/\(token)", .head).status == .notFound)
                let other = try await client.request(
                    "/api/uploads?path=gone.bin", .post, headers: [.init("Upload-Length")!: "4"])
                let otherToken = try #require(other.json["upload"] as? String)
                _ = try await client.request("/api/uploads/\(otherToken)", .patch, headers: [offset: "0"], body: "ab")
                #expect(try await client.request("/api/uploads/\(otherToken)", .delete).status == .noContent)
                #expect(try await client.request("/api/uploads/\(otherToken)", .head).status == .notFound)
                #expect(try await client.request("/api/uploads/../../etc", .head).status == .notFound)
            }
            #expect(share.visibleTree() == ["big", "big/file.bin"])
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("over the size limit: 413 before anything is written")
    func sizeLimit() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture(maxUpload: 10)
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(
                    try await client.request("/api/files/a.bin", .put, body: String(repeating: "x", count: 11)).status
                        == .contentTooLarge)
                #expect(try await client.request("/api/files/b.bin", .put, body: "small").status == .created)
                #expect(
                    try await client.request("/api/uploads?path=c", .post, headers: [.init("Upload-Length")!: "11"])
                        .status == .contentTooLarge)
            }
            #expect(share.visibleTree() == ["b.bin"])
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("thumbnails: an image that does not decode answers 415, as other files do; a missing one 404")
    func thumbnails() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("Photos/cat.png", "not really a png")
            try share.write("notes.txt", "text")
            #expect(await eventually { share.server.observer.item(at: ItemPath("Photos/cat.png"))?.isWriting == false })
            try await share.test { client in
                let image = try await client.request("/api/thumbnail/Photos/cat.png?v=1")
                #expect(image.status == .unsupportedMediaType)
                #expect(try await client.request("/api/thumbnail/notes.txt").status == .unsupportedMediaType)
                #expect(try await client.request("/api/thumbnail/missing.png").status == .notFound)
            }
        }
    }

    @Test("the OpenAPI document is served, byte for byte the one in the target's resources")
    func openAPI() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let kept = try Data(
                contentsOf: repository.appendingPathComponent("Sources/FileSharing/Resources/openapi.json"))
            try await share.test { client in
                let served = try await client.request("/api/openapi.json")
                #expect(served.status == .ok && served.headers[.contentType] == "application/json")
                #expect(Data(served.body.readableBytesView) == kept)
                let document = served.json
                let paths = (document["paths"] as? [String: Any])?.keys.sorted() ?? []
                #expect(
                    paths.contains("/api/files/{path}") && paths.contains("/api/list") && paths.contains("/api/events"))
            }
        }
    }

    @Test("a folder as a streamed ZIP that unzip and Python's zipfile read back; hidden names and links left out")
    func zipFolder() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("Comics/Issue 1.cbz", "one")
            try share.write("Comics/Été/naïve.txt", String(repeating: "n", count: 300_000))
            try share.write("Comics/.secret", "hidden")
            try FileManager.default.createSymbolicLink(atPath: share.path("Comics/etc"), withDestinationPath: "/etc")
            let archive = share.root + "/../" + UUID().uuidString + ".zip"
            defer { try? FileManager.default.removeItem(atPath: archive) }
            try await share.test { client in
                let response = try await client.request("/api/zip?path=Comics")
                #expect(response.status == .ok && response.headers[.contentType] == "application/zip")
                #expect(response.headers[.contentDisposition]?.contains("Comics.zip") == true)
                try writeFile(Data(response.body.readableBytesView), to: archive)
                #expect(try await client.request("/api/zip?path=../etc").status == .badRequest)
                #expect(try await client.request("/api/zip?path=missing").status == .notFound)
            }
            let check = try await ProgramRun.run(
                "/usr/bin/python3",
                [
                    "-c",
                    """
                    import sys, zipfile
                    z = zipfile.ZipFile(sys.argv[1])
                    assert z.testzip() is None
                    names = sorted(z.namelist())
                    assert names == ["Comics/", "Comics/Issue 1.cbz", "Comics/Été/", "Comics/Été/naïve.txt"], names
                    assert z.read("Comics/Issue 1.cbz") == b"one"
                    assert z.read("Comics/Été/naïve.txt") == b"n" * 300000
                    """, archive,
                ])
            #expect(check.status == 0, "\(check.errorOutput)")
            let unzip = try await ProgramRun.run("/usr/bin/unzip", ["-tq", archive])
            #expect(unzip.status == 0, "\(unzip.output)")
        }
    }

    @Test("a file of several chunks comes back byte for byte, whole and as a range across chunks")
    func largeDownload() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            var random = SystemRandomNumberGenerator()
            let bytes = (0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &random) }
            try writeFile(Data(bytes), to: share.path("big.bin"))
            try await share.test { client in
                let whole = try await client.request("/api/files/big.bin")
                #expect(Array(whole.body.readableBytesView) == bytes)
                let part = try await client.request("/api/files/big.bin", headers: [.range: "bytes=500000-1600000"])
                #expect(Array(part.body.readableBytesView) == Array(bytes[500_000...1_600_000]))
            }
        }
    }

    @Test("a large JPEG's thumbnail is the one embedded in its EXIF block; a large image without one answers 415")
    func exifThumbnail() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let thumbnail: [UInt8] = [0xFF, 0xD8] + [UInt8](repeating: 0x42, count: 200) + [0xFF, 0xD9]
            try Data(TestJPEG.bytes(thumbnail: thumbnail, padding: 5_000_000)).write(
                to: URL(fileURLWithPath: share.path("IMG_0001.jpg")))
            try Data(TestJPEG.bytes(thumbnail: nil, padding: 5_000_000)).write(
                to: URL(fileURLWithPath: share.path("plain.jpg")))
            try share.write("huge.png", String(repeating: "p", count: 5_000_000))
            for name in ["IMG_0001.jpg", "plain.jpg", "huge.png"] {
                #expect(await eventually { share.server.observer.item(at: ItemPath(name))?.isWriting == false })
            }
            try await share.test { client in
                let embedded = try await client.request("/api/thumbnail/IMG_0001.jpg")
                #expect(embedded.status == .ok && embedded.headers[.contentType] == "image/jpeg")
                #expect(Array(embedded.body.readableBytesView) == thumbnail)
                #expect(try await client.request("/api/thumbnail/plain.jpg").status == .unsupportedMediaType)
                #expect(try await client.request("/api/thumbnail/huge.png").status == .unsupportedMediaType)
            }
        }
    }

    @Test(
        "a JPEG without an embedded thumbnail gets one made by libturbojpeg, 256 pixels on its longer side; a corrupt one answers 415"
    )
    func madeThumbnail() async throws {
        try JPEGCodecTests.requireLibrary()
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let (width, height) = (2400, 1600)
            var pixels = [UInt8](repeating: 0, count: width * height * 3)
            for y in 0..<height {
                for x in 0..<width {
                    let i = (y * width + x) * 3
                    pixels[i] = UInt8(x * 255 / width)
                    pixels[i + 1] = UInt8(y * 255 / height)
                    pixels[i + 2] = UInt8((x ^ y) & 0xFF)
                }
            }
            let photo = try #require(try JPEGCodecTests.encode(rgb: pixels, width: width, height: height, quality: 95))
            try writeFile(Data(photo), to: share.path("photo.jpg"))
            try writeFile(
                [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + [UInt8](repeating: 0x13, count: 5_000_000),
                to: share.path("corrupt.jpg"))
            for name in ["photo.jpg", "corrupt.jpg"] {
                #expect(await eventually { share.server.observer.item(at: ItemPath(name))?.isWriting == false })
            }
            try await share.test { client in
                let thumbnail = try await client.request("/api/thumbnail/photo.jpg")
                #expect(thumbnail.status == .ok && thumbnail.headers[.contentType] == "image/jpeg")
                let bytes = Array(thumbnail.body.readableBytesView)
                #expect(bytes.count < photo.count / 4)
                let (thumbWidth, thumbHeight) = try #require(TestJPEG.size(of: bytes))
                #expect(thumbWidth == 256 && thumbHeight == 171, "the size asked for, the aspect kept")
                #expect(try await client.request("/api/thumbnail/corrupt.jpg").status == .unsupportedMediaType)
                #expect(try await client.request("/api/info").status == .ok, "the server survives a corrupt JPEG")
            }
        }
    }
}
