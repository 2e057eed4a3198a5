import FileshareTestSupport
import Foundation
import Testing

/// The web page in a real browser: Tests/Browser/browser_test.py drives headless
/// Chromium (selenium) against `fileshare serve` — upload, rename, a change on
/// disk shown live, delete; axe-core on the folder view, the upload panel and a
/// preview; the page by keyboard alone. It exits 77 when selenium,
/// axe-selenium-python or Chromium is missing: nothing is recorded then, except
/// on CI, whose .ci/run installs them.
@Suite("web page in a browser", .holdsObservers, .timeLimit(.minutes(10)))
struct BrowserTests {
    @Test(
        "upload, rename, a file made on disk appears live, delete; no axe-core violation; keyboard alone (headless Chromium)"
    )
    func browser() async throws {
        try await runBrowserScript("browser_test.py")
    }
}

/// Tests/Browser/session_browser_test.py: the page's session kept across a
/// restart, and a session ended elsewhere offering the sign-in.
@Suite("the page's session in a browser", .holdsObservers, .timeLimit(.minutes(10)))
struct SessionBrowserTests {
    @Test("a restart keeps the page signed in; a session ended elsewhere says so and offers the sign-in")
    func session() async throws {
        try await runBrowserScript("session_browser_test.py")
    }
}
