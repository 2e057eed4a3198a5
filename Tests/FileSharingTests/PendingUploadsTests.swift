import ChangeLog
import FileshareTestSupport
import Foundation
import Synchronization
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// The limits on resumable uploads under way: the counts per owner and in
/// all, and their lifetime, with the time injected.
@Suite("pending uploads: limits and expiry")
struct PendingUploadsTests {
    static let limits = PendingUploadLimits(lifetime: .seconds(100), perOwner: 2, total: 3)
    static let second: Int64 = 1_000_000_000

    @Test("an owner gets as many as its limit, the folder as many as its own; ending one makes room")
    func counts() throws {
        var pending = PendingUploads(limits: Self.limits)
        try pending.admit("a1", owner: "alice")
        try pending.admit("a2", owner: "alice")
        #expect(throws: PendingUploadLimitError(code: .owner, limits: Self.limits)) {
            try pending.admit("a3", owner: "alice")
        }
        try pending.admit("b1", owner: "[127.0.0.1]")
        #expect(throws: PendingUploadLimitError(code: .folder, limits: Self.limits)) {
            try pending.admit("b2", owner: "[127.0.0.2]")
        }
        pending.forget("a1")
        pending.forget("a1")
        #expect(pending.count(of: "alice") == 1 && pending.total == 2)
        try pending.admit("a3", owner: "alice")
        #expect(pending.owners == ["a2": "alice", "a3": "alice", "b1": "[127.0.0.1]"])
    }

    @Test("an upload is busy while its files are made, and one request at a time claims it")
    func claims() throws {
        var pending = PendingUploads(limits: Self.limits)
        try pending.admit("t", owner: "alice")
        let whileMade = pending.claim("t")
        #expect(!whileMade, "being made")
        pending.release("t")
        let first = pending.claim("t")
        let second = pending.claim("t")
        #expect(first && !second)
        pending.release("t")
        #expect(pending.busy.isEmpty)
    }

    @Test("one expires a lifetime after its last write, not before; one being written never; halves at once")
    func expiry() throws {
        var pending = PendingUploads(limits: Self.limits)
        let start = 1_700_000_000 * Self.second
        for token in ["old", "written", "young"] { try? pending.admit(token, owner: token) }
        for token in ["old", "written", "young"] { pending.release(token) }
        let claimed = pending.claim("written")
        #expect(claimed)
        var staged = [
            PendingUploads.Staged(token: "old", lastWritten: start, complete: true),
            PendingUploads.Staged(token: "written", lastWritten: start, complete: true),
            PendingUploads.Staged(token: "young", lastWritten: start + 50 * Self.second, complete: true),
            PendingUploads.Staged(token: "half", lastWritten: start + 99 * Self.second, complete: false),
        ]
        /// One sweep at `now`: what it removes is no longer staged.
        func sweep(at now: Int64) -> [String] {
            let expired = pending.expire(staged, now: now)
            #expect(expired.allSatisfy { pending.busy.contains($0) }, "held while their files are removed")
            staged.removeAll { expired.contains($0.token) }
            for token in expired { pending.release(token) }
            return expired
        }
        #expect(sweep(at: start + 100 * Self.second - 1) == ["half"])
        #expect(sweep(at: start + 100 * Self.second) == ["old"])
        #expect(sweep(at: start + 150 * Self.second - 1).isEmpty)
        #expect(sweep(at: start + 150 * Self.second) == ["young"])
        #expect(sweep(at: start + 1000 * Self.second).isEmpty, "one being written is never removed")
        #expect(pending.owners.keys.sorted() == ["written"])
        #expect(pending.expiry(lastWritten: start) == start + 100 * Self.second)
    }

    @Test("with other servers on the folder, a margin is added to every age")
    func margin() {
        var pending = PendingUploads(limits: Self.limits)
        let staged = [
            PendingUploads.Staged(token: "whole", lastWritten: 0, complete: true),
            PendingUploads.Staged(token: "half", lastWritten: 0, complete: false),
        ]
        #expect(pending.expire(staged, now: 99 * Self.second, margin: .seconds(100)).isEmpty)
        #expect(pending.expire(staged, now: 100 * Self.second, margin: .seconds(100)) == ["half"])
        #expect(pending.expire(staged, now: 200 * Self.second, margin: .seconds(100)) == ["whole"])
    }

    @Test("the owner: the user, or the client's address in brackets (which no user name has)")
    func owners() {
        #expect(PendingUploads.owner(user: "alice", address: "10.0.0.1") == "alice")
        #expect(PendingUploads.owner(user: nil, address: "::1") == "[::1]")
    }

    @Test("sidecars: with an owner, and as written before owners were kept")
    func sidecars() throws {
        let new = try #require(UploadSidecar("10 1 alice\nif-match \"e\"\ndir/a b.bin"))
        #expect(new.length == 10 && new.owner == "alice" && new.path.description == "dir/a b.bin")
        #expect(new.conditions.lines == ["if-match \"e\""])
        let written = try #require(UploadSidecar(new.text))
        #expect(written.owner == "alice" && written.path.description == "dir/a b.bin" && written.length == 10)
        let old = try #require(UploadSidecar("10\nfile.bin"))
        #expect(old.owner == "" && old.length == 10)
        #expect(try #require(UploadSidecar("7 0\nx.bin")).owner == "")
        #expect(UploadSidecar("10 0 alice extra\nx.bin") == nil)
        #expect(UploadSidecar("99999999999999999999\nx.bin") == nil)
    }

    @Test("messages say the limit and what to do")
    func messages() {
        let limits = PendingUploadLimits.standard
        #expect(
            PendingUploadLimitError(code: .owner, limits: limits).message.contains("20 uploads under way"))
        #expect(PendingUploadLimitError(code: .owner, limits: limits).message.contains("24 hours"))
        #expect(PendingUploadLimitError(code: .folder, limits: limits).message.contains("1000 uploads under way"))
    }
}

/// The uploads of one server on its folder, with its clock injected: what
/// a start finds, what a sweep while it runs removes.
@Suite("pending uploads on disk")
struct PendingUploadsOnDiskTests {
    /// A clock a test moves.
    final class TestClock: Sendable {
        let now = Atomic<Int64>(FileChangeLog.wallClock())
        func advance(_ duration: Duration) {
            now.add(duration.components.seconds * 1_000_000_000, ordering: .relaxed)
        }
    }

    @Test("at start and while the server runs, uploads no request wrote to for a lifetime go; the others stay")
    func sweeps() async throws {
        let share = try ShareFixture()
        let core = share.server.core
        let clock = TestClock()
        let limits = PendingUploadLimits(lifetime: .seconds(3600), perOwner: 5, total: 10)
        let uploads = ResumableUploads(
            folder: core.folder, limits: limits, clock: { clock.now.load(ordering: .relaxed) })
        let old = try await uploads.begin(path: try SharePath(plain: "old.bin"), length: 10, owner: "alice", core: core)
        // The files' times are set to the test clock's: the real clock has
        // moved on meanwhile (seconds, on a loaded machine).
        try Self.setModified(share, token: old, to: clock.now.load(ordering: .relaxed))
        clock.advance(.seconds(1800))
        let young = try await uploads.begin(
            path: try SharePath(plain: "young.bin"), length: 10, owner: "alice", core: core)
        try Self.setModified(share, token: young, to: clock.now.load(ordering: .relaxed))
        clock.advance(.seconds(1800))
        #expect(uploads.sweep() == 1)
        #expect(!uploads.exists(old) && uploads.exists(young))
        #expect(share.stagingContent().sorted() == ["resumable-\(young)", "resumable-\(young).info"])
        // A request writing to it holds it past its time.
        #expect(try await uploads.claim(young))
        clock.advance(.seconds(3600))
        #expect(uploads.sweep() == 0)
        uploads.release(young)
        // A server starting later finds it expired, and counts nothing of it.
        let later = ResumableUploads(
            folder: core.folder, limits: limits, clock: { clock.now.load(ordering: .relaxed) })
        #expect(!later.exists(young))
        #expect(share.stagingContent().isEmpty)
    }

    @Test("a start counts the uploads staged before it, by owner; a crash's halves go")
    func startCounts() async throws {
        let share = try ShareFixture()
        let core = share.server.core
        let limits = PendingUploadLimits(lifetime: .seconds(3600), perOwner: 2, total: 10)
        let first = ResumableUploads(folder: core.folder, limits: limits)
        for name in ["a.bin", "b.bin"] {
            _ = try await first.begin(path: try SharePath(plain: name), length: 10, owner: "alice", core: core)
        }
        let bob = try await first.begin(path: try SharePath(plain: "c.bin"), length: 10, owner: "bob", core: core)
        // A crash between the two files of an upload.
        let half = String(repeating: "ab", count: 16)
        try share.write(".fileshare/staging/resumable-\(half)", "")
        let second = ResumableUploads(folder: core.folder, limits: limits)
        #expect(!share.stagingContent().contains("resumable-\(half)"))
        await #expect(throws: PendingUploadLimitError(code: .owner, limits: limits)) {
            _ = try await second.begin(path: try SharePath(plain: "d.bin"), length: 10, owner: "alice", core: core)
        }
        second.discard(bob)
        _ = try await second.begin(path: try SharePath(plain: "d.bin"), length: 10, owner: "bob", core: core)
        _ = try await second.begin(path: try SharePath(plain: "e.bin"), length: 10, owner: "bob", core: core)
        await #expect(throws: PendingUploadLimitError(code: .owner, limits: limits)) {
            _ = try await second.begin(path: try SharePath(plain: "f.bin"), length: 10, owner: "bob", core: core)
        }
    }

    /// Sets the change time of an upload's files.
    static func setModified(_ share: ShareFixture, token: String, to nanoseconds: Int64) throws {
        for name in ["resumable-\(token)", "resumable-\(token).info"] {
            var times = [
                timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000)),
                timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000)),
            ]
            #expect(utimensat(AT_FDCWD, share.path(".fileshare/staging/" + name), &times, 0) == 0)
        }
    }
}
