import FileshareTestSupport
import Foundation
import Testing

/// The page's gallery and viewer in a real browser: Tests/Browser/gallery_test.py
/// drives headless Chromium (selenium) against `fileshare serve` — the
/// gallery toggle remembered per folder, only the visible thumbnails asked
/// for in a folder of 3,000, the viewer's keys, the comic reader's natural
/// page order, Markdown rendered inert; axe-core on each. It exits 77 when
/// selenium, axe-selenium-python or Chromium is missing: nothing is recorded
/// then, except on CI, whose .ci/run installs them.
@Suite("gallery and viewer in a browser", .holdsObservers, .timeLimit(.minutes(10)))
struct GalleryBrowserTests {
    @Test(
        "gallery remembered per folder, only visible thumbnails asked for, viewer keys, comic pages in natural order, Markdown inert"
    )
    func gallery() async throws {
        try await runBrowserScript("gallery_test.py")
    }
}
