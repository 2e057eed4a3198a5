import FileshareTestSupport
import Foundation
import Testing

/// What a family trips on in the first hour (issue #33), in a real browser:
/// Tests/Browser/family_test.py drives headless Chromium at a phone's width
/// and a desktop's against `fileshare serve --users` — the sign-in page,
/// rights told as they are, Undo after a delete or a replace, the viewer in
/// the history, one version per editing session, the preview following the
/// file, a session that ended, the Share and Links dialogs, a refused upload
/// in plain words, a one-download link, a drop box keeping both; axe-core on
/// each. Exits 77 (skipped here, except on CI) without selenium or Chromium.
@Suite("a family's first hour in a browser", .holdsObservers, .timeLimit(.minutes(10)))
struct FamilyBrowserTests {
    @Test("sign-in, rights, Undo, Back, versions per session, links and drop boxes, at 390 and 1280 pixels")
    func family() async throws {
        try await runBrowserScript("family_test.py")
    }
}
