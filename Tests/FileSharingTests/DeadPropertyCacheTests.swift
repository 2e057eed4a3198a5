#if os(Linux)
    import FileWatching
    import FileshareTestSupport
    import Glibc
    import Logging
    import Synchronization
    import Testing

    @testable import FileSharing

    /// The dead properties a PROPFIND lists, kept while an item's change
    /// time stays: never older than what is on disk.
    @Suite("Dead property cache")
    struct DeadPropertyCacheTests {
        static let logger = Logger(label: "test")

        static func status(inode: UInt64, changed: Int64) -> FileStatus {
            FileStatus(
                kind: .file, device: 1, inode: inode, size: 0, modified: changed, changed: changed, born: nil,
                permissions: 0o644, linkCount: 1, owner: 0)
        }

        static let entries: DeadProperties.Entries = [
            (PropertyName(namespace: "urn:x", name: "colour"), "<colour xmlns=\"urn:x\">red</colour>")
        ]

        @Test("kept only while the change time is the same, only once settled, and never past the capacity")
        func rules() {
            let now = Mutex<Int64>(10_000_000_000)
            let cache = DeadPropertyCache(capacity: 3, settledAfter: 2_000_000_000, now: { now.withLock { $0 } })
            let old = Self.status(inode: 1, changed: 1_000_000_000)
            let fresh = Self.status(inode: 2, changed: 9_500_000_000)
            cache.keep([(old, Self.entries), (fresh, [])])
            // The one changed half a second before it was read is not kept.
            #expect(cache.count == 1)
            let found = cache.properties(of: [old, fresh])
            #expect(found[0]?.map(\.xml) == Self.entries.map(\.xml))
            #expect(found[1] == nil)
            // Another change time (the attribute set since): read again.
            #expect(cache.properties(of: [Self.status(inode: 1, changed: 1_000_000_001)])[0] == nil)
            // Another device, same inode: another item.
            var elsewhere = old
            elsewhere.device = 2
            #expect(cache.properties(of: [elsewhere])[0] == nil)
            // Past the capacity it starts again.
            cache.keep((3...5).map { (Self.status(inode: $0, changed: 0), []) })
            #expect(cache.count == 3)
            #expect(cache.properties(of: [old])[0] == nil)
        }

        @Test("a listing reads properties set or removed by another program since, and a file put in another's place")
        func listingSeesOutsideChanges() throws {
            let temporary = try TemporaryFolder()
            // Every item counts as settled, so all are kept: the change time alone must tell.
            let cache = DeadPropertyCache(settledAfter: 0)
            let folder = try SharedFolder(rootPath: temporary.path, deadPropertyCache: cache, logger: Self.logger)
            #expect(mkdir(temporary("d"), 0o755) == 0)
            try temporary.write("a", to: "d/a.txt")
            try temporary.write("b", to: "d/b.txt")
            try temporary.write("c", to: "d/c.txt")
            #expect(symlink("a.txt", temporary("d/link")) == 0)
            let d = try SharePath(plain: "d")
            // As another program would: on the file, not through the folder.
            func set(_ name: String, _ value: String?) throws {
                let fd = open(temporary("d/" + name), O_RDONLY)
                try #require(fd >= 0)
                defer { close(fd) }
                let entries: DeadProperties.Entries =
                    value.map {
                        [(PropertyName(namespace: "urn:x", name: "note"), "<note xmlns=\"urn:x\">\($0)</note>")]
                    }
                    ?? []
                try DeadProperties.write(entries, fd: fd, path: try SharePath(plain: name))
            }
            func listed() throws -> [String: String] {
                var notes: [String: String] = [:]
                for child in try folder.davChildren(of: d, properties: true) {
                    notes[child.name] = child.properties.first?.xml ?? "-"
                }
                return notes
            }
            try set("a.txt", "one")
            try set("b.txt", "two")
            #expect(try listed()["a.txt"]?.contains("one") == true)
            // Three files kept; the link's own status was not read, so it is not.
            #expect(cache.count == 3)
            func changeTime(_ name: String) -> Int64 {
                var status = stat()
                guard stat(temporary("d/" + name), &status) == 0 else { return -1 }
                return Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
            }
            let changed = changeTime("a.txt")
            try set("a.txt", "three")
            try set("b.txt", nil)
            try set("c.txt", "four")
            try #require(
                changeTime("a.txt") != changed,
                "this file system gave the change the time of the one before (a coarse clock): the cache's settle time covers that"
            )
            var notes = try listed()
            #expect(notes["a.txt"]?.contains("three") == true)
            #expect(notes["b.txt"] == "-")
            #expect(notes["c.txt"]?.contains("four") == true)
            // Listed again, now from what is kept: the same.
            #expect(try listed() == notes)
            // A file renamed over c.txt, with properties of its own.
            try temporary.write("e", to: "d/e.txt")
            try set("e.txt", "five")
            #expect(rename(temporary("d/e.txt"), temporary("d/c.txt")) == 0)
            notes = try listed()
            #expect(notes["c.txt"]?.contains("five") == true)
        }

        @Test(
            "an item alone (a PROPFIND of Depth 0): kept once read, read again once changed, a link is not followed")
        func itemAlone() throws {
            let temporary = try TemporaryFolder()
            let cache = DeadPropertyCache(settledAfter: 0)
            let folder = try SharedFolder(rootPath: temporary.path, deadPropertyCache: cache, logger: Self.logger)
            try temporary.write("a", to: "a.txt")
            #expect(symlink("a.txt", temporary("link")) == 0)
            let a = try SharePath(plain: "a.txt")
            func set(_ value: String) throws {
                let fd = open(temporary("a.txt"), O_RDONLY)
                try #require(fd >= 0)
                defer { close(fd) }
                try DeadProperties.write(
                    [(PropertyName(namespace: "urn:x", name: "note"), "<note xmlns=\"urn:x\">\(value)</note>")], fd: fd,
                    path: a)
            }
            try set("one")
            #expect(folder.keptProperties(of: try folder.metadata(a)) == nil, "nothing kept before a read")
            #expect(folder.propertiesKeeping(of: a).first?.xml.contains("one") == true)
            #expect(folder.keptProperties(of: try folder.metadata(a))?.first?.xml.contains("one") == true)
            // A symbolic link is not followed: it has no status of its own to look properties up by.
            let link = try SharePath(plain: "link")
            #expect(throws: FolderError.self) { try folder.metadata(link) }
            // Set by another program since: the change time differs, so it is read again.
            let before = try folder.metadata(a).changed
            try set("two")
            let status = try folder.metadata(a)
            try #require(status.changed != before, "a coarse clock gave both changes one time")
            #expect(folder.keptProperties(of: status) == nil)
            #expect(folder.propertiesKeeping(of: a).first?.xml.contains("two") == true)
            #expect(folder.keptProperties(of: try folder.metadata(a))?.first?.xml.contains("two") == true)
        }
    }
#endif
