import FileshareTestSupport
import Foundation
import Testing

/// Share links in a real browser: Tests/Browser/links_browser_test.py signs
/// in with a users file, makes an upload link with the page's Share action,
/// drops a file through it from a second browser that never signed in,
/// revokes it in the Links dialog and sees the link answer that it was
/// revoked; then opens a read link to a folder of photos, a comic and notes
/// at a phone's width and a desktop's: the page's gallery and viewer,
/// read-only and inside the link, axe-core clean, and a one-download link
/// still downloading once after being browsed and viewed. Exits 77
/// (skipped here, except on CI) without selenium or Chromium.
@Suite("share links in a browser", .timeLimit(.minutes(10)))
struct LinksBrowserTests {
    @Test("sign in, see only your folder, make an upload link, drop a file through it unsigned, revoke it: 410")
    func links() async throws {
        try await runBrowserScript("links_browser_test.py")
    }
}
