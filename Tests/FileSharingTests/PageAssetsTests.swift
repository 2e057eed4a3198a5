import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The page's files and the OpenAPI document, embedded by SwiftPM and served
/// byte for byte as they are in the target's `Resources/`.
@Suite("Page assets")
struct PageAssetsTests {
    static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/FileSharing/Resources")

    @Test(
        "each asset is served with its type, revalidated on every load, with the bytes of its file",
        arguments: [
            ("/", "index.html", "text/html; charset=utf-8"),
            ("/app.css", "app.css", "text/css; charset=utf-8"),
            ("/app.js", "app.js", "text/javascript; charset=utf-8"),
            ("/gallery.js", "gallery.js", "text/javascript; charset=utf-8"),
            ("/viewer.js", "viewer.js", "text/javascript; charset=utf-8"),
            ("/gallery.css", "gallery.css", "text/css; charset=utf-8"),
            ("/api/openapi.json", "openapi.json", "application/json"),
        ])
    func served(route: String, file: String, type: String) async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let kept = try Data(contentsOf: PageAssetsTests.resources.appendingPathComponent(file))
            #expect(kept.count > 1000)
            try await share.test { client in
                let response = try await client.request(route)
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == type)
                #expect(response.headers[.contentLength] == String(kept.count))
                #expect(response.headers[.cacheControl] == "no-cache")
                #expect(Data(response.body.readableBytesView) == kept)
            }
        }
    }
}
