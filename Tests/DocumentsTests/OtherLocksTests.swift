import FileWatching
import Testing

@testable import Documents

@Suite("Other clients' locks")
struct OtherLocksTests {
    @Test("a lock covers its root, and what is under it only when deep; each lock counts until released")
    func covers() {
        var locks = OtherLocks()
        locks.change("a/b.txt", coversBelow: false, held: true)
        #expect(locks.covers("a/b.txt"))
        #expect(!locks.covers("a") && !locks.covers("a/b.txt.bak"))
        locks.change("a", coversBelow: false, held: true)
        #expect(!locks.covers("a/c.txt"), "a depth-0 lock on a folder covers the folder only")
        locks.change("a", coversBelow: true, held: true)
        #expect(locks.covers("a/c.txt") && locks.covers("a/d/e.txt") && !locks.covers("ab/c.txt"))
        // Released one by one: the file stays covered while any lock covers it.
        locks.change("a/b.txt", coversBelow: false, held: false)
        #expect(locks.covers("a/b.txt"))
        locks.change("a", coversBelow: true, held: false)
        #expect(!locks.covers("a/b.txt") && locks.covers("a"))
        locks.change("a", coversBelow: false, held: false)
        #expect(locks == OtherLocks())
        // A release nobody took changes nothing.
        locks.change("x", coversBelow: true, held: false)
        #expect(locks == OtherLocks())
    }
}
