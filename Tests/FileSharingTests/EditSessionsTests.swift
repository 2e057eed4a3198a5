import FileWatching
import Testing

@testable import FileSharing

/// An editing session's saves keep one version: of what its first save
/// replaced, never of the session's own autosaves; anything else that
/// replaces the file in between makes the next save keep one again.
@Suite("editing sessions")
struct EditSessionsTests {
    static let id = ItemID(rawValue: 7)

    static func file(inode: UInt64, size: Int64 = 10, modified: Int64 = 1) -> FileStatus {
        FileStatus(
            kind: .file, device: 1, inode: inode, size: size, modified: modified, changed: modified, born: nil,
            permissions: 0o644, linkCount: 1, owner: 0)
    }

    static let session = EditSession(token: "0123456789abcdef0123", owner: "mum")!

    @Test("a session's first save keeps a version, its later saves over its own file keep none")
    func oneVersionPerSession() {
        var sessions = EditSessions()
        let original = Self.file(inode: 1)
        #expect(sessions.keepsVersion(of: original, id: Self.id, session: Self.session))
        sessions.placed(Self.file(inode: 2), id: Self.id, session: Self.session)
        #expect(!sessions.keepsVersion(of: Self.file(inode: 2), id: Self.id, session: Self.session))
        sessions.placed(Self.file(inode: 3), id: Self.id, session: Self.session)
        #expect(!sessions.keepsVersion(of: Self.file(inode: 3), id: Self.id, session: Self.session))
    }

    @Test("another session, another user, no session, or a file changed since: a version is kept")
    func othersKeep() {
        var sessions = EditSessions()
        sessions.placed(Self.file(inode: 2), id: Self.id, session: Self.session)
        let other = EditSession(token: "fedcba9876543210fedc", owner: "mum")!
        let sameTokenOtherUser = EditSession(token: Self.session.token, owner: "kid")!
        #expect(sessions.keepsVersion(of: Self.file(inode: 2), id: Self.id, session: other))
        #expect(sessions.keepsVersion(of: Self.file(inode: 2), id: Self.id, session: sameTokenOtherUser))
        #expect(sessions.keepsVersion(of: Self.file(inode: 2), id: Self.id, session: nil))
        // Written to in place by another program: not the session's file any more.
        #expect(sessions.keepsVersion(of: Self.file(inode: 2, size: 11), id: Self.id, session: Self.session))
        #expect(sessions.keepsVersion(of: Self.file(inode: 2, modified: 5), id: Self.id, session: Self.session))
        // Replaced by a save of no session: the session's next save keeps one.
        sessions.placed(Self.file(inode: 4), id: Self.id, session: nil)
        #expect(sessions.keepsVersion(of: Self.file(inode: 4), id: Self.id, session: Self.session))
    }

    @Test(
        "tokens that are not one are no session",
        arguments: ["short", String(repeating: "a", count: 65), "has space in it 123", "ünïcödé-token-1234"])
    func badTokens(_ token: String) {
        #expect(EditSession(token: token, owner: "mum") == nil)
    }

    @Test("at most capacity items are remembered, the oldest forgotten first (its next save keeps a version)")
    func bounded() {
        var sessions = EditSessions(capacity: 2)
        for raw in UInt64(1)...3 {
            sessions.placed(Self.file(inode: raw), id: ItemID(rawValue: raw), session: Self.session)
        }
        #expect(sessions.count == 2)
        #expect(sessions.keepsVersion(of: Self.file(inode: 1), id: ItemID(rawValue: 1), session: Self.session))
        #expect(!sessions.keepsVersion(of: Self.file(inode: 3), id: ItemID(rawValue: 3), session: Self.session))
    }
}
