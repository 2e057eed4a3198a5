/// Which entry of a comic (CBZ) or a book (EPUB) is its cover: pure
/// choices over the archive's names and small XML files, the reading left
/// to ``ZipArchive``.
enum ArchiveCover {
    /// A comic's pages: its images, less folders' metadata (`__MACOSX/`)
    /// and hidden files, in natural name order ("page2" before "page10").
    static func comicPages(_ names: [String]) -> [String] {
        names.filter { name in
            guard ImageKind(fileName: name) != nil, !name.hasPrefix("__MACOSX/") else { return false }
            return !(name.split(separator: "/").last?.hasPrefix(".") ?? true)
        }.sorted(by: NaturalOrder.precedes)
    }

    /// A comic's cover: the page its ComicInfo.xml marks `Type="FrontCover"`
    /// (`Image` counts pages from 0 in natural order), else the first page.
    static func comicCover(pages: [String], comicInfo: String?) -> String? {
        if let comicInfo {
            for tag in MarkupTags.tags(in: comicInfo) where tag.name == "Page" {
                if tag.attributes["Type"]?.lowercased() == "frontcover",
                    let index = tag.attributes["Image"].flatMap(Int.init),
                    pages.indices.contains(index)
                {
                    return pages[index]
                }
            }
        }
        return pages.first
    }

    /// The package document's path that `META-INF/container.xml` names.
    static func bookPackage(container: String) -> String? {
        MarkupTags.tags(in: container).first { $0.name == "rootfile" }?.attributes["full-path"]
    }

    /// The cover image's path in the archive, as the package document at
    /// `packagePath` declares it: the manifest item with
    /// `properties="cover-image"` (EPUB 3), or the one `<meta name="cover">`
    /// names (EPUB 2).
    static func bookCover(package: String, packagePath: String) -> String? {
        let tags = MarkupTags.tags(in: package)
        let items = tags.filter { $0.name == "item" }
        let declared =
            items.first { ($0.attributes["properties"] ?? "").split(separator: " ").contains("cover-image") }
            ?? tags.first { $0.name == "meta" && $0.attributes["name"] == "cover" }
            .flatMap { meta in items.first { $0.attributes["id"] == meta.attributes["content"] } }
        guard let href = declared?.attributes["href"] else { return nil }
        return resolve(href, from: packagePath)
    }

    /// `href` (relative to the file at `base`, percent-encoded) as a path in the archive.
    static func resolve(_ href: String, from base: String) -> String? {
        var parts = base.split(separator: "/", omittingEmptySubsequences: false).dropLast().map(String.init)
        let path = href.split(separator: "#").first.map(String.init) ?? href
        for part in percentDecoded(path).split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            default: parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }

    private static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "%"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.dropFirst().prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
