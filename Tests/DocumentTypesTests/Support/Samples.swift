import DocumentTypes
import Testing

/// A real sample file of one catalogue type, made byte by byte: what it is
/// named, and how identification should tell its type.
struct Sample: Sendable, CustomTestStringConvertible {
    var identifier: TypeIdentifier
    var fileName: String
    var bytes: [UInt8]
    /// How identification tells the type with the right name.
    var basis: Identification.Basis

    var testDescription: String { "\(identifier) (\(fileName))" }

    /// Whether content alone tells the type, whatever the name.
    var isToldByContent: Bool { basis == .content }
}

enum Samples {
    /// One sample for every catalogue type that has extensions or signatures.
    static let all: [Sample] = text + images + audio + movies + archives + documents

    static func sample(_ identifier: TypeIdentifier) -> Sample {
        guard let found = all.first(where: { $0.identifier == identifier }) else {
            fatalError("no sample of \(identifier)")
        }
        return found
    }

    // MARK: Text

    static let text: [Sample] = [
        Sample(
            identifier: "public.plain-text", fileName: "notes.txt",
            bytes: Array("Shopping list\n- bread\n- 2 apples\n- café au lait\n".utf8), basis: .name),
        Sample(
            identifier: "net.daringfireball.markdown", fileName: "README.md",
            bytes: Array("# fileshare\n\nShares a *folder*.\n\n- [x] uploads\n".utf8), basis: .name),
        Sample(
            identifier: "public.comma-separated-values-text", fileName: "sizes.csv",
            bytes: Array("name,size\n\"a, b\",12\nc,3\n".utf8), basis: .name),
        Sample(
            identifier: "public.tab-separated-values-text", fileName: "sizes.tsv",
            bytes: Array("name\tsize\na\t12\n".utf8), basis: .name),
        Sample(
            identifier: "public.json", fileName: "data.json",
            bytes: Array("{\"name\": \"a\", \"size\": [1, 2]}\n".utf8),
            basis: .name),
        Sample(
            identifier: "public.xml", fileName: "feed.xml",
            bytes: Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\"><channel/></rss>\n".utf8),
            basis: .content),
        Sample(
            identifier: "public.html", fileName: "index.html",
            bytes: Array(
                "\n<!DOCTYPE html>\n<html lang=\"en\"><head><title>Hi</title></head><body></body></html>\n".utf8),
            basis: .content),
        Sample(
            identifier: "public.rtf", fileName: "letter.rtf",
            bytes: Array("{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}}\\f0 Hello.\\par}\n".utf8), basis: .content),
        Sample(
            identifier: "public.svg-image", fileName: "logo.svg",
            bytes: Array(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!-- Made by hand -->
                <!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
                <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>

                """.utf8), basis: .content),
    ]

    // MARK: Images

    static let images: [Sample] = [
        Sample(identifier: "public.png", fileName: "pixel.png", bytes: pngImage(), basis: .content),
        Sample(identifier: "public.jpeg", fileName: "photo.jpg", bytes: jpegImage(), basis: .content),
        Sample(
            identifier: "com.compuserve.gif", fileName: "dot.gif",
            bytes: Array("GIF89a".utf8) + [
                0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x21, 0xF9, 0x04, 0x01,
                0x00, 0x00, 0x00, 0x00, 0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44,
                0x01, 0x00, 0x3B,
            ], basis: .content),
        Sample(
            identifier: "org.webmproject.webp", fileName: "pixel.webp",
            bytes: Bytes { out in
                let chunk: [UInt8] = [0x2F, 0x00, 0x00, 0x00, 0x00, 0x88, 0x88, 0x08, 0x00]
                out.add("RIFF")
                out.le32(4 + 8 + chunk.count + 1)
                out.add("WEBPVP8L")
                out.le32(chunk.count)
                out.add(chunk)
                out.zeros(1)
            }.bytes, basis: .content),
        Sample(
            identifier: "public.heic", fileName: "IMG_0001.heic", bytes: isoMedia("heic", ["mif1", "heic"]),
            basis: .content),
        Sample(identifier: "public.heif", fileName: "picture.heif", bytes: isoMedia("mif1", ["mif1"]), basis: .content),
        Sample(
            identifier: "public.avif", fileName: "picture.avif", bytes: isoMedia("avif", ["avif", "mif1", "miaf"]),
            basis: .content),
        Sample(
            identifier: "public.tiff", fileName: "scan.tiff",
            bytes: Bytes { out in
                out.add([0x49, 0x49, 0x2A, 0x00])
                out.le32(8)
                out.le16(0)
                out.le32(0)
            }.bytes, basis: .content),
        Sample(identifier: "com.microsoft.bmp", fileName: "pixel.bmp", bytes: bmpImage(), basis: .content),
        Sample(
            identifier: "com.microsoft.ico", fileName: "favicon.ico",
            bytes: Bytes { out in
                let png = pngImage()
                out.add([0x00, 0x00, 0x01, 0x00, 0x01, 0x00])
                out.add([1, 1, 0, 0])
                out.le16(1)
                out.le16(32)
                out.le32(png.count)
                out.le32(22)
                out.add(png)
            }.bytes, basis: .content),
    ]

    // MARK: Audio

    static let audio: [Sample] = [
        Sample(
            identifier: "public.mp3", fileName: "song.mp3", bytes: id3Tag(padding: 0) + mp3Frames(), basis: .content),
        Sample(
            identifier: "public.aac-audio", fileName: "voice.aac",
            bytes: [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC] + [UInt8](repeating: 0, count: 9), basis: .content),
        Sample(identifier: "org.xiph.flac", fileName: "track.flac", bytes: flacAudio(), basis: .content),
        Sample(
            identifier: "com.microsoft.waveform-audio", fileName: "beep.wav",
            bytes: Bytes { out in
                out.add("RIFF")
                out.le32(36 + 16)
                out.add("WAVEfmt ")
                out.le32(16)
                out.le16(1)
                out.le16(1)
                out.le32(8000)
                out.le32(16000)
                out.le16(2)
                out.le16(16)
                out.add("data")
                out.le32(16)
                out.zeros(16)
            }.bytes, basis: .content),
        Sample(
            identifier: "public.aiff-audio", fileName: "beep.aiff",
            bytes: Bytes { out in
                out.add("FORM")
                out.be32(4 + 26 + 16)
                out.add("AIFFCOMM")
                out.be32(18)
                out.be16(1)
                out.be32(0)
                out.be16(16)
                out.add([0x40, 0x0B, 0xFA, 0, 0, 0, 0, 0, 0, 0])
                out.add("SSND")
                out.be32(8)
                out.be32(0)
                out.be32(0)
            }.bytes, basis: .content),
        Sample(
            identifier: "public.midi-audio", fileName: "tune.mid",
            bytes: Bytes { out in
                out.add("MThd")
                out.be32(6)
                out.be16(0)
                out.be16(1)
                out.be16(96)
                out.add("MTrk")
                out.be32(4)
                out.add([0x00, 0xFF, 0x2F, 0x00])
            }.bytes, basis: .content),
        Sample(
            identifier: "public.mpeg-4-audio", fileName: "song.m4a", bytes: isoMedia("M4A ", ["M4A ", "mp42", "isom"]),
            basis: .content),
        Sample(
            identifier: "org.xiph.ogg-audio", fileName: "song.ogg",
            bytes: oggPage(
                [0x01] + Array("vorbis".utf8) + [0, 0, 0, 0, 2, 0x44, 0xAC, 0, 0] + [UInt8](repeating: 0, count: 14)),
            basis: .content),
        Sample(
            identifier: "org.xiph.ogg", fileName: "stream.ogx",
            bytes: oggPage(Array("fishead\0".utf8) + [UInt8](repeating: 0, count: 56)), basis: .content),
    ]

    // MARK: Movies

    static let movies: [Sample] = [
        Sample(
            identifier: "public.mpeg-4", fileName: "clip.mp4",
            bytes: isoMedia("isom", ["isom", "iso2", "avc1", "mp41"]),
            basis: .content),
        Sample(
            identifier: "com.apple.m4v-video", fileName: "episode.m4v",
            bytes: isoMedia("M4V ", ["M4V ", "M4A ", "mp42", "isom"]), basis: .content),
        Sample(
            identifier: "com.apple.quicktime-movie", fileName: "clip.mov", bytes: isoMedia("qt  ", ["qt  "]),
            basis: .content),
        Sample(
            identifier: "public.3gpp", fileName: "clip.3gp", bytes: isoMedia("3gp4", ["isom", "3gp4"]), basis: .content),
        Sample(
            identifier: "public.avi", fileName: "clip.avi",
            bytes: Bytes { out in
                out.add("RIFF")
                out.le32(4 + 12 + 4)
                out.add("AVI LIST")
                out.le32(4)
                out.add("hdrl")
                out.add("JUNK")
            }.bytes, basis: .content),
        Sample(
            identifier: "org.webmproject.webm", fileName: "clip.webm", bytes: ebml(docType: "webm"), basis: .content),
        Sample(identifier: "org.matroska.mkv", fileName: "film.mkv", bytes: ebml(docType: "matroska"), basis: .content),
        Sample(
            identifier: "public.mpeg", fileName: "clip.mpg",
            bytes: [
                0x00, 0x00, 0x01, 0xBA, 0x44, 0x00, 0x04, 0x00, 0x04, 0x01, 0x01, 0x89, 0xC3, 0xF8, 0x00, 0x00, 0x01,
                0xB9,
            ],
            basis: .content),
        Sample(
            identifier: "org.xiph.ogv", fileName: "clip.ogv",
            bytes: oggPage([0x80] + Array("theora".utf8) + [3, 2, 1] + [UInt8](repeating: 0, count: 32)),
            basis: .content),
    ]

    // MARK: Archives

    static let comicPages: [(name: String, content: [UInt8])] = [
        ("Issue 1/", []),
        ("Issue 1/page001.jpg", jpegImage(padding: 64)),
        ("Issue 1/page002.png", pngImage()),
        ("ComicInfo.xml", Array("<?xml version=\"1.0\"?><ComicInfo><Title>One</Title></ComicInfo>".utf8)),
    ]

    static let archives: [Sample] = [
        Sample(
            identifier: "public.zip-archive", fileName: "files.zip",
            bytes: zipArchive(texts: [("a.txt", "first\n"), ("docs/", ""), ("docs/b.md", "# second\n")]),
            basis: .content),
        Sample(
            identifier: "com.comicbook.cbz", fileName: "Issue 1.cbz", bytes: zipArchive(comicPages),
            basis: .contentAndName),
        Sample(identifier: "com.rarlab.rar-archive", fileName: "files.rar", bytes: rar4(), basis: .content),
        Sample(identifier: "com.comicbook.cbr", fileName: "Issue 2.cbr", bytes: rar5(), basis: .contentAndName),
        Sample(
            identifier: "org.7-zip.7-zip-archive", fileName: "files.7z",
            bytes: [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0x00, 0x04] + [UInt8](repeating: 0, count: 24), basis: .content),
        Sample(
            identifier: "org.gnu.gnu-zip-archive", fileName: "notes.txt.gz", bytes: gzip(Array("Hello, gzip.\n".utf8)),
            basis: .content),
        Sample(
            identifier: "org.gnu.gnu-zip-tar-archive", fileName: "backup.tar.gz",
            bytes: gzip(tar([("hello.txt", Array("Hello\n".utf8))])), basis: .contentAndName),
        Sample(
            identifier: "public.bzip2-archive", fileName: "notes.bz2",
            bytes: Array("BZh9".utf8) + [0x31, 0x41, 0x59, 0x26, 0x53, 0x59] + [UInt8](repeating: 0x5A, count: 20),
            basis: .content),
        Sample(
            identifier: "org.tukaani.xz-archive", fileName: "notes.xz",
            bytes: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00, 0x04, 0xE6, 0xD6, 0xB4, 0x46]
                + [UInt8](repeating: 0, count: 20),
            basis: .content),
        Sample(
            identifier: "public.tar-archive", fileName: "files.tar",
            bytes: tar([("hello.txt", Array("Hello\n".utf8)), ("empty.txt", [])]), basis: .content),
    ]

    // MARK: Documents

    static let documents: [Sample] = [
        Sample(identifier: "com.adobe.pdf", fileName: "Report.pdf", bytes: pdfDocument(), basis: .content),
        Sample(identifier: "org.idpf.epub-container", fileName: "book.epub", bytes: epub(), basis: .content),
        Sample(
            identifier: "org.openxmlformats.wordprocessingml.document", fileName: "letter.docx",
            bytes: officeOpenXML(["word/document.xml": "<w:document/>"]), basis: .content),
        Sample(
            identifier: "org.openxmlformats.spreadsheetml.sheet", fileName: "budget.xlsx",
            bytes: officeOpenXML(["xl/workbook.xml": "<workbook/>", "xl/worksheets/sheet1.xml": "<worksheet/>"]),
            basis: .content),
        Sample(
            identifier: "org.openxmlformats.presentationml.presentation", fileName: "talk.pptx",
            bytes: officeOpenXML(["ppt/presentation.xml": "<p:presentation/>", "ppt/slides/slide1.xml": "<p:sld/>"]),
            basis: .content),
        Sample(
            identifier: "org.openxmlformats.openxml", fileName: "drawing.vsdx",
            bytes: officeOpenXML(["visio/document.xml": "<VisioDocument/>"]), basis: .content),
        Sample(
            identifier: "org.oasis-open.opendocument.text", fileName: "letter.odt",
            bytes: openDocument("application/vnd.oasis.opendocument.text"), basis: .content),
        Sample(
            identifier: "org.oasis-open.opendocument.spreadsheet", fileName: "budget.ods",
            bytes: openDocument("application/vnd.oasis.opendocument.spreadsheet"), basis: .content),
        Sample(
            identifier: "org.oasis-open.opendocument.presentation", fileName: "talk.odp",
            bytes: openDocument("application/vnd.oasis.opendocument.presentation"), basis: .content),
        Sample(
            identifier: "com.microsoft.ole.compound-file", fileName: "message.msg",
            bytes: compoundFile(stream: "__substg1.0_0037001F"),
            basis: .content),
        Sample(
            identifier: "com.microsoft.word.doc", fileName: "letter.doc", bytes: compoundFile(stream: "WordDocument"),
            basis: .contentAndName),
        Sample(
            identifier: "com.microsoft.excel.xls", fileName: "budget.xls", bytes: compoundFile(stream: "Workbook"),
            basis: .contentAndName),
        Sample(
            identifier: "com.microsoft.powerpoint.ppt", fileName: "talk.ppt",
            bytes: compoundFile(stream: "PowerPoint Document"),
            basis: .contentAndName),
    ]
}

// MARK: - Builders

/// An ISO base media file: an `ftyp` box with the brands, a `free` box and an empty `mdat`.
func isoMedia(_ major: String, _ compatible: [String]) -> [UInt8] {
    Bytes { out in
        out.be32(16 + 4 * compatible.count)
        out.add("ftyp")
        out.add(major)
        out.be32(0x200)
        for brand in compatible { out.add(brand) }
        out.be32(8)
        out.add("free")
        out.be32(8)
        out.add("mdat")
    }.bytes
}

/// A 1×1 24-bit BMP image.
func bmpImage() -> [UInt8] {
    Bytes { out in
        out.add("BM")
        out.le32(58)
        out.le32(0)
        out.le32(54)
        out.le32(40)
        out.le32(1)
        out.le32(1)
        out.le16(1)
        out.le16(24)
        out.le32(0)
        out.le32(4)
        out.le32(2835)
        out.le32(2835)
        out.le32(0)
        out.le32(0)
        out.add([0x00, 0x00, 0xFF, 0x00])
    }.bytes
}

/// An ID3v2.4 tag with a title frame, and `padding` zero bytes of padding.
func id3Tag(padding: Int) -> [UInt8] {
    let title = [0x03] + Array("A song".utf8)
    let frame = Bytes { out in
        out.add("TIT2")
        out.add(syncsafe(title.count))
        out.le16(0)
        out.add(title)
    }.bytes
    return Bytes { out in
        out.add("ID3")
        out.add([0x04, 0x00, 0x00])
        out.add(syncsafe(frame.count + padding))
        out.add(frame)
        out.zeros(padding)
    }.bytes
}

private func syncsafe(_ value: Int) -> [UInt8] {
    [UInt8(value >> 21 & 0x7F), UInt8(value >> 14 & 0x7F), UInt8(value >> 7 & 0x7F), UInt8(value & 0x7F)]
}

/// Two MPEG-1 layer III frames (128 kbit/s, 44.1 kHz): headers and silence.
func mp3Frames() -> [UInt8] {
    var out: [UInt8] = []
    for _ in 0..<2 { out += [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 413) }
    return out
}

/// A FLAC stream: the marker and a STREAMINFO block (44.1 kHz, stereo, 16 bits).
func flacAudio() -> [UInt8] {
    Bytes { out in
        out.add("fLaC")
        out.add([0x80, 0x00, 0x00, 0x22])
        out.be16(4096)
        out.be16(4096)
        out.zeros(6)
        out.add([0x0A, 0xC4, 0x42, 0xF0, 0x00, 0x00, 0x00, 0x00])
        out.zeros(16)
    }.bytes
}

/// The first page of an Ogg stream, holding one packet.
func oggPage(_ packet: [UInt8]) -> [UInt8] {
    Bytes { out in
        out.add("OggS")
        out.add([0x00, 0x02])
        out.le64(0)
        out.le32(0x1234_5678)
        out.le32(0)
        out.le32(0)
        out.add([0x01, UInt8(packet.count)])
        out.add(packet)
    }.bytes
}

/// An EBML header with the DocType, then the start of a Segment.
func ebml(docType: String) -> [UInt8] {
    let body = Bytes { out in
        out.add([0x42, 0x86, 0x81, 0x01, 0x42, 0xF7, 0x81, 0x01, 0x42, 0xF2, 0x81, 0x04, 0x42, 0xF3, 0x81, 0x08])
        out.add([0x42, 0x82, 0x80 | UInt8(docType.utf8.count)])
        out.add(docType)
        out.add([0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02])
    }.bytes
    return [0x1A, 0x45, 0xDF, 0xA3, 0x80 | UInt8(body.count)] + body
        + [0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
}

/// A RAR 4 archive's marker block and archive header.
func rar4() -> [UInt8] {
    Array("Rar!".utf8) + [
        0x1A, 0x07, 0x00, 0xCF, 0x90, 0x73, 0x00, 0x00, 0x0D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]
}

/// A RAR 5 archive's signature and main header.
func rar5() -> [UInt8] {
    Array("Rar!".utf8) + [
        0x1A, 0x07, 0x01, 0x00, 0x33, 0x92, 0xB5, 0xE5, 0x0A, 0x01, 0x05, 0x06, 0x00, 0x05, 0x01, 0x01, 0x80, 0x80,
        0x00,
    ]
}

/// A small PDF 1.4 document with one empty page, its cross-reference table
/// at the right offsets.
func pdfDocument(junkBefore: String = "") -> [UInt8] {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ]
    var text = junkBefore + "%PDF-1.4\n%\u{E2}\u{E3}\u{CF}\u{D3}\n"
    var offsets: [Int] = []
    for (index, object) in objects.enumerated() {
        offsets.append(text.utf8.count - junkBefore.utf8.count)
        text += "\(index + 1) 0 obj\n\(object)\nendobj\n"
    }
    let xref = text.utf8.count - junkBefore.utf8.count
    text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
    for offset in offsets {
        let digits = String(offset)
        text += String(repeating: "0", count: 10 - digits.count) + digits + " 00000 n \n"
    }
    text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
    return Array(text.utf8)
}

/// An EPUB 3 book: the stored `mimetype` entry first, then the container and the package.
func epub(style: ZipStyle = .classic) -> [UInt8] {
    zipArchive(
        texts: [
            ("mimetype", "application/epub+zip"),
            ("META-INF/", ""),
            (
                "META-INF/container.xml",
                """
                <?xml version="1.0"?>
                <container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
                <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
                </container>
                """
            ),
            ("OEBPS/content.opf", "<?xml version=\"1.0\"?><package version=\"3.0\"/>"),
            ("OEBPS/chapter1.xhtml", "<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>Once.</p></body></html>"),
        ], style: style)
}

/// An Office Open XML package with the content types, the relationships and `parts`.
func officeOpenXML(_ parts: [String: String], style: ZipStyle = .classic) -> [UInt8] {
    let contentTypes = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">\
        <Default Extension="xml" ContentType="application/xml"/></Types>
        """
    let relationships = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"/>
        """
    return zipArchive(
        texts: [("[Content_Types].xml", contentTypes), ("_rels/.rels", relationships)]
            + parts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, style: style)
}

/// An OpenDocument file: the stored `mimetype` entry first, then the manifest and the content.
func openDocument(_ mimetype: String, style: ZipStyle = .classic) -> [UInt8] {
    zipArchive(
        texts: [
            ("mimetype", mimetype),
            ("META-INF/manifest.xml", "<?xml version=\"1.0\"?><manifest:manifest/>"),
            ("content.xml", "<?xml version=\"1.0\"?><office:document-content/>"),
        ], style: style)
}

/// An OLE compound file (version 3, 512-byte sectors): the header, one FAT
/// sector and one directory sector with the root and one stream.
func compoundFile(stream: String) -> [UInt8] {
    var header = Bytes { out in
        out.add([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1])
        out.zeros(16)
        out.le16(0x3E)
        out.le16(3)
        out.le16(0xFFFE)
        out.le16(9)
        out.le16(6)
        out.zeros(6)
        out.le32(0)
        out.le32(1)
        out.le32(1)
        out.le32(0)
        out.le32(0x1000)
        out.le32(0xFFFF_FFFE)
        out.le32(0)
        out.le32(0xFFFF_FFFE)
        out.le32(0)
        out.le32(0)
    }
    while header.bytes.count < 512 { header.le32(0xFFFF_FFFF) }
    var fat = Bytes { out in
        out.le32(0xFFFF_FFFD)
        out.le32(0xFFFF_FFFE)
    }
    while fat.bytes.count < 512 { fat.le32(0xFFFF_FFFF) }
    func entry(_ name: String, type: UInt8, child: Int) -> [UInt8] {
        var out = Bytes()
        let units = Array(name.utf16)
        for unit in units { out.le16(Int(unit)) }
        out.zeros(64 - units.count * 2)
        out.le16((units.count + 1) * 2)
        out.add([type, 1])
        out.le32(0xFFFF_FFFF)
        out.le32(0xFFFF_FFFF)
        out.le32(child)
        out.zeros(16 + 4 + 16)
        out.le32(0xFFFF_FFFE)
        out.le64(0)
        return out.bytes
    }
    var directory = Bytes()
    directory.add(entry("Root Entry", type: 5, child: 1))
    directory.add(entry(stream, type: 2, child: 0xFFFF_FFFF))
    while directory.bytes.count < 512 { directory.add(entry("", type: 0, child: 0xFFFF_FFFF)) }
    return header.bytes + fat.bytes + directory.bytes
}
