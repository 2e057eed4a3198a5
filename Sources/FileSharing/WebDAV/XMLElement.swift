import FileWatching

/// A namespace-aware XML element: what WebDAV request bodies are made of,
/// and how dead property values are kept.
///
/// Written here rather than taken from FoundationXML: WebDAV needs a small
/// tree with resolved namespaces, must refuse document type declarations
/// (entity expansion, external entities) and must call an empty prefixed
/// namespace declaration (`xmlns:p=""`) malformed, which libxml2 only warns
/// about; a few hundred lines do exactly that, on bytes, with limits.
struct XMLElement: Sendable, Equatable {
    /// The namespace URI (`""` for none) and the local name.
    var namespace: String
    var name: String
    var attributes: [Attribute]
    var children: [Node]

    struct Attribute: Sendable, Equatable {
        var namespace: String
        var name: String
        var value: String
    }

    enum Node: Sendable, Equatable {
        case element(XMLElement)
        case text(String)
    }

    init(namespace: String, name: String, attributes: [Attribute] = [], children: [Node] = []) {
        self.namespace = namespace
        self.name = name
        self.attributes = attributes
        self.children = children
    }

    /// Whether this is `DAV:` + `name`.
    func isDAV(_ name: String) -> Bool { namespace == "DAV:" && self.name == name }

    /// The child elements.
    var elements: [XMLElement] {
        children.compactMap { if case .element(let element) = $0 { element } else { nil } }
    }

    /// The first child element `DAV:` + `name`.
    func child(_ name: String) -> XMLElement? { elements.first { $0.isDAV(name) } }

    /// The text directly inside, whitespace at both ends removed.
    var text: String {
        var result = ""
        for case .text(let text) in children { result += text }
        return String(result.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

/// Why a body is not acceptable XML (answered 400).
struct XMLParseError: Error, Sendable {
    var message: String
    var offset: Int
}

/// Parses a document into its root element, in time linear in its size:
/// every start tag is bounded (``maximumAttributes``), names are looked up
/// in hash tables, never in lists or chains of scopes.
enum XMLDocumentParser {
    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"
    /// How deeply elements may nest (a WebDAV body needs five or six levels).
    static let maximumDepth = 64
    /// How many attributes, namespace declarations included, one element
    /// may carry (WebDAV clients send a handful).
    static let maximumAttributes = 100

    static func parse(_ bytes: [UInt8]) throws(XMLParseError) -> XMLElement {
        try checkCharacters(bytes)
        var parser = Parser(bytes: bytes)
        return try parser.document()
    }

    /// Refuses what XML 1.0 allows nowhere, not even escaped: the C0 controls
    /// but tab, line feed and carriage return, and U+FFFE and U+FFFF. Kept,
    /// such a character would make every later answer that shows it (a
    /// property's value, a lock's owner) ill-formed.
    static func checkCharacters(_ bytes: [UInt8]) throws(XMLParseError) {
        for index in bytes.indices {
            let byte = bytes[index]
            if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                throw XMLParseError(message: "a control character (\(byte)) XML does not allow", offset: index)
            }
            if byte == 0xEF && index + 2 < bytes.count && bytes[index + 1] == 0xBF && bytes[index + 2] >= 0xBE {
                throw XMLParseError(message: "a character (U+FFFE or U+FFFF) XML does not allow", offset: index)
            }
        }
    }

    /// Whether XML 1.0 allows the character `value` (its production `Char`).
    static func isCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x1_0000...0x10_FFFF: true
        default: false
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0
        /// The namespace each prefix is bound to, innermost binding last
        /// (`""` is the default namespace): a lookup is one hash, however
        /// deep the element.
        var bindings: [String: [String]] = ["xml": [XMLDocumentParser.xmlNamespace], "": [""]]

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ message: String) -> XMLParseError { XMLParseError(message: message, offset: position) }

        var atEnd: Bool { position >= bytes.count }
        func peek(_ offset: Int = 0) -> UInt8? { position + offset < bytes.count ? bytes[position + offset] : nil }

        func looking(at text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            return text.withUTF8Buffer { prefix in
                for index in 0..<count where bytes[position + index] != prefix[index] { return false }
                return true
            }
        }

        static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

        mutating func skipSpace() { while let byte = peek(), Parser.isSpace(byte) { position += 1 } }

        mutating func document() throws(XMLParseError) -> XMLElement {
            if looking(at: "\u{FEFF}") { position += 3 }
            var root: XMLElement? = nil
            while true {
                skipSpace()
                if atEnd { break }
                if looking(at: "<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if looking(at: "<!--") {
                    try skip(past: "-->", what: "comment")
                } else if looking(at: "<!DOCTYPE") || looking(at: "<!doctype") {
                    throw fail("document type declarations are not accepted")
                } else if peek() == UInt8(ascii: "<") {
                    guard root == nil else { throw fail("a second root element") }
                    root = try element(depth: 0)
                } else {
                    throw fail("text outside the root element")
                }
            }
            guard let root else { throw fail("no root element") }
            return root
        }

        mutating func skip(past end: StaticString, what: String) throws(XMLParseError) {
            while !atEnd {
                if looking(at: end) {
                    position += end.utf8CodeUnitCount
                    return
                }
                position += 1
            }
            throw fail("an unterminated \(what)")
        }

        static func isNameByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"), 0x80...0xFF:
                true
            default: false
            }
        }

        mutating func name() throws(XMLParseError) -> String {
            let start = position
            while let byte = peek(), Parser.isNameByte(byte) { position += 1 }
            guard position > start else { throw fail("a name was expected") }
            let first = bytes[start]
            if first == UInt8(ascii: "-") || first == UInt8(ascii: ".") || (first >= 0x30 && first <= 0x39) {
                throw fail("a name cannot start with '\(UnicodeScalar(first))'")
            }
            guard let text = String(validating: bytes[start..<position], as: UTF8.self) else {
                throw fail("a name that is not UTF-8")
            }
            return text
        }

        static func split(_ qualified: String) -> (prefix: String, local: String)? {
            let parts = qualified.split(separator: ":", omittingEmptySubsequences: false)
            switch parts.count {
            case 1: return ("", qualified)
            case 2 where !parts[0].isEmpty && !parts[1].isEmpty: return (String(parts[0]), String(parts[1]))
            default: return nil
            }
        }

        func resolve(_ prefix: String) -> String? { bindings[prefix]?.last }

        /// An attribute's resolved name, to find one given twice.
        struct ExpandedName: Hashable {
            var namespace: String
            var name: String
        }

        mutating func element(depth: Int) throws(XMLParseError) -> XMLElement {
            guard depth < XMLDocumentParser.maximumDepth else {
                throw fail("elements nested more than \(XMLDocumentParser.maximumDepth) deep")
            }
            position += 1  // <
            let qualified = try name()
            var rawAttributes: [(String, String)] = []
            var rawNames = Set<String>()
            var selfClosing = false
            while true {
                let hadSpace = peek().map(Parser.isSpace) ?? false
                skipSpace()
                guard let byte = peek() else { throw fail("an unterminated tag <\(qualified)>") }
                if byte == UInt8(ascii: ">") {
                    position += 1
                    break
                }
                if byte == UInt8(ascii: "/") {
                    guard peek(1) == UInt8(ascii: ">") else { throw fail("'/' inside a tag") }
                    position += 2
                    selfClosing = true
                    break
                }
                guard hadSpace else { throw fail("attributes must be separated by spaces") }
                guard rawAttributes.count < XMLDocumentParser.maximumAttributes else {
                    throw fail(
                        "<\(qualified)> has more than \(XMLDocumentParser.maximumAttributes) attributes and namespace declarations, the most one element may have"
                    )
                }
                let attributeName = try name()
                skipSpace()
                guard peek() == UInt8(ascii: "=") else { throw fail("'=' expected after \(attributeName)") }
                position += 1
                skipSpace()
                let value = try quoted()
                guard rawNames.insert(attributeName).inserted else {
                    throw fail("attribute \(attributeName) given twice")
                }
                rawAttributes.append((attributeName, value))
            }
            // Namespace declarations first, then names resolved in the new scope.
            var declared: [String] = []
            defer {
                for prefix in declared { bindings[prefix]?.removeLast() }
            }
            for (attributeName, value) in rawAttributes {
                let prefix: String
                if attributeName == "xmlns" {
                    prefix = ""
                } else if attributeName.utf8.starts(with: "xmlns:".utf8) {
                    prefix = String(attributeName.dropFirst(6))
                    guard !prefix.isEmpty, !prefix.utf8.contains(UInt8(ascii: ":")) else {
                        throw fail("a bad namespace prefix \(attributeName)")
                    }
                    guard !value.isEmpty else {
                        throw fail("the namespace prefix '\(prefix)' is bound to an empty name")
                    }
                } else {
                    continue
                }
                bindings[prefix, default: []].append(value)
                declared.append(prefix)
            }
            var attributes: [XMLElement.Attribute] = []
            var expandedNames = Set<ExpandedName>()
            for (attributeName, value) in rawAttributes
            where attributeName != "xmlns" && !attributeName.utf8.starts(with: "xmlns:".utf8) {
                guard let (prefix, local) = Parser.split(attributeName) else {
                    throw fail("a bad attribute name \(attributeName)")
                }
                var namespace = ""
                if !prefix.isEmpty {
                    guard let uri = resolve(prefix) else { throw fail("the prefix '\(prefix)' is not declared") }
                    namespace = uri
                }
                guard expandedNames.insert(ExpandedName(namespace: namespace, name: local)).inserted else {
                    throw fail("attribute \(attributeName) given twice")
                }
                attributes.append(.init(namespace: namespace, name: local, value: value))
            }
            guard let (prefix, local) = Parser.split(qualified) else { throw fail("a bad element name \(qualified)") }
            guard let namespace = resolve(prefix) else { throw fail("the prefix '\(prefix)' is not declared") }
            var element = XMLElement(namespace: namespace, name: local, attributes: attributes)
            if selfClosing { return element }
            var text: [UInt8] = []
            func flushText() throws(XMLParseError) {
                guard !text.isEmpty else { return }
                guard let string = String(validating: text, as: UTF8.self) else { throw fail("text that is not UTF-8") }
                element.children.append(.text(string))
                text.removeAll(keepingCapacity: true)
            }
            while true {
                guard let byte = peek() else { throw fail("<\(qualified)> is not closed") }
                if byte == UInt8(ascii: "<") {
                    if looking(at: "</") {
                        try flushText()
                        position += 2
                        let closing = try name()
                        guard closing == qualified else { throw fail("</\(closing)> closes <\(qualified)>") }
                        skipSpace()
                        guard peek() == UInt8(ascii: ">") else { throw fail("'>' expected after </\(closing)") }
                        position += 1
                        return element
                    } else if looking(at: "<!--") {
                        try skip(past: "-->", what: "comment")
                    } else if looking(at: "<![CDATA[") {
                        position += 9
                        let start = position
                        try skip(past: "]]>", what: "CDATA section")
                        text.append(contentsOf: bytes[start..<(position - 3)])
                    } else if looking(at: "<?") {
                        try skip(past: "?>", what: "processing instruction")
                    } else if looking(at: "<!") {
                        throw fail("a declaration inside an element")
                    } else {
                        try flushText()
                        element.children.append(.element(try self.element(depth: depth + 1)))
                    }
                } else if byte == UInt8(ascii: "&") {
                    text.append(contentsOf: try reference())
                } else {
                    text.append(byte)
                    position += 1
                }
            }
        }

        mutating func quoted() throws(XMLParseError) -> String {
            guard let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw fail("an attribute value must be quoted")
            }
            position += 1
            var value: [UInt8] = []
            while true {
                guard let byte = peek() else { throw fail("an unterminated attribute value") }
                if byte == quote {
                    position += 1
                    break
                }
                if byte == UInt8(ascii: "<") { throw fail("'<' in an attribute value") }
                if byte == UInt8(ascii: "&") {
                    value.append(contentsOf: try reference())
                } else {
                    value.append(Parser.isSpace(byte) ? 0x20 : byte)
                    position += 1
                }
            }
            guard let text = String(validating: value, as: UTF8.self) else {
                throw fail("an attribute value that is not UTF-8")
            }
            return text
        }

        /// An entity or character reference, decoded.
        mutating func reference() throws(XMLParseError) -> [UInt8] {
            let start = position
            position += 1
            while let byte = peek(), byte != UInt8(ascii: ";") {
                position += 1
                if position - start > 12 { throw fail("a bad '&' reference") }
            }
            guard peek() == UInt8(ascii: ";") else { throw fail("a bad '&' reference") }
            let body = String(decoding: bytes[(start + 1)..<position], as: UTF8.self)
            position += 1
            switch body {
            case "lt": return [UInt8(ascii: "<")]
            case "gt": return [UInt8(ascii: ">")]
            case "amp": return [UInt8(ascii: "&")]
            case "apos": return [UInt8(ascii: "'")]
            case "quot": return [UInt8(ascii: "\"")]
            default:
                var value: UInt32? = nil
                if body.hasPrefix("#x") {
                    value = UInt32(body.dropFirst(2), radix: 16)
                } else if body.hasPrefix("#") {
                    value = UInt32(body.dropFirst(1))
                }
                guard let value, let scalar = UnicodeScalar(value) else {
                    throw fail("an unknown reference &\(body);")
                }
                guard XMLDocumentParser.isCharacter(value) else {
                    throw fail("&\(body); is a character XML does not allow")
                }
                return Array(String(Character(scalar)).utf8)
            }
        }
    }
}

/// XML written straight into bytes, with the `DAV:` namespace as `D:`.
struct XMLWriter {
    private(set) var bytes: [UInt8] = []

    /// A writer for a document (with the XML declaration) or, with
    /// `declaration: false`, for a fragment.
    init(capacity: Int = 1024, declaration: Bool = true) {
        bytes.reserveCapacity(capacity)
        if declaration { raw("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n") }
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// Escaped text (also fit for attribute values). A character XML 1.0
    /// cannot carry even escaped (a C0 control but tab and line feed,
    /// U+FFFE, U+FFFF: a name on disk may hold one) is written as U+FFFD,
    /// so the document stays well-formed whatever the text.
    mutating func text(_ text: String) {
        // Most text (names, types) has nothing to escape: appended whole.
        let utf8 = text.utf8
        if !utf8.contains(where: {
            $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"")
                || ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A) || $0 == 0xEF
        }) {
            bytes.append(contentsOf: utf8)
            return
        }
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            switch byte {
            case UInt8(ascii: "&"): raw("&amp;")
            case UInt8(ascii: "<"): raw("&lt;")
            case UInt8(ascii: ">"): raw("&gt;")
            case UInt8(ascii: "\""): raw("&quot;")
            case UInt8(ascii: "\r"): raw("&#13;")
            case 0x09, 0x0A: bytes.append(byte)
            case 0..<0x20: raw("\u{FFFD}")
            case 0xEF:
                // U+FFFE and U+FFFF are EF BF BE and EF BF BF.
                var rest = utf8[index...].prefix(2).makeIterator()
                if rest.next() == 0xBF, let last = rest.next(), last >= 0xBE {
                    raw("\u{FFFD}")
                    utf8.formIndex(&index, offsetBy: 2)
                } else {
                    bytes.append(byte)
                }
            default: bytes.append(byte)
            }
        }
    }

    /// `<D:name>text</D:name>`.
    mutating func dav(_ name: StaticString, _ value: String) {
        raw("<D:")
        raw(name)
        raw(">")
        text(value)
        raw("</D:")
        raw(name)
        raw(">")
    }

    /// The percent-encoded URL path of a shared path under `/dav` (folders end with `/`).
    mutating func href(_ path: SharePath, collection: Bool) {
        raw("/dav")
        for name in path.components {
            bytes.append(UInt8(ascii: "/"))
            for byte in name.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    bytes.append(byte)
                default:
                    let hex: StaticString = "0123456789ABCDEF"
                    bytes.append(UInt8(ascii: "%"))
                    hex.withUTF8Buffer {
                        bytes.append($0[Int(byte >> 4)])
                        bytes.append($0[Int(byte & 0xF)])
                    }
                }
            }
        }
        if collection || path.isRoot { bytes.append(UInt8(ascii: "/")) }
    }

    /// A number in decimal.
    mutating func number(_ value: Int64) { bytes.appendDecimal(value) }

    /// A file's entity tag between its quotes (`FileStatus.entityTag`'s form).
    mutating func entityTagBody(inode: UInt64, size: Int64, modified: Int64) {
        FileStatus.writeEntityTagBody(inode: inode, size: size, modified: modified, into: &bytes)
    }

    mutating func httpDate(nanoseconds: Int64) { CivilTime(nanoseconds: nanoseconds).writeHTTPDate(into: &bytes) }

    mutating func rfc3339(nanoseconds: Int64) { CivilTime(nanoseconds: nanoseconds).writeRFC3339(into: &bytes) }

    /// An element with its namespace declared on it (for property names that are not `DAV:`).
    mutating func emptyElement(namespace: String, name: String) {
        if namespace == "DAV:" {
            raw("<D:" + name + "/>")
        } else if namespace.isEmpty {
            raw("<" + name + " xmlns=\"\"/>")
        } else {
            raw("<P:" + name + " xmlns:P=\"")
            text(namespace)
            raw("\"/>")
        }
    }
}

extension XMLElement {
    /// The element as a self-contained fragment: every namespace it uses is
    /// declared on it, so it can be stored and written back anywhere.
    var serialized: String {
        var prefixes: [String: String] = ["DAV:": "D", XMLDocumentParser.xmlNamespace: "xml"]
        var order: [String] = []
        func collect(_ element: XMLElement) {
            for namespace in [element.namespace] + element.attributes.map(\.namespace)
            where !namespace.isEmpty && prefixes[namespace] == nil {
                prefixes[namespace] = "ns\(order.count)"
                order.append(namespace)
            }
            for child in element.elements { collect(child) }
        }
        collect(self)
        func usesDAVNamespace(_ element: XMLElement) -> Bool {
            element.namespace == "DAV:" || element.attributes.contains { $0.namespace == "DAV:" }
                || element.elements.contains(where: usesDAVNamespace)
        }
        let usesDAV = usesDAVNamespace(self)
        var writer = XMLWriter(capacity: 256, declaration: false)
        func write(_ element: XMLElement, top: Bool) {
            let qualified = element.namespace.isEmpty ? element.name : prefixes[element.namespace]! + ":" + element.name
            writer.raw("<" + qualified)
            if top {
                if usesDAV { writer.raw(" xmlns:D=\"DAV:\"") }
                for namespace in order {
                    writer.raw(" xmlns:" + prefixes[namespace]! + "=\"")
                    writer.text(namespace)
                    writer.raw("\"")
                }
            }
            // Unprefixed names are in no namespace, whatever surrounds the fragment.
            if element.namespace.isEmpty { writer.raw(" xmlns=\"\"") }
            for attribute in element.attributes {
                let name =
                    attribute.namespace.isEmpty ? attribute.name : prefixes[attribute.namespace]! + ":" + attribute.name
                writer.raw(" " + name + "=\"")
                writer.text(attribute.value)
                writer.raw("\"")
            }
            if element.children.isEmpty {
                writer.raw("/>")
                return
            }
            writer.raw(">")
            for child in element.children {
                switch child {
                case .text(let text): writer.text(text)
                case .element(let inner): write(inner, top: false)
                }
            }
            writer.raw("</" + qualified + ">")
        }
        write(self, top: true)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
