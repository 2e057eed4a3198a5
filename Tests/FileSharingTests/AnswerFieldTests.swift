import FileWatching
import HTTPTypes
import NIOCore
import Testing

@testable import FileSharing

/// The fields every answer to a file carries, written by hand for speed:
/// the same text as the plain Swift they replaced.
@Suite("Answer fields, logic")
struct AnswerFieldTests {
    @Test(
        "an entity tag is inode, size and time in lowercase hexadecimal, as String(radix: 16) writes them",
        arguments: [
            (0, 0, 0), (42, 5, 1_000_000_000), (UInt64.max, Int64.max, Int64.min), (1, -1, -1_000_000_000),
            (0xdead_beef, 4096, 1_764_033_825_678_000_000),
        ] as [(UInt64, Int64, Int64)])
    func entityTag(inode: UInt64, size: Int64, modified: Int64) {
        let plain = "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(modified, radix: 16))\""
        #expect(FileStatus.entityTag(inode: inode, size: size, modified: modified) == plain)
    }

    @Test("XML written by hand: numbers as String writes them, text escaped only where it must be, entity tags")
    func xmlWriter() {
        for value: Int64 in [0, 7, 9, 10, 99, 100, 4096, -1, -10, 1_234_567_890_123, .max, .min, .max - 1] {
            var writer = XMLWriter(declaration: false)
            writer.number(value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
        }
        let texts = ["plain.txt", "a & b", "<x>", "say \"hi\"", "cr\r", "Été ☃", "", "&amp;", "tab\t'"]
        for text in texts {
            var writer = XMLWriter(declaration: false)
            writer.text(text)
            // The form before the fast path: escaped byte by byte.
            var plain = ""
            for character in text.unicodeScalars {
                switch character {
                case "&": plain += "&amp;"
                case "<": plain += "&lt;"
                case ">": plain += "&gt;"
                case "\"": plain += "&quot;"
                case "\r": plain += "&#13;"
                default: plain.unicodeScalars.append(character)
                }
            }
            #expect(String(decoding: writer.bytes, as: UTF8.self) == plain)
        }
        var writer = XMLWriter(declaration: false)
        writer.entityTagBody(inode: 0xfc9ff4, size: 8, modified: -5)
        #expect(
            "\"" + String(decoding: writer.bytes, as: UTF8.self) + "\""
                == FileStatus.entityTag(inode: 0xfc9ff4, size: 8, modified: -5))
    }

    @Test(
        "a name's extension: after the last dot, lowercased, when more than dots comes before it",
        arguments: [
            "photo.JPG", "archive.tar.gz", ".bashrc", "README", "a.", "a.b.", "..x", "a..b", "", ".", "...",
            "Ünïcödé.PNG", "x.ÄÖ", "no dot here", ".hidden.txt", "A.B.C", "x..", "Photo.JpEg", "a b.T X T",
            "s-00001.bin", "..", "a.\r\n", "MiXeD.Ü",
        ])
    func nameExtension(name: String) {
        // The form it replaced, which split the name twice.
        let parts = name.split(separator: ".")
        let plain = parts.count > 1 ? parts.last!.lowercased() : ""
        #expect(FileResponses.nameExtension(name) == plain)
        // ASCII names are worked out on their bytes; the rest as Characters.
        #expect(FileResponses.asciiNameExtension(name) == (name.utf8.allSatisfy { $0 < 0x80 } ? plain : nil))
    }

    @Test("names with one extension key have one extension; no key for other names or long extensions")
    func extensionKeys() {
        let names = [
            "photo.JPG", "photo.jpg", "a.Jpg", "archive.tar.gz", "b.gz", ".bashrc", "README", "a.", "a.b.", "..x",
            "a..b", "", ".", "...", "no dot here", ".hidden.txt", "x.txt", "A.B.C", "x..", "s-00001.bin", "..",
            "a.\r\n",
            "x.toolongext", "y.sevenxx", "Ünïcödé.PNG", "x.ÄÖ",
        ]
        var seen: [UInt64: String] = [:]
        for name in names {
            let key = FileResponses.extensionKey(ofName: Array(name.utf8)[...])
            let extensionBytes = FileResponses.nameExtension(name).utf8.count
            #expect((key == nil) == (!name.utf8.allSatisfy { $0 < 0x80 } || extensionBytes > 7), "\(name)")
            guard let key else { continue }
            if let other = seen[key] {
                #expect(FileResponses.nameExtension(other) == FileResponses.nameExtension(name), "\(other), \(name)")
            }
            seen[key] = name
        }
        // Different cases are different keys (each judged once), never one key for two extensions.
        #expect(
            FileResponses.extensionKey(ofName: Array("a.JPG".utf8)[...])
                != FileResponses.extensionKey(ofName: Array("a.jpg".utf8)[...]))
        #expect(
            FileResponses.extensionKey(ofName: Array("x.ab".utf8)[...])
                != FileResponses.extensionKey(ofName: Array("x.ab\0".utf8)[...]))
    }

    @Test("a file's media type comes from its extension in any case; an unknown one is a stream of bytes")
    func mediaType() {
        let expected = [
            "a.JPG": "image/jpeg", "a.jpeg": "image/jpeg", "notes.Markdown": "text/plain; charset=utf-8",
            "page.htm": "text/html; charset=utf-8", "comic.cbz": "application/vnd.comicbook+zip",
            "book.epub": "application/epub+zip", "clip.M4V": "video/mp4", "song.oga": "audio/ogg",
            "archive.tar.gz": "application/octet-stream", "README": "application/octet-stream",
            ".png": "application/octet-stream", "Ünïcödé.PNG": "image/png",
        ]
        for (name, type) in expected { #expect(FileResponses.mediaType(for: name) == type, "\(name)") }
    }
}

extension AnswerFieldTests {
    @Test(
        "trimming a field's spaces and tabs on its bytes gives what the walk over its Characters gave",
        arguments: [
            "", " ", "\t\t", "abc", "  a b  ", "\t\"etag\" ", " W/\"x\"\t", "é ", " ünï cödé ", "a\u{301} ", " 🙂",
            "x\r\n",
        ])
    func trimming(text: String) {
        // The form it replaced.
        let plain = String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        #expect(text.trimmingCharacters() == plain)
        #expect(text[...].trimmingCharacters() == plain)
    }

    @Test("Basic credentials: the scheme's name in any case, then Base64; anything else is none")
    func basicCredentials() {
        let token = "dXNlcjpwYXNzOndvcmQ="  // user:pass:word
        for header in ["Basic \(token)", "basic \(token)", "BASIC  \(token) ", "bAsIc \t\(token)"] {
            #expect(
                BasicCredentials.parse(header).map { [$0.name, $0.password] } == ["user", "pass:word"], "\(header)")
        }
        for header in [
            nil, "", "Basic", "Basic ", "Bearer \(token)", "Basicx \(token)", "Basic \(token)!", "Básic \(token)",
        ] {
            #expect(BasicCredentials.parse(header) == nil, "\(header ?? "nil")")
        }
        let middleware = AuthMiddleware(user: "user", password: "pass:word")
        #expect(middleware.check("Basic \(token)") == .accepted)
        #expect(middleware.check("basic dXNlcjpub3Bl") == .wrong)  // user:nope
        #expect(middleware.check("Digest x") == .missing)
        #expect(middleware.check(nil) == .missing)
        // Other spellings of the right credentials are decoded (the exact one is compared whole).
        for header in ["basic \(token)", "BASIC  \(token) ", "Basic \t\(token)"] {
            #expect(middleware.check(header) == .accepted, "\(header)")
        }
        // Wrong ones, of the same length and longer or shorter: the field, the user, the password.
        for credentials in ["user:pass:wore", "usex:pass:word", "user:pass:word2", "user:pass:wor", ":"] {
            #expect(middleware.check("Basic " + Base64.encode(Array(credentials.utf8))) == .wrong, "\(credentials)")
        }
        // No colon: no credentials at all. The right field with more after it is not them.
        #expect(middleware.check("Basic " + Base64.encode(Array("user".utf8))) == .missing)
        #expect(middleware.check("Basic \(token)x") != .accepted)
        #expect(middleware.check("Basic \(token) x") != .accepted)
    }

    @Test("a field's value without the join is the subscript's: absent, one, several, cookies")
    func fieldValue() {
        let cases: [HTTPFields] = [
            [:],
            [.range: "bytes=1-2"],
            [.authorization: "Basic x", .range: "bytes=1-2"],
            HTTPFields([HTTPField(name: .range, value: "bytes=1-2"), HTTPField(name: .range, value: "bytes=4-5")]),
            HTTPFields([HTTPField(name: .cookie, value: "a=1"), HTTPField(name: .cookie, value: "b=2")]),
            HTTPFields([HTTPField(name: HTTPField.Name("RANGE")!, value: "bytes=0-0")]),
        ]
        for fields in cases {
            for name in [HTTPField.Name.range, .cookie, .authorization, .ifNoneMatch] {
                #expect(fields.value(of: name) == fields[name], "\(fields) \(name)")
            }
        }
    }

    @Test("If-None-Match matched on the bytes as the split and trimmed form matched it")
    func ifNoneMatch() {
        let tag = "\"f78018-1000-18ebf57cf6cd6077\""
        func old(_ match: String) -> Bool {
            match == "*"
                || match.split(separator: ",").contains(where: {
                    $0.trimmingCharacters() == tag || $0.trimmingCharacters() == "W/" + tag
                })
        }
        var values = [
            "*", tag, "W/" + tag, " \t" + tag + "\t ", "\"a\", " + tag, "\"a\",W/" + tag + " ,\"b\"", "", ",", ",,",
            "\"a\"", "w/" + tag, "W/ " + tag, tag + "x", "x" + tag, "W/", "W/W/" + tag, " * ", "\"a\",,\"b\"",
            "\u{e9}" + tag, tag + ", *",
        ]
        var generator = SystemRandomNumberGenerator()
        let pieces = [tag, "W/" + tag, ",", " ", "\t", "\"x\"", "W/", "*", "\u{e9}"]
        for _ in 0..<500 {
            values.append(
                (0..<Int.random(in: 0..<5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
                    .joined())
        }
        for value in values {
            #expect(FileResponses.matches(ifNoneMatch: value, entityTag: tag) == old(value), "\(value)")
        }
    }
}

/// The fields of a file's answer, written as bytes by the lane and as
/// `HTTPFields` by the router: one text.
@Suite("File answer fields, logic")
struct FileAnswerFieldsTests {
    /// `fields` as an HTTP/1.1 head lists them.
    static func text(_ fields: HTTPFields) -> String {
        fields.map { "\($0.name.rawName): \($0.value)\r\n" }.joined()
    }

    @Test("the bytes are HTTPFields' fields in order and spelling, for 200, 206, 304 and downloads")
    func bytesMatchFields() {
        let names = ["a.txt", "photo.JPG", "page.html", "noextension", "Été ☃ \"q\".pdf", "x.svg"]
        for name in names {
            for download in [false, true] {
                for length in [nil, 0, 4096, Int64.max] as [Int64?] {
                    for range in [nil, (first: Int64(0), last: Int64(9), size: Int64(4096))] {
                        let fields = FileAnswerFields(
                            entityTag: FileStatus.entityTag(inode: 7, size: 4096, modified: 1_764_033_825_678_000_000),
                            modified: 1_764_033_825_678_000_000, mediaType: FileResponses.mediaType(for: name),
                            disposition: download ? FileResponses.attachment(name) : nil, contentLength: length,
                            contentRange: range)
                        var bytes: [UInt8] = []
                        fields.write(into: &bytes)
                        #expect(String(decoding: bytes, as: UTF8.self) == Self.text(fields.httpFields), "\(name)")
                    }
                }
            }
        }
    }

    @Test("a multistatus answer's fields as bytes are its HTTPFields' (the type and length the router gives)")
    func multistatusFields() {
        for length in [0, 869, 16_384] {
            let fields = SmallReads.Answer.Fields.multistatus(contentLength: length)
            var bytes: [UInt8] = []
            fields.write(into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == Self.text(fields.httpFields))
            #expect(
                Self.text(fields.httpFields)
                    == "Content-Type: \(WebDAV.xmlContentType)\r\nContent-Length: \(length)\r\n")
        }
    }

    @Test(
        "the lane's answer: the head goes into the room before the body when there is room (the body not copied), and is the same bytes when there is not",
        arguments: [0, 10, SmallReads.headroom])
    func answerBytes(headroom: Int) {
        let body = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        var buffer = ByteBufferAllocator().buffer(capacity: headroom + body.count)
        buffer.moveWriterIndex(to: headroom)
        buffer.moveReaderIndex(to: headroom)
        buffer.writeBytes(body)
        let fields = FileAnswerFields(
            entityTag: "\"7-1000-1\"", modified: 1_764_033_825_678_000_000, mediaType: "text/plain",
            contentLength: Int64(body.count))
        let storage = buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let answer = SmallReads.Answer(
            status: .ok, fields: .file(fields), body: consume buffer, date: "Tue, 25 Nov 2025 01:23:45 GMT",
            server: "fileshare")
        var scratch: [UInt8] = []
        let out = SmallReadLane.bytes(of: consume answer, scratch: &scratch, allocator: ByteBufferAllocator())
        var head: [UInt8] = Array("HTTP/1.1 200 OK\r\n".utf8)
        fields.write(into: &head)
        head += Array("Date: Tue, 25 Nov 2025 01:23:45 GMT\r\nServer: fileshare\r\n\r\n".utf8)
        #expect(Array(out.readableBytesView) == head + body)
        // In the room: the head ends where the body began, in the body's own buffer (not a copy of it).
        if headroom >= head.count {
            #expect(out.readerIndex == headroom - head.count)
            #expect(out.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) } == storage)
        }
    }

    @Test("a 304 has the validators and no length; a 200 its length; a 206 its range", arguments: [false, true])
    func planFields(ranged: Bool) throws {
        let metadata = SharedFolder.Metadata(
            kind: .file, device: 1, inode: 9, size: 4096, modified: 1_764_033_825_000_000_000,
            changed: 1_764_033_825_000_000_000, born: nil, permissions: 0o644, linkCount: 1, owner: 0)
        var request = HTTPFields()
        if ranged { request[.range] = "bytes=10-19" }
        guard
            case .send(let status, let fields, let start, let length) =
                FileResponses.plan(named: "a.txt", request: request, download: false, metadata: metadata)
        else {
            Issue.record("not sent")
            return
        }
        #expect(status == (ranged ? .partialContent : .ok))
        #expect((start, length) == (ranged ? (10, 10) : (0, 4096)))
        #expect(fields.httpFields[.contentLength] == (ranged ? "10" : "4096"))
        #expect(fields.httpFields[.contentRange] == (ranged ? "bytes 10-19/4096" : nil))
        request[.ifNoneMatch] = metadata.entityTag
        guard
            case .notModified(let unchanged) =
                FileResponses.plan(named: "a.txt", request: request, download: false, metadata: metadata)
        else {
            Issue.record("not 304")
            return
        }
        #expect(unchanged.httpFields[.contentLength] == nil)
        #expect(unchanged.httpFields[.eTag] == metadata.entityTag)
        #expect(unchanged.httpFields[.lastModified] == "Tue, 25 Nov 2025 01:23:45 GMT")
    }
}

/// Paths read from URLs on the bytes, as the plain Swift they replaced read them.
@Suite("Share paths from URLs, logic")
struct PercentEncodedPathTests {
    @Test(
        "names split at each / as on Characters, decoded, and checked",
        arguments: [
            "a", "a/b/c", "/a//b/", "Team/s-00001.bin", "%C3%89t%C3%A9/%E2%98%83", "e\u{301}/x", "a%2Fb", "a/%2e%2e",
            "..", "a/./b", ".hidden/x", "a%00b", "%ZZ", "%C3", "", "/",
        ])
    func split(raw: String) {
        let bytes = Result { () throws(SharePathError) in try SharePath(percentEncoded: Substring(raw)) }
        // The rule as written before: Character split, then the same decoding and checks per name.
        let characters = Result { () throws(SharePathError) -> SharePath in
            var names: [String] = []
            for segment in raw.split(separator: "/", omittingEmptySubsequences: true) {
                guard let name = String(validating: try SharePath.percentDecode(segment), as: UTF8.self) else {
                    throw SharePathError(.invalid, "a name in the path is not valid UTF-8")
                }
                try SharePath.check(name)
                names.append(name)
            }
            return try SharePath(plain: names.joined(separator: "/"))
        }
        switch (bytes, characters) {
        case (.success(let a), .success(let b)): #expect(a.components == b.components)
        case (.failure(let a), .failure(let b)): #expect(a.description == b.description)
        default: Issue.record("\(raw): \(bytes) against \(characters)")
        }
    }

    @Test(
        "the text of a parsed path is the URL's own names when nothing was decoded or skipped, the same bytes as joined",
        arguments: [
            "a", "a/b/c", "/a//b/", "Team/s-00001.bin", "%C3%89t%C3%A9/%E2%98%83", "e\u{301}/x", "a%20b/c",
            "Été ☃/\u{301}x", "a/b/",
        ])
    func describedFromURL(raw: String) throws {
        let path = try SharePath(percentEncoded: Substring(raw))
        let described = path.description(parsedFrom: Substring(raw))
        #expect(Array(described.utf8) == Array(path.description.utf8))
    }

    @Test("a / before a combining mark ends a name, as every URL parser reads it")
    func slashBeforeCombiningMark() throws {
        // As Characters, "/\u{301}" is one, and the whole was refused as a
        // name containing "/": the byte is what the client sent.
        let path = try SharePath(percentEncoded: Substring("Été ☃/\u{301}x"))
        #expect(path.components == ["Été ☃", "\u{301}x"])
    }

    @Test(
        "client metadata is told by the last name, found from the end; other paths are none",
        arguments: [
            ("a/._b", ["a", "._b"]), ("._b", ["._b"]), ("a/b/.DS_Store", ["a", "b", ".DS_Store"]),
            ("a/._b/", ["a", "._b"]), ("a//._b//", ["a", "._b"]), ("a/%2E_b", ["a", "._b"]),
            ("%2E%44S_Store", [".DS_Store"]), ("a/b", nil), ("a/._", nil), ("a/.hidden", nil), ("._b/a", nil),
            ("", nil), ("/", nil), ("a/%2E_%2Fb", nil), ("a/%ZZ", nil), ("..%2F._b", nil),
            ("e\u{301}/._x", ["e\u{301}", "._x"]),
        ] as [(String, [String]?)])
    func clientMetadata(raw: String, expected: [String]?) {
        #expect(SharePath.clientMetadata(percentEncoded: Substring(raw))?.components == expected)
    }
}
