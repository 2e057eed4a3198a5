extension DocumentTypeRegistry {
    /// Identifies the regular file at `path` by its content first and its
    /// name second.
    ///
    /// It reads the first 64 KiB and, for a ZIP archive, the end record and
    /// the central directory (at most 1 MiB of it) with `pread`; after an ID3
    /// tag, the bytes that follow it. It never reads the whole file.
    ///
    /// - Parameters:
    ///   - path: The file to read.
    ///   - name: The name to judge by, if not the path's (an upload staged under another name).
    /// - Throws: ``DocumentTypeError`` when the file cannot be read.
    public func identify(fileAt path: String, name: String? = nil) throws -> Identification {
        try identify(FileContent(path: path), name: name ?? path)
    }

    /// Identifies the regular file open at `descriptor`, which stays open.
    ///
    /// - Parameters:
    ///   - descriptor: A descriptor open for reading.
    ///   - name: The file's name, for the extension and messages.
    /// - Throws: ``DocumentTypeError`` when the file cannot be read.
    public func identify(fileDescriptor descriptor: Int32, name: String?) throws -> Identification {
        try identify(FileContent(descriptor: descriptor, path: name), name: name)
    }

    /// Identifies content held whole in memory.
    ///
    /// - Parameters:
    ///   - bytes: The whole content.
    ///   - name: The file's name, if known.
    public func identify(bytes: [UInt8], name: String?) -> Identification {
        identifyInMemory(ContentBytes(bytes), name: name)
    }

    /// Identifies content from its first bytes, as an upload arrives.
    ///
    /// 64 KiB are enough for every signature of the catalogue. Without the
    /// end of a ZIP archive, its entries are those whose local headers lie
    /// in `prefix`: an EPUB or OpenDocument file is told by its first entry,
    /// an Office document by its first ones, and a comic book archive by the
    /// images in the prefix.
    ///
    /// - Parameters:
    ///   - prefix: The first bytes of the content.
    ///   - name: The file's name, if known.
    ///   - totalSize: The size of the whole content, if known (a size equal
    ///     to the prefix's means the prefix is the whole content).
    public func identify(prefix: [UInt8], name: String?, totalSize: Int? = nil) -> Identification {
        identifyInMemory(ContentBytes(prefix: prefix, totalSize: totalSize), name: name)
    }

    /// Identifies content read from any source, by its content first and
    /// its name second.
    ///
    /// - Parameters:
    ///   - content: Where to read the content.
    ///   - name: The file's name, if known; only its extension counts.
    /// - Throws: What `content` throws when it cannot be read.
    public func identify(_ content: some ContentSource, name: String?) throws -> Identification {
        let findings = try examine(content, id3Depth: 0)
        let nameIndex = name.flatMap { typeIndex(forFileName: $0) }
        return decide(findings, nameIndex: nameIndex, fileName: name.map(lastComponent))
    }

    private func identifyInMemory(_ content: ContentBytes, name: String?) -> Identification {
        do {
            return try identify(content, name: name)
        } catch {
            // ContentBytes never throws.
            fatalError("reading bytes in memory failed: \(error)")
        }
    }

    // MARK: - Content

    /// How strongly a signature matched.
    enum Strength: Comparable {
        /// An ISO media file's compatible brand: a weaker claim than its major brand.
        case weak
        case strong
    }

    /// What the content showed.
    struct Findings {
        /// Every type one of whose signatures matched.
        var matched: [Int: Strength] = [:]
        /// The matched types one of whose matching signatures is conclusive
        /// (``ContentSignature/isConclusive``): evidence against a name.
        var conclusive: Set<Int> = []
        /// The most specific type matched, not counting those that need their name.
        var primary: Int?
        var isEmpty = false
        var isText = false
    }

    /// Tries every signature on the content.
    func examine(_ content: any ContentSource, id3Depth: Int) throws -> Findings {
        let probe = try ContentProbe(content)
        var findings = Findings()
        if probe.isEmpty {
            findings.isEmpty = true
            return findings
        }
        // An ID3v2 tag: what follows it decides (MP3, or FLAC or AAC with a tag);
        // MP3 if nothing does.
        if let tagLength = id3TagLength(probe.head), id3Depth < 4 {
            var inner = try examine(OffsetContent(base: content, offset: tagLength), id3Depth: id3Depth + 1)
            let audio = index[.audio]
            // The tag is evidence enough of audio, whatever few bits follow it.
            if let primary = inner.primary, let audio, closure[primary].contains(audio) {
                inner.conclusive.insert(primary)
                return inner
            }
            if let mp3 = index[.mp3] {
                inner.matched[mp3] = .strong
                inner.conclusive.insert(mp3)
                inner.primary = mp3
                inner.isText = false
                inner.isEmpty = false
                return inner
            }
        }
        for position in types.indices {
            var best: Strength?
            var conclusive = false
            for signature in types[position].signatures {
                guard let strength = try match(signature, probe) else { continue }
                if best == nil || strength > best! { best = strength }
                conclusive = conclusive || signature.isConclusive
                if strength == .strong && conclusive { break }
            }
            if let best { findings.matched[position] = best }
            if conclusive { findings.conclusive.insert(position) }
        }
        findings.primary = mostSpecific(findings.matched)
        findings.isText = findings.primary == nil && probe.text.isText
        return findings
    }

    /// The most specific of the matched types that do not need their name:
    /// one that no other matched type is a kind of; among several, a strong
    /// match before a weak one, then registry order.
    private func mostSpecific(_ matched: [Int: Strength]) -> Int? {
        let candidates = matched.keys.filter { !types[$0].requiresMatchingName }
        let specific = candidates.filter { candidate in
            !candidates.contains { other in other != candidate && closure[other].contains(candidate) }
        }
        return specific.min { a, b in
            let strengthA = matched[a]!
            let strengthB = matched[b]!
            return strengthA != strengthB ? strengthA > strengthB : a < b
        }
    }

    private func match(_ signature: ContentSignature, _ probe: ContentProbe) throws -> Strength? {
        switch signature {
        case .bytes(let patterns):
            for pattern in patterns where !pattern.matches(try probe.bytes(for: pattern)) {
                return nil
            }
            return .strong
        case .textPrefix(let prefix, let ignoringCase):
            return probe.text.starts(with: prefix, ignoringCase: ignoringCase) ? .strong : nil
        case .xmlRoot(let name):
            return probe.text.xmlRootName == name ? .strong : nil
        case .isoBrand(let brands):
            guard let found = probe.isoBrands else { return nil }
            let wanted = brands.map { Array($0.utf8) }
            if wanted.contains(found.major) { return .strong }
            return found.compatible.contains { wanted.contains($0) } ? .weak : nil
        case .zip(let rule):
            return try matches(rule, probe) ? .strong : nil
        }
    }

    private func matches(_ rule: ZipSignature, _ probe: ContentProbe) throws -> Bool {
        guard let listing = try probe.zip() else { return false }
        if let mimetype = rule.mimetype, !(try probe.mimetypeEntry(expected: mimetype)) { return false }
        for required in rule.requiredEntries {
            let found =
                required.hasSuffix("/")
                ? listing.entries.contains { $0.name.hasPrefix(required) && $0.name.count > required.count }
                : listing.entries.contains { $0.name == required }
            if !found { return false }
        }
        if let entryType = rule.entryType {
            guard let target = index[entryType] else { return false }
            let ignored = Set(rule.ignoredNames.map { $0.lowercased() })
            var conforming = 0
            for entry in listing.entries {
                let components = entry.name.split(separator: "/")
                guard let last = components.last, !entry.name.hasSuffix("/") else { continue }
                if components.contains(where: { $0.hasPrefix(".") || $0 == "__MACOSX" }) { continue }
                if ignored.contains(last.lowercased()) { continue }
                guard let type = typeIndex(forFileName: String(last)), closure[type].contains(target) else {
                    return false
                }
                conforming += 1
            }
            if conforming == 0 { return false }
        }
        return true
    }

    /// The length of an ID3v2 tag at the start of `head`, header and footer included.
    private func id3TagLength(_ head: [UInt8]) -> Int? {
        // "ID3", a major version of 2 to 4, a revision, flags whose low bits
        // are clear, and a size in four 7-bit bytes: text that starts with
        // "ID3" is not taken for a tag.
        guard head.count >= 10, head[0] == 0x49, head[1] == 0x44, head[2] == 0x33, (2...4).contains(head[3]),
            head[4] != 0xFF, head[5] & 0x0F == 0, head[6] < 0x80, head[7] < 0x80, head[8] < 0x80, head[9] < 0x80
        else { return nil }
        let size = Int(head[6]) << 21 | Int(head[7]) << 14 | Int(head[8]) << 7 | Int(head[9])
        let footer = head[5] & 0x10 != 0 ? 10 : 0
        return 10 + size + footer
    }

    // MARK: - Content and name

    /// Decides between what the content showed and what the name says.
    func decide(_ findings: Findings, nameIndex: Int?, fileName: String?) -> Identification {
        let nameType = nameIndex.map { types[$0] }
        func result(
            _ position: Int, _ basis: Identification.Basis, _ content: Identification.Content, _ contradicts: Bool
        )
            -> Identification
        {
            // Only content that shows a type can give the lie to a name.
            let misleads =
                contradicts && basis == .content
                && nameIndex.map { nameMisleads($0, shown: position, findings) } ?? false
            return Identification(
                type: types[position], basis: basis, content: content, nameType: nameType, fileName: fileName,
                contradictsName: contradicts, nameMisleads: misleads)
        }
        let data = index[.data]!
        if findings.isEmpty {
            return nameIndex.map { result($0, .name, .empty, false) } ?? result(data, .unknown, .empty, false)
        }
        if let primary = findings.primary {
            let content = Identification.Content.recognised(types[primary])
            guard let name = nameIndex else { return result(primary, .content, content, false) }
            // The content is what the name says, or a kind of it (an EPUB named .zip).
            if closure[primary].contains(name) { return result(primary, .content, content, false) }
            // The name says a kind of what the content is (a ZIP of images named .cbz).
            if closure[name].contains(primary), nameFits(name, beyond: closure[primary], findings.matched) {
                return result(name, .contentAndName, content, false)
            }
            return result(primary, .content, content, true)
        }
        if findings.isText {
            let plainText = index[.plainText] ?? index[.text]!
            guard let name = nameIndex else { return result(plainText, .content, .text, false) }
            if nameFits(name, beyond: [], findings.matched) { return result(name, .name, .text, false) }
            return result(plainText, .content, .text, true)
        }
        guard let name = nameIndex else { return result(data, .unknown, .unrecognised, false) }
        if !isText[name], nameFits(name, beyond: [], findings.matched) {
            return result(name, .name, .unrecognised, false)
        }
        return result(data, .unknown, .unrecognised, true)
    }

    /// Whether a name that says the type at `name` lies about content shown
    /// to be the type at `shown`: the content does not show the name's type
    /// too (an MPEG-4 file's compatible brand), neither type is a kind of the
    /// other, and they are not both text (CSV or HTML named `.txt` reads as
    /// text where it is opened as text). Content recognised only by a few
    /// bits that random bytes can match is no evidence against a name.
    private func nameMisleads(_ name: Int, shown: Int, _ findings: Findings) -> Bool {
        if findings.matched[name] != nil { return false }
        if !findings.isText && !findings.conclusive.contains(shown) { return false }
        if closure[shown].contains(name) || closure[name].contains(shown) { return false }
        return !(isText[shown] && isText[name])
    }

    /// Whether content that is (at least) the types in `shown` can be of the
    /// type at `name`: every type on the way from there to it that requires
    /// a signature has one that matched.
    private func nameFits(_ name: Int, beyond shown: Set<Int>, _ matched: [Int: Strength]) -> Bool {
        for position in closure[name] where !shown.contains(position) {
            if requiresSignature[position] && matched[position] == nil { return false }
        }
        return true
    }
}

/// The last component of a path.
func lastComponent(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}
