import FileshareTestSupport
import Foundation
import Synchronization
import Testing

@testable import FileSharing

/// The WebDAV face's pure parts: XML, the If header, the lock table (with an
/// injected clock) and the encoding of dead properties.
@Suite("WebDAV logic")
struct WebDAVLogicTests {
    // MARK: XML

    @Test("namespaces: prefixes, default namespace, undeclaring it, nested scopes")
    func namespaces() throws {
        let root = try XMLDocumentParser.parse(
            Array(
                """
                <?xml version="1.0" encoding="utf-8"?>
                <!-- a comment -->
                <D:propfind xmlns:D="DAV:" xmlns="urn:outer">
                  <D:prop><inner/><x:thing xmlns:x="urn:x" x:flag="1" plain='2'/><none xmlns=""/></D:prop>
                </D:propfind>
                """.utf8))
        #expect(root.isDAV("propfind"))
        let prop = try #require(root.child("prop"))
        #expect(prop.elements.map(\.namespace) == ["urn:outer", "urn:x", ""])
        #expect(prop.elements.map(\.name) == ["inner", "thing", "none"])
        #expect(
            prop.elements[1].attributes == [
                .init(namespace: "urn:x", name: "flag", value: "1"), .init(namespace: "", name: "plain", value: "2"),
            ])
    }

    @Test("text: entities, character references, CDATA, UTF-8 beyond the BMP")
    func text() throws {
        let root = try XMLDocumentParser.parse(
            Array("<a>&lt;&amp;&gt;&quot;&apos; &#65;&#x42; <![CDATA[<raw>&]]> 𐀀é</a>".utf8))
        #expect(root.text == "<&>\"' AB <raw>& 𐀀é")
    }

    @Test(
        "malformed or unsafe documents are refused with a reason",
        arguments: [
            "", "<a>", "<a></b>", "<a><b></a></b>", "text", "<a/><b/>", "<p:a/>", "<a xmlns:p=\"\"><p:b/></a>",
            "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "<a>&unknown;</a>", "<a b=1/>", "<a b=\"1\" b=\"2\"/>",
            "<a>&#0;</a>", "<1a/>", "<a><![CDATA[x</a>", "<a>\u{FF}</a>",
        ])
    func malformed(document: String) {
        var bytes = Array(document.utf8)
        if document == "<a>\u{FF}</a>" { bytes = [0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E] }
        #expect(throws: XMLParseError.self) { try XMLDocumentParser.parse(bytes) }
    }

    @Test("nesting deeper than the limit is refused, not a stack overflow")
    func depth() {
        let deep = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        #expect(throws: XMLParseError.self) { try XMLDocumentParser.parse(Array(deep.utf8)) }
    }

    @Test("a property value is serialized self-contained and parses back to the same tree")
    func serialization() throws {
        let source = """
            <D:prop xmlns:D="DAV:"><t:value xmlns:t="http://example.com/t" t:attr="a&amp;b"> x &lt; y <inner xmlns="urn:inner"><deeper/></inner><none xmlns=""/><D:href>/x</D:href></t:value></D:prop>
            """
        let value = try #require(try XMLDocumentParser.parse(Array(source.utf8)).elements.first)
        let stored = value.serialized
        let back = try XMLDocumentParser.parse(Array(stored.utf8))
        #expect(back == value)
    }

    // MARK: If header

    @Test("If header: untagged and tagged lists, Not, entity tags; submitted tokens are the positive ones")
    func ifHeader() throws {
        let untagged = try DAVIfHeader(parsing: #"(<opaquelocktoken:a> ["etag"]) (Not <DAV:no-lock>)"#)
        #expect(untagged.lists.count == 2)
        #expect(
            untagged.lists[0].conditions == [
                .init(negated: false, kind: .token("opaquelocktoken:a")),
                .init(negated: false, kind: .entityTag("\"etag\"")),
            ])
        #expect(untagged.lists[1].conditions == [.init(negated: true, kind: .token("DAV:no-lock"))])
        #expect(untagged.submittedTokens == ["opaquelocktoken:a"])
        let tagged = try DAVIfHeader(parsing: "<http://h/dav/a> (<t1>) (<t2>) </dav/b> (not <t3>)")
        #expect(tagged.lists.map(\.resource) == ["http://h/dav/a", "http://h/dav/a", "/dav/b"])
        #expect(tagged.submittedTokens == ["t1", "t2"])
    }

    @Test("malformed If headers are 400", arguments: ["", "<x>", "(", "()", "(<a>", "(x)", "(<a>) <b> (<c>)", "junk"])
    func badIfHeader(header: String) {
        #expect(throws: ShareError.self) { try DAVIfHeader(parsing: header) }
    }

    // MARK: Locks

    private func lock(
        _ token: String, _ path: String, deep: Bool = true, exclusive: Bool = true, now: Int64 = 0, seconds: Int64 = 60
    ) throws
        -> DAVLock
    {
        DAVLock(
            token: token, root: try SharePath(plain: path), isDeep: deep, isExclusive: exclusive, owner: nil, user: nil,
            timeout: seconds, expires: now + seconds * 1_000_000_000)
    }

    @Test("conflicts: exclusive against anything, shared with shared; deep locks cover what is under them")
    func conflicts() throws {
        var table = DAVLockTable()
        #expect(table.add(try lock("a", "docs"), now: 0) == .locked(try lock("a", "docs")))
        #expect(table.add(try lock("b", "docs/x"), now: 0) == .conflict(try lock("a", "docs")))
        #expect(table.add(try lock("c", "other", exclusive: false), now: 0) != .conflict(try lock("a", "docs")))
        if case .conflict = table.add(try lock("d", "other", exclusive: false), now: 0) {
            Issue.record("shared locks conflicted")
        }
        if case .locked = table.add(try lock("e", "other", exclusive: true), now: 0) {
            Issue.record("an exclusive lock joined shared ones")
        }
        // A deep lock on a folder conflicts with a lock under it; a depth-0 one does not.
        var second = DAVLockTable()
        _ = second.add(try lock("f", "a/b/c"), now: 0)
        if case .locked = second.add(try lock("g", "a"), now: 0) {
            Issue.record("a deep lock above a locked item was granted")
        }
        if case .conflict = second.add(try lock("h", "a", deep: false), now: 0) {
            Issue.record("a depth-0 lock above conflicted")
        }
        #expect(second.locks(covering: try SharePath(plain: "a/b/c/d"), now: 0).map(\.token) == ["f"])
        #expect(second.locks(coveringOrUnder: try SharePath(plain: "a"), now: 0).map(\.token) == ["f", "h"])
    }

    @Test("timeouts on the injected clock: expiry, refresh, unlock only where the lock applies")
    func timeouts() throws {
        var table = DAVLockTable()
        _ = table.add(try lock("a", "f", seconds: 10), now: 0)
        #expect(table.lock(token: "a", now: 9_999_999_999) != nil)
        #expect(
            table.refresh(token: "a", path: try SharePath(plain: "f"), timeout: 10, now: 5_000_000_000)?.expires
                == 15_000_000_000)
        #expect(table.lock(token: "a", now: 14_000_000_000) != nil)
        #expect(table.unlock(token: "a", path: try SharePath(plain: "g"), now: 0) == nil)
        #expect(table.expire(now: 15_000_000_000).map(\.token) == ["a"])
        #expect(table.lock(token: "a", now: 15_000_000_000) == nil)
        #expect(table.refresh(token: "a", path: try SharePath(plain: "f"), timeout: 10, now: 16_000_000_000) == nil)
    }

    @Test(
        "writes need every applying lock's token: on the item, deep above it, under it, and on the folder whose members change"
    )
    func missingTokens() throws {
        var table = DAVLockTable()
        _ = table.add(try lock("deep", "a"), now: 0)
        _ = table.add(try lock("zero", "b", deep: false), now: 0)
        _ = table.add(try lock("inner", "c/d"), now: 0)
        let x = try SharePath(plain: "a/x"), y = try SharePath(plain: "b/y"), c = try SharePath(plain: "c")
        #expect(table.missingTokens(changing: [x], deep: [], members: [], tokens: [], now: 0)?.token == "deep")
        #expect(table.missingTokens(changing: [x], deep: [], members: [], tokens: ["deep"], now: 0) == nil)
        // A depth-0 lock on b does not protect b/y's content, only b's list of members.
        #expect(table.missingTokens(changing: [y], deep: [], members: [], tokens: [], now: 0) == nil)
        #expect(table.missingTokens(changing: [y], deep: [], members: [y.parent], tokens: [], now: 0)?.token == "zero")
        // Deleting c needs the token of the lock under it.
        #expect(table.missingTokens(changing: [c], deep: [c], members: [], tokens: [], now: 0)?.token == "inner")
        #expect(table.missingTokens(changing: [c], deep: [c], members: [], tokens: ["inner"], now: 0) == nil)
    }

    @Test("at most `capacity` locks at once")
    func capacity() throws {
        var table = DAVLockTable(capacity: 100)
        for index in 0..<100 { _ = table.add(try lock("t\(index)", "f\(index)"), now: 0) }
        #expect(table.add(try lock("over", "over"), now: 0) == .full)
    }

    // MARK: Dead properties

    @Test("dead properties: encoded and decoded; damaged or foreign values read as none")
    func deadProperties() {
        let entries: DeadProperties.Entries = [
            (PropertyName(namespace: "urn:x", name: "a"), "<ns0:a xmlns:ns0=\"urn:x\">1</ns0:a>"),
            (PropertyName(namespace: "", name: "b"), "<b xmlns=\"\">é 𐀀</b>"),
        ]
        let decoded = DeadProperties.decode(DeadProperties.encode(entries))
        #expect(decoded.map(\.name) == entries.map(\.name))
        #expect(decoded.map(\.xml) == entries.map(\.xml))
        var damaged = DeadProperties.encode(entries)
        damaged.removeLast(3)
        #expect(DeadProperties.decode(damaged).isEmpty)
        #expect(DeadProperties.decode(Array("something else".utf8)).isEmpty)
    }

    @Test("hrefs are percent-encoded per name; folders end with a slash")
    func hrefs() throws {
        #expect(WebDAV.href(.root, collection: true) == "/dav/")
        #expect(
            WebDAV.href(try SharePath(plain: "a b/c#d%e+€"), collection: false) == "/dav/a%20b/c%23d%25e%2B%E2%82%AC")
        #expect(WebDAV.href(try SharePath(plain: "folder"), collection: true) == "/dav/folder/")
        #expect(try WebDAV.path(ofURLPath: "/dav/a%20b/c%23d%25e%2B%E2%82%AC") == (try SharePath(plain: "a b/c#d%e+€")))
        #expect(try WebDAV.path(ofURLPath: "/api/x") == nil)
        #expect(throws: ShareError.self) { try WebDAV.path(ofURLPath: "/dav/x#fragment") }
    }

    @Test(
        "a URL path under /dav: the root, a query left out, names decoded, and what is not under it",
        arguments: [
            ("/dav", ""), ("/dav/", ""), ("/dav?x=1", ""), ("/dav/?x", ""), ("/dav/a/b.txt", "a/b.txt"),
            ("/dav/a/b.txt?x=/dav/c", "a/b.txt"), ("/dav/%C3%A9t%C3%A9/x", "été/x"), ("/dav/é/x", "é/x"),
            ("/davx", nil), ("/da", nil), ("/api/files/dav/a", nil), ("/?/dav/a", nil), ("", nil),
        ] as [(String, String?)])
    func urlPaths(url: String, expected: String?) throws {
        // From a longer string too: a Substring that does not start at its string's start.
        let longer = "GET " + url
        for raw in [Substring(url), longer.dropFirst(4)] {
            let path = try WebDAV.path(ofURLPath: raw)
            #expect(path == (try expected.map { $0.isEmpty ? .root : try SharePath(plain: $0) }), "\(url)")
        }
    }

    @Test("kept locks: read back with their remaining time on a new monotonic clock; ended ones dropped")
    func keptLocks() throws {
        let live = try lock("opaquelocktoken:a", "docs/a b", now: 5_000_000_000, seconds: 100)
        var ended = try lock("opaquelocktoken:b", "x", now: 5_000_000_000, seconds: 10)
        ended.owner = "<D:owner xmlns:D=\"DAV:\">alice</D:owner>"
        var json = JSONBytes(capacity: 256)
        for kept in [live, ended] {
            FileLockStore.Journal.encodePut(kept, monotonicNow: 5_000_000_000, wallNow: 1_000_000, into: &json)
        }
        // Read 30 seconds later by a process whose monotonic clock started anew.
        let back = FileLockStore.Journal.decode(json.bytes, monotonicNow: 0, wallNow: 1_000_030)
        #expect(back.map(\.token) == ["opaquelocktoken:a"])
        #expect(back.first?.root == live.root && back.first?.isDeep == true && back.first?.timeout == 100)
        #expect(back.first?.expires == 70_000_000_000)
        #expect(FileLockStore.Journal.decode(Array("not json".utf8), monotonicNow: 0, wallNow: 0).isEmpty)
        // The whole-table file of earlier versions is read too.
        let earlier =
            #"{"locks":[{"deep":true,"ends":1000100,"exclusive":true,"root":"docs","timeout":100,"token":"t"}],"version":1}"#
        #expect(
            FileLockStore.Journal.decode(Array(earlier.utf8), monotonicNow: 0, wallNow: 1_000_000).map(\.token) == ["t"]
        )
    }

    @Test(
        "the journal: a record a change, the last one for a token wins, a torn line is left out, read twice it is the same"
    )
    func journal() throws {
        let a = try lock("a", "docs", now: 0, seconds: 100), b = try lock("b", "x", now: 0, seconds: 100)
        var refreshed = a
        refreshed.timeout = 500
        refreshed.expires = 500_000_000_000
        var json = JSONBytes(capacity: 256)
        FileLockStore.Journal.encodePut(a, monotonicNow: 0, wallNow: 1_000, into: &json)
        FileLockStore.Journal.encodePut(b, monotonicNow: 0, wallNow: 1_000, into: &json)
        FileLockStore.Journal.encodeDrop("b", into: &json)
        FileLockStore.Journal.encodePut(refreshed, monotonicNow: 0, wallNow: 1_000, into: &json)
        let whole = json.bytes
        let read = FileLockStore.Journal.decode(whole, monotonicNow: 0, wallNow: 1_000)
        #expect(read.map(\.token) == ["a"] && read.first?.timeout == 500)
        // Killed in the middle of a record: every whole line still counts.
        var next = JSONBytes(capacity: 256)
        FileLockStore.Journal.encodePut(
            try lock("c", "y", now: 0, seconds: 100), monotonicNow: 0, wallNow: 1_000, into: &next)
        for cut in 1..<next.bytes.count {
            let torn = whole + next.bytes[..<cut]
            #expect(FileLockStore.Journal.decode(torn, monotonicNow: 0, wallNow: 1_000).map(\.token) == ["a"])
        }
        #expect(FileLockStore.Journal.decode(whole + next.bytes, monotonicNow: 0, wallNow: 1_000).count == 2)
        // A rewrite cut short after its rename: the old lines read again over it change nothing.
        #expect(FileLockStore.Journal.decode(whole + whole, monotonicNow: 0, wallNow: 1_000).map(\.timeout) == [500])
    }

    @Test(
        "a store's file: restarted after a torn record, the locks are there; rewritten so it stays near the locks held")
    func journalFile() throws {
        let folder = try TemporaryFolder()
        let path = folder("locks.json")
        let clock = Mutex<Int64>(0)
        let now: @Sendable () -> Int64 = { clock.withLock { $0 } }
        let store = FileLockStore(persistencePath: path, now: now, wallNow: { 1_000 })
        for index in 0..<50 {
            let added = store.changing { table, now in
                table.add(try! self.lock("t\(index)", "f\(index)", now: now), now: now)
            }
            #expect(added.1.count == index + 1)
        }
        // 5,000 refreshes and unlocks of ten locks: the file is rewritten, never much more than the locks held.
        for round in 0..<500 {
            for index in 0..<10 {
                _ = store.changing { table, now in
                    table.refresh(
                        token: "t\(index)", path: try! SharePath(plain: "f\(index)"), timeout: 60 + Int64(round),
                        now: now)
                }
            }
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count
        #expect(lines <= FileLockStore.Journal.minimumRecordsBeforeRewrite + 10, "\(lines) lines for 50 locks")
        // A crash in the middle of a record.
        let handle = try #require(FileHandle.closingOnExec(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"put":{"token":"torn","ro"#.utf8))
        try handle.close()
        let restarted = FileLockStore(persistencePath: path, now: now, wallNow: { 1_010 })
        let tokens = restarted.reading { table, _ in Set(table.locks.keys) }
        #expect(tokens == Set((0..<50).map { "t\($0)" }))
        #expect(restarted.reading { table, _ in table.locks["t3"]?.timeout } == 559)
        // The torn line is gone with the rewrite at start: the next records are whole lines.
        _ = restarted.changing { table, now in table.unlock(token: "t0", path: try! SharePath(plain: "f0"), now: now) }
        let again = FileLockStore(persistencePath: path, now: now, wallNow: { 1_010 })
        #expect(again.reading { table, _ in table.locks.count } == 49)
    }

    @Test("at most `capacityPerUser` locks of one user; others still lock; an unlock or an end makes room")
    func capacityPerUser() throws {
        var table = DAVLockTable(capacityPerUser: 3)
        func userLock(_ token: String, _ user: String?, seconds: Int64 = 60) throws -> DAVLock {
            var made = try lock(token, token, seconds: seconds)
            made.user = user
            return made
        }
        for index in 0..<3 { #expect(table.add(try userLock("a\(index)", "alice"), now: 0) != .fullForUser) }
        #expect(table.add(try userLock("a3", "alice"), now: 0) == .fullForUser)
        #expect(table.add(try userLock("b0", "bob"), now: 0) == .locked(try userLock("b0", "bob")))
        #expect(table.add(try userLock("n0", nil), now: 0) == .locked(try userLock("n0", nil)))
        #expect(table.count(of: "alice") == 3 && table.count(of: "bob") == 1)
        _ = table.unlock(token: "a0", path: try SharePath(plain: "a0"), now: 0)
        #expect(table.add(try userLock("a3", "alice"), now: 0) == .locked(try userLock("a3", "alice")))
        // A refresh is no new lock.
        #expect(table.refresh(token: "a3", path: try SharePath(plain: "a3"), timeout: 10, now: 0) != nil)
        #expect(table.count(of: "alice") == 3)
        // Ended locks make room at once, before the round of expiry.
        var ending = DAVLockTable(capacityPerUser: 1)
        _ = ending.add(try userLock("e0", "alice", seconds: 1), now: 0)
        #expect(ending.add(try userLock("e1", "alice"), now: 2_000_000_000) == .locked(try userLock("e1", "alice")))
        // Every change is told, once.
        #expect(ending.takeChanges() == ["e0", "e1"] && ending.takeChanges().isEmpty)
        // Read back from a store, the counts are the same.
        var reread = DAVLockTable(capacityPerUser: 3, locks: Array(table.locks.values))
        #expect(reread.count(of: "alice") == 3 && reread.takeChanges().isEmpty)
    }

    // MARK: Bounds of XML bodies

    @Test("at most 100 attributes and namespace declarations an element: 100 pass, 101 are refused naming the limit")
    func attributeLimit() throws {
        func element(_ count: Int, namespaces: Bool) -> [UInt8] {
            let attributes = (0..<count).map { namespaces ? " xmlns:p\($0)=\"urn:\($0)\"" : " a\($0)=\"\($0)\"" }
            return Array(("<root" + attributes.joined() + "/>").utf8)
        }
        for namespaces in [false, true] {
            #expect(try XMLDocumentParser.parse(element(100, namespaces: namespaces)).name == "root")
            do {
                _ = try XMLDocumentParser.parse(element(101, namespaces: namespaces))
                Issue.record("101 attributes were accepted")
            } catch {
                #expect(error.message.contains("more than 100 attributes and namespace declarations"))
            }
        }
        // A prefix declared far above is found; one declared on a sibling is not.
        let deep =
            String(repeating: "<a xmlns:q=\"urn:q\">", count: 1) + String(repeating: "<b>", count: 60) + "<q:x/>"
            + String(repeating: "</b>", count: 60) + "</a>"
        var found = try XMLDocumentParser.parse(Array(deep.utf8))
        for _ in 0..<61 { found = found.elements[0] }
        #expect(found.namespace == "urn:q" && found.name == "x")
        #expect(throws: XMLParseError.self) {
            try XMLDocumentParser.parse(Array("<a><b xmlns:q=\"urn:q\"/><q:x/></a>".utf8))
        }
    }

    @Test(
        "characters XML cannot carry are refused, raw or as references; written text has them as U+FFFD",
        arguments: [
            "<a>\u{01}</a>", "<a b=\"\u{1F}\"/>", "<a>&#1;</a>", "<a>&#xFFFE;</a>", "<a>\u{FFFF}</a>",
            "<a><!--\u{08}--></a>",
        ])
    func forbiddenCharacters(document: String) {
        #expect(throws: XMLParseError.self) { try XMLDocumentParser.parse(Array(document.utf8)) }
    }

    @Test("the writer keeps every document well-formed: controls, U+FFFE and U+FFFF become U+FFFD")
    func writerReplacesControls() throws {
        var writer = XMLWriter(declaration: false)
        writer.raw("<a>")
        writer.text("ctl\u{01}\u{1B}[31m\t\n\r&<>\"\u{FFFE}\u{FFFF}\u{FFFD}\u{EFFF}é")
        writer.raw("</a>")
        let written = String(decoding: writer.bytes, as: UTF8.self)
        #expect(
            written == "<a>ctl\u{FFFD}\u{FFFD}[31m\t\n&#13;&amp;&lt;&gt;&quot;\u{FFFD}\u{FFFD}\u{FFFD}\u{EFFF}é</a>")
        #expect(
            try XMLDocumentParser.parse(writer.bytes).text
                == "ctl\u{FFFD}\u{FFFD}[31m\t\n\r&<>\"\u{FFFD}\u{FFFD}\u{FFFD}\u{EFFF}é")
    }

    /// Times `body` once (a measurement printed, not a bound: see the commit).
    private func measure(_ what: String, _ body: () throws -> Void) rethrows {
        let clock = ContinuousClock()
        let elapsed = try clock.measure(body)
        print("XML parse, \(what): \(elapsed)")
    }

    @Test("parsing takes time linear in the body: 500 KiB of attributes, declarations or nested prefixes (printed)")
    func parseTimes() throws {
        let size = 500 * 1024
        func wide(namespaces: Bool) -> [UInt8] {
            var body = "<D:propfind xmlns:D=\"DAV:\""
            var index = 0
            while body.utf8.count < size {
                body += namespaces ? " xmlns:p\(index)=\"urn:\(index)\"" : " a\(index)=\"\(index)\""
                index += 1
            }
            return Array((body + "/>").utf8)
        }
        // Elements as wide as allowed, one after another: all parsed.
        var many = "<D:propfind xmlns:D=\"DAV:\"><D:prop>"
        let widest =
            (0..<49).map { " xmlns:p\($0)=\"u\($0)\"" }.joined() + (0..<50).map { " p\($0 % 49):a\($0)=\"1\"" }.joined()
        while many.utf8.count < size { many += "<p0:x" + widest + "/>" }
        many += "</D:prop></D:propfind>"
        // Prefixes declared at the top, used 63 levels down.
        var nested = "<a " + (0..<99).map { "xmlns:p\($0)=\"u\($0)\"" }.joined(separator: " ") + ">"
        nested += String(repeating: "<b>", count: 62)
        while nested.utf8.count < size { nested += "<p98:c p1:x=\"1\" p2:y=\"2\"/>" }
        nested += String(repeating: "</b>", count: 62) + "</a>"
        for namespaces in [false, true] {
            let body = wide(namespaces: namespaces)
            measure("one element, \(body.count) bytes of \(namespaces ? "declarations" : "attributes")") {
                _ = try? XMLDocumentParser.parse(body)
            }
        }
        try measure("\(many.utf8.count) bytes of elements of 100 attributes") {
            _ = try XMLDocumentParser.parse(Array(many.utf8))
        }
        try measure("\(nested.utf8.count) bytes of elements 63 levels under their prefixes") {
            _ = try XMLDocumentParser.parse(Array(nested.utf8))
        }
    }
}
