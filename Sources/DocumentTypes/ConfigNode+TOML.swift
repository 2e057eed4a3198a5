import ConfigText
import TOMLKit

extension ConfigNode {
    /// Parses a TOML document with TOMLKit (toml++).
    ///
    /// toml++ reports where a syntax error is, but not where values are; the
    /// positions of keys, table headers and strings are found in the text
    /// (the header of the n-th `[[types]]`, a key's line within its table, a
    /// string's first occurrence from its key's line on), which is exact for
    /// files written in the usual layout and at worst names the enclosing line.
    ///
    /// - Throws: ``ConfigProblem`` with toml++'s description and position.
    static func parseTOML(_ text: String) throws(ConfigProblem) -> ConfigNode {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigProblem(
                message: "invalid TOML: \(error.description)",
                position: SourcePosition(line: error.source.begin.line, column: error.source.begin.column))
        } catch {
            throw ConfigProblem(message: "the TOML could not be read: \(error)", position: nil)
        }
        let locator = TOMLLocator(text)
        return locator.convert(
            table, path: [], section: 0..<locator.lines.count, hasHeader: false,
            anchor: SourcePosition(line: 1, column: 1))
    }
}

/// Finds where the keys and values of a parsed TOML table are in its text.
private struct TOMLLocator {
    /// The lines, without their line breaks.
    let lines: [[Unicode.Scalar]]
    /// For each line that is a table header: its dotted name and whether it
    /// is an array of tables (`[[…]]`).
    let headers: [Int: (name: String, isArray: Bool)]

    init(_ text: String) {
        var lines: [[Unicode.Scalar]] = [[]]
        for scalar in text.unicodeScalars {
            if scalar == "\n" { lines.append([]) } else if scalar != "\r" { lines[lines.count - 1].append(scalar) }
        }
        self.lines = lines
        var headers: [Int: (String, Bool)] = [:]
        for (number, line) in lines.enumerated() {
            let trimmedLine = String(String.UnicodeScalarView(line)).drop { $0 == " " || $0 == "\t" }
            guard trimmedLine.hasPrefix("[") else { continue }
            let isArray = trimmedLine.hasPrefix("[[")
            let inner = trimmedLine.dropFirst(isArray ? 2 : 1).prefix { $0 != "]" }
            let name = inner.split(separator: ".").map { trimmed($0).trimmingQuotes }.joined(separator: ".")
            headers[number] = (name, isArray)
        }
        self.headers = headers
    }

    /// Converts a table (or any value) whose text spans the lines of
    /// `section`, starting with its header line if `hasHeader`.
    func convert(
        _ value: any TOMLValueConvertible, path: [String], section: Range<Int>, hasHeader: Bool, anchor: SourcePosition
    ) -> ConfigNode {
        switch value.type {
        case .string: return ConfigNode(.string(value.string ?? ""), at: anchor)
        case .int: return ConfigNode(.integer(value.int ?? 0), at: anchor)
        case .bool: return ConfigNode(.boolean(value.bool ?? false), at: anchor)
        case .double: return ConfigNode(.other("a decimal number"), at: anchor)
        case .date, .time, .dateTime: return ConfigNode(.other("a date or time"), at: anchor)
        case .table:
            guard let table = value.table else { return ConfigNode(.table([]), at: anchor) }
            var entries: [(key: String, node: ConfigNode)] = []
            for key in table.keys.sorted(by: { keyOrder($0, $1, in: section, hasHeader: hasHeader) }) {
                guard let member = table[key] else { continue }
                let childPath = path + [key]
                let dotted = childPath.joined(separator: ".")
                if member.type == .table,
                    let header = headers.filter({
                        !$0.value.isArray && $0.value.name == dotted && section.contains($0.key)
                    }).keys.min()
                {
                    let sub = header..<nextHeader(after: header, within: section, nestedUnder: dotted)
                    entries.append(
                        (
                            key,
                            convert(
                                member, path: childPath, section: sub, hasHeader: true,
                                anchor: SourcePosition(line: header + 1))
                        ))
                    continue
                }
                if member.type == .array, let array = member.array, !array.isEmpty,
                    array.allSatisfy({ $0.type == .table })
                {
                    let arrayHeaders = headers.filter {
                        $0.value.isArray && $0.value.name == dotted && section.contains($0.key)
                    }
                    .keys.sorted()
                    if arrayHeaders.count == array.count {
                        var elements: [ConfigNode] = []
                        for (element, header) in zip(array, arrayHeaders) {
                            let sub = header..<nextHeader(after: header, within: section, nestedUnder: dotted)
                            elements.append(
                                convert(
                                    element, path: childPath, section: sub, hasHeader: true,
                                    anchor: SourcePosition(line: header + 1)))
                        }
                        entries.append(
                            (key, ConfigNode(.list(elements), at: SourcePosition(line: arrayHeaders[0] + 1))))
                        continue
                    }
                }
                let keyPosition = locate(key: key, in: section, hasHeader: hasHeader) ?? anchor
                let valueSection = keyPosition.line - 1..<max(keyPosition.line, section.upperBound)
                entries.append(
                    (key, convertInline(member, path: childPath, section: valueSection, anchor: keyPosition)))
            }
            return ConfigNode(.table(entries), at: anchor)
        case .array:
            return convertInline(value, path: path, section: section, anchor: anchor)
        }
    }

    /// A value written after `key =`: strings are looked for from the key's line on.
    private func convertInline(
        _ value: any TOMLValueConvertible, path: [String], section: Range<Int>, anchor: SourcePosition
    ) -> ConfigNode {
        switch value.type {
        case .string:
            let text = value.string ?? ""
            return ConfigNode(.string(text), at: locate(string: text, from: anchor, in: section) ?? anchor)
        case .array:
            guard let array = value.array else { return ConfigNode(.list([]), at: anchor) }
            var elements: [ConfigNode] = []
            var cursor = anchor
            for element in array {
                let node = convertInline(element, path: path, section: section, anchor: cursor)
                if case .string = node.value, let found = node.position { cursor = found }
                elements.append(node)
            }
            return ConfigNode(.list(elements), at: anchor)
        case .table:
            // An inline table: its keys are looked for from the anchor's line on.
            guard let table = value.table else { return ConfigNode(.table([]), at: anchor) }
            var entries: [(key: String, node: ConfigNode)] = []
            for key in table.keys {
                guard let member = table[key] else { continue }
                let keyPosition = locate(key: key, from: anchor, in: section) ?? anchor
                entries.append((key, convertInline(member, path: path + [key], section: section, anchor: keyPosition)))
            }
            return ConfigNode(.table(entries), at: anchor)
        default:
            return convert(value, path: path, section: section, hasHeader: false, anchor: anchor)
        }
    }

    /// The line after the last line of the section that starts at `header`:
    /// the next header that is not a sub-table of `name`.
    private func nextHeader(after header: Int, within section: Range<Int>? = nil, nestedUnder name: String? = nil)
        -> Int
    {
        let limit = section?.upperBound ?? lines.count
        var line = header + 1
        while line < limit {
            if let next = headers[line] {
                guard let name, next.name.hasPrefix(name + "."), next.name != name else { return line }
            }
            line += 1
        }
        return limit
    }

    /// Orders keys by where they appear in the section (TOMLKit's tables are sorted by name).
    private func keyOrder(_ a: String, _ b: String, in section: Range<Int>, hasHeader: Bool) -> Bool {
        let lineA = locate(key: a, in: section, hasHeader: hasHeader)?.line ?? Int.max
        let lineB = locate(key: b, in: section, hasHeader: hasHeader)?.line ?? Int.max
        return lineA != lineB ? lineA < lineB : a < b
    }

    /// The position of `key =` in the section's own lines (before its first sub-table).
    private func locate(key: String, in section: Range<Int>, hasHeader: Bool) -> SourcePosition? {
        var line = section.lowerBound + (hasHeader ? 1 : 0)
        while line < section.upperBound, headers[line] == nil {
            if let column = column(ofKey: key, in: lines[line], from: 0) {
                return SourcePosition(line: line + 1, column: column)
            }
            line += 1
        }
        return nil
    }

    /// The position of `key =` from `anchor` on, within an inline table.
    private func locate(key: String, from anchor: SourcePosition, in section: Range<Int>) -> SourcePosition? {
        var line = anchor.line - 1
        var start = (anchor.column ?? 1) - 1
        while line < min(section.upperBound, lines.count) {
            if let column = column(ofKey: key, in: lines[line], from: start) {
                return SourcePosition(line: line + 1, column: column)
            }
            line += 1
            start = 0
        }
        return nil
    }

    /// The first occurrence of `string` in quotes from `anchor` on.
    private func locate(string: String, from anchor: SourcePosition, in section: Range<Int>) -> SourcePosition? {
        let target = Array(string.unicodeScalars)
        var line = anchor.line - 1
        var start = (anchor.column ?? 1) - 1
        while line >= 0, line < min(max(section.upperBound, anchor.line), lines.count) {
            let scalars = lines[line]
            var index = start
            while index + target.count + 1 < scalars.count {
                let quote = scalars[index]
                if quote == "\"" || quote == "'", Array(scalars[(index + 1)..<(index + 1 + target.count)]) == target,
                    scalars[index + 1 + target.count] == quote
                {
                    return SourcePosition(line: line + 1, column: index + 1)
                }
                index += 1
            }
            line += 1
            start = 0
        }
        return nil
    }

    /// The column of `key` followed by `=`, as a bare or quoted key, at or after `start`.
    private func column(ofKey key: String, in line: [Unicode.Scalar], from start: Int) -> Int? {
        let candidates = [Array(key.unicodeScalars), Array("\"\(key)\"".unicodeScalars)]
        var index = start
        while index < line.count {
            if line[index] == "#" { return nil }
            for candidate in candidates where index + candidate.count <= line.count {
                guard Array(line[index..<(index + candidate.count)]) == candidate else { continue }
                let before = index == 0 ? " " : line[index - 1]
                guard before == " " || before == "\t" || before == "{" || before == "," else { continue }
                var after = index + candidate.count
                while after < line.count, line[after] == " " || line[after] == "\t" { after += 1 }
                if after < line.count, line[after] == "=" { return index + 1 }
            }
            index += 1
        }
        return nil
    }
}

extension StringProtocol {
    /// The text without surrounding double or single quotes.
    fileprivate var trimmingQuotes: String {
        if count >= 2, (hasPrefix("\"") && hasSuffix("\"")) || (hasPrefix("'") && hasSuffix("'")) {
            return String(dropFirst().dropLast())
        }
        return String(self)
    }
}
