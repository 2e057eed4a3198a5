/// The start tags of an XML document (ComicInfo.xml, an EPUB's container
/// and package) with their attributes: enough to find a cover, without an
/// XML library. Comments, processing instructions and CDATA are skipped;
/// entities in values are decoded for the five XML names and numbers.
struct MarkupTags {
    struct Tag: Equatable {
        /// The name without its namespace prefix (`opf:item` is `item`).
        var name: String
        var attributes: [String: String]
    }

    /// The start (and empty-element) tags, in document order.
    static func tags(in text: String) -> [Tag] {
        var tags: [Tag] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: open)...]
            if rest.hasPrefix("!--") {
                guard let end = rest.firstRange(of: "-->") else { break }
                rest = rest[end.upperBound...]
                continue
            }
            if rest.hasPrefix("![CDATA[") {
                guard let end = rest.firstRange(of: "]]>") else { break }
                rest = rest[end.upperBound...]
                continue
            }
            guard let close = rest.firstIndex(of: ">") else { break }
            let body = rest[..<close]
            rest = rest[rest.index(after: close)...]
            guard let first = body.first, first != "/", first != "?", first != "!" else { continue }
            let nameEnd = body.firstIndex { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "/" }
            let qualified = body[..<(nameEnd ?? body.endIndex)]
            let name = qualified.split(separator: ":").last.map(String.init) ?? String(qualified)
            tags.append(Tag(name: name, attributes: attributes(in: body[(nameEnd ?? body.endIndex)...])))
        }
        return tags
    }

    /// `key="value"` and `key='value'` pairs.
    private static func attributes(in text: Substring) -> [String: String] {
        var attributes: [String: String] = [:]
        var rest = text
        while let equals = rest.firstIndex(of: "=") {
            let key = rest[..<equals].split(whereSeparator: { $0 == " " || $0.isNewline || $0 == "\t" }).last
            var after = rest[rest.index(after: equals)...].drop { $0 == " " || $0.isNewline || $0 == "\t" }
            guard let quote = after.first, quote == "\"" || quote == "'" else { break }
            after = after.dropFirst()
            guard let end = after.firstIndex(of: quote) else { break }
            if let key {
                let name = key.split(separator: ":").last.map(String.init) ?? String(key)
                attributes[name] = decodeEntities(after[..<end])
            }
            rest = after[after.index(after: end)...]
        }
        return attributes
    }

    private static func decodeEntities(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var out = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            guard let semicolon = after.prefix(12).firstIndex(of: ";") else {
                out += "&"
                rest = after
                continue
            }
            let entity = after[..<semicolon]
            let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
            if let value = named[String(entity)] {
                out += value
            } else if entity.hasPrefix("#x"), let code = UInt32(entity.dropFirst(2), radix: 16),
                let scalar = Unicode.Scalar(code)
            {
                out.unicodeScalars.append(scalar)
            } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                out.unicodeScalars.append(scalar)
            } else {
                out += "&" + entity + ";"
            }
            rest = after[after.index(after: semicolon)...]
        }
        return out + rest
    }
}
