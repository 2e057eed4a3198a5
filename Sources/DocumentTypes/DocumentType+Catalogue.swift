extension DocumentType {
    /// The built-in catalogue: the abstract types of Apple's hierarchy
    /// (`public.data`, `public.content`, `public.text`, `public.image`,
    /// `public.audio`, `public.movie`, `public.archive`…) and the common
    /// concrete ones: PDF, EPUB, ZIP, CBZ and CBR, images, audio, video, text,
    /// Markdown and office documents.
    ///
    /// Identifiers are Apple's uniform type identifiers where Apple declares
    /// one (`com.adobe.pdf`, `public.png`, `org.idpf.epub-container`,
    /// `org.openxmlformats.wordprocessingml.document`), and the usual
    /// reverse-DNS names of their makers otherwise (`com.comicbook.cbz`,
    /// `org.matroska.mkv`).
    public static let catalogue: [DocumentType] =
        abstractTypes + textTypes + imageTypes + audioTypes + movieTypes
        + archiveTypes + documentTypes

    private static let abstractTypes: [DocumentType] = [
        DocumentType(identifier: .item, name: "item"),
        DocumentType(identifier: .data, name: "data", conformsTo: [.item]),
        DocumentType(identifier: .content, name: "content", conformsTo: [.item]),
        DocumentType(identifier: .compositeContent, name: "document", conformsTo: [.content]),
        DocumentType(identifier: .text, name: "text", conformsTo: [.data, .content]),
        DocumentType(identifier: .image, name: "image", conformsTo: [.data, .content]),
        DocumentType(identifier: .audiovisualContent, name: "audio or video", conformsTo: [.data, .content]),
        DocumentType(identifier: .audio, name: "audio file", conformsTo: [.audiovisualContent]),
        DocumentType(identifier: .movie, name: "movie", conformsTo: [.audiovisualContent]),
        DocumentType(identifier: .archive, name: "archive", conformsTo: [.data]),
        DocumentType(identifier: "public.spreadsheet", name: "spreadsheet", conformsTo: [.content]),
        DocumentType(identifier: "public.presentation", name: "presentation", conformsTo: [.content]),
    ]

    private static let textTypes: [DocumentType] = [
        DocumentType(
            identifier: .plainText, name: "plain text document", conformsTo: [.text], extensions: ["txt", "text"],
            mimeTypes: ["text/plain"]),
        DocumentType(
            identifier: "net.daringfireball.markdown", name: "Markdown document", conformsTo: [.plainText],
            extensions: ["md", "markdown", "mdown", "mkd", "mkdn"], mimeTypes: ["text/markdown", "text/x-markdown"]),
        DocumentType(
            identifier: "public.delimited-values-text", name: "delimited text document", conformsTo: [.text]),
        DocumentType(
            identifier: "public.comma-separated-values-text", name: "CSV document",
            conformsTo: ["public.delimited-values-text"], extensions: ["csv"],
            mimeTypes: ["text/csv", "text/comma-separated-values"]),
        DocumentType(
            identifier: "public.tab-separated-values-text", name: "TSV document",
            conformsTo: ["public.delimited-values-text"], extensions: ["tsv", "tab"],
            mimeTypes: ["text/tab-separated-values"]),
        DocumentType(
            identifier: "public.json", name: "JSON document", conformsTo: [.text], extensions: ["json"],
            mimeTypes: ["application/json"]),
        DocumentType(
            identifier: "public.xml", name: "XML document", conformsTo: [.text], extensions: ["xml"],
            mimeTypes: ["application/xml", "text/xml"], signatures: [.textPrefix("<?xml", ignoringCase: false)]),
        DocumentType(
            identifier: "public.html", name: "HTML document", conformsTo: [.text], extensions: ["html", "htm"],
            mimeTypes: ["text/html"],
            signatures: [.textPrefix("<!doctype html", ignoringCase: true), .textPrefix("<html", ignoringCase: true)]),
        DocumentType(
            identifier: "public.rtf", name: "RTF document", conformsTo: [.text], extensions: ["rtf"],
            mimeTypes: ["application/rtf", "text/rtf"], signatures: [.textPrefix("{\\rtf", ignoringCase: false)],
            signaturesRequired: true),
    ]

    private static let imageTypes: [DocumentType] = [
        DocumentType(
            identifier: "public.png", name: "PNG image", conformsTo: [.image], extensions: ["png"],
            mimeTypes: ["image/png"], signatures: [.bytes([.init([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])])]),
        DocumentType(
            identifier: "public.jpeg", name: "JPEG image", conformsTo: [.image],
            extensions: ["jpg", "jpeg", "jpe", "jfif"], mimeTypes: ["image/jpeg"],
            signatures: [.bytes([.init([0xFF, 0xD8, 0xFF])])]),
        DocumentType(
            identifier: "com.compuserve.gif", name: "GIF image", conformsTo: [.image], extensions: ["gif"],
            mimeTypes: ["image/gif"],
            signatures: [.bytes([.init(ascii: "GIF87a")]), .bytes([.init(ascii: "GIF89a")])]),
        DocumentType(
            identifier: "org.webmproject.webp", name: "WebP image", conformsTo: [.image], extensions: ["webp"],
            mimeTypes: ["image/webp"], signatures: [.bytes([.init(ascii: "RIFF"), .init(ascii: "WEBP", at: 8)])]),
        DocumentType(
            identifier: "public.heif", name: "HEIF image", conformsTo: [.image], extensions: ["heif", "heifs"],
            mimeTypes: ["image/heif", "image/heif-sequence"], signatures: [.isoBrand(["mif1", "msf1", "mif2"])]),
        DocumentType(
            identifier: "public.heic", name: "HEIC image", conformsTo: ["public.heif"], extensions: ["heic", "heics"],
            mimeTypes: ["image/heic", "image/heic-sequence"],
            signatures: [.isoBrand(["heic", "heix", "heim", "heis", "hevc", "hevx"])]),
        DocumentType(
            identifier: "public.avif", name: "AVIF image", conformsTo: [.image], extensions: ["avif", "avifs"],
            mimeTypes: ["image/avif"], signatures: [.isoBrand(["avif", "avis"])]),
        DocumentType(
            identifier: "public.tiff", name: "TIFF image", conformsTo: [.image], extensions: ["tiff", "tif"],
            mimeTypes: ["image/tiff"],
            signatures: [.bytes([.init([0x49, 0x49, 0x2A, 0x00])]), .bytes([.init([0x4D, 0x4D, 0x00, 0x2A])])]),
        DocumentType(
            identifier: "com.microsoft.bmp", name: "BMP image", conformsTo: [.image], extensions: ["bmp", "dib"],
            mimeTypes: ["image/bmp", "image/x-bmp"],
            signatures: [.bytes([.init(ascii: "BM"), .init([0, 0, 0, 0], at: 6)])]),
        DocumentType(
            identifier: "com.microsoft.ico", name: "Windows icon", conformsTo: [.image], extensions: ["ico"],
            mimeTypes: ["image/vnd.microsoft.icon", "image/x-icon"],
            signatures: [.bytes([.init([0x00, 0x00, 0x01, 0x00]), .init([0x00], at: 5)])]),
        DocumentType(
            identifier: "public.svg-image", name: "SVG image", conformsTo: [.image, "public.xml"],
            extensions: ["svg"], mimeTypes: ["image/svg+xml"], signatures: [.xmlRoot("svg")]),
    ]

    private static let audioTypes: [DocumentType] = [
        // An ID3v2 tag is skipped before the signatures are tried; an MP3 file
        // is also recognised by the tag alone (see `identify`).
        DocumentType(
            identifier: .mp3, name: "MP3 audio file", conformsTo: [.audio], extensions: ["mp3"],
            mimeTypes: ["audio/mpeg", "audio/mp3"],
            // An MPEG audio frame header: 11 sync bits, any version, layer III.
            signatures: [.bytes([.init([0xFF, 0xE2], mask: [0xFF, 0xE6])])]),
        DocumentType(
            identifier: "public.aac-audio", name: "AAC audio file", conformsTo: [.audio], extensions: ["aac", "adts"],
            mimeTypes: ["audio/aac", "audio/x-aac"],
            // An ADTS header: 12 sync bits, layer 0.
            signatures: [.bytes([.init([0xFF, 0xF0], mask: [0xFF, 0xF6])])]),
        DocumentType(
            identifier: "org.xiph.flac", name: "FLAC audio file", conformsTo: [.audio], extensions: ["flac"],
            mimeTypes: ["audio/flac", "audio/x-flac"], signatures: [.bytes([.init(ascii: "fLaC")])]),
        DocumentType(
            identifier: "com.microsoft.waveform-audio", name: "WAVE audio file", conformsTo: [.audio],
            extensions: ["wav", "wave"], mimeTypes: ["audio/wav", "audio/x-wav", "audio/vnd.wave"],
            signatures: [.bytes([.init(ascii: "RIFF"), .init(ascii: "WAVE", at: 8)])]),
        DocumentType(
            identifier: "public.aiff-audio", name: "AIFF audio file", conformsTo: [.audio],
            extensions: ["aiff", "aif", "aifc"], mimeTypes: ["audio/aiff", "audio/x-aiff"],
            signatures: [
                .bytes([.init(ascii: "FORM"), .init(ascii: "AIFF", at: 8)]),
                .bytes([.init(ascii: "FORM"), .init(ascii: "AIFC", at: 8)]),
            ]),
        DocumentType(
            identifier: "public.midi-audio", name: "MIDI file", conformsTo: [.audio], extensions: ["mid", "midi"],
            mimeTypes: ["audio/midi", "audio/x-midi"], signatures: [.bytes([.init(ascii: "MThd")])]),
        DocumentType(
            identifier: "public.mpeg-4-audio", name: "MPEG-4 audio file", conformsTo: ["public.mpeg-4", .audio],
            extensions: ["m4a", "m4b"], mimeTypes: ["audio/mp4", "audio/x-m4a", "audio/m4a"],
            signatures: [.isoBrand(["M4A ", "M4B ", "M4P "])], signaturesRequired: false),
        DocumentType(
            identifier: "org.xiph.ogg", name: "Ogg file", conformsTo: [.audiovisualContent], extensions: ["ogx"],
            mimeTypes: ["application/ogg"], signatures: [.bytes([.init(ascii: "OggS")])]),
        // The first page of an Ogg stream has one segment: its packet starts at 28.
        DocumentType(
            identifier: "org.xiph.ogg-audio", name: "Ogg audio file", conformsTo: ["org.xiph.ogg", .audio],
            extensions: ["ogg", "oga", "opus", "spx"], mimeTypes: ["audio/ogg", "audio/opus"],
            signatures: [
                .bytes([.init(ascii: "OggS"), .init([0x01] + Array("vorbis".utf8), at: 28)]),
                .bytes([.init(ascii: "OggS"), .init(ascii: "OpusHead", at: 28)]),
                .bytes([.init(ascii: "OggS"), .init([0x7F] + Array("FLAC".utf8), at: 28)]),
                .bytes([.init(ascii: "OggS"), .init(ascii: "Speex   ", at: 28)]),
            ]),
    ]

    private static let movieTypes: [DocumentType] = [
        DocumentType(
            identifier: "public.mpeg-4", name: "MPEG-4 movie", conformsTo: [.movie], extensions: ["mp4", "mpg4"],
            mimeTypes: ["video/mp4"],
            signatures: [
                .isoBrand([
                    "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "mmp4", "F4V ",
                ])
            ]),
        DocumentType(
            identifier: "com.apple.m4v-video", name: "M4V video", conformsTo: ["public.mpeg-4"], extensions: ["m4v"],
            mimeTypes: ["video/x-m4v"], signatures: [.isoBrand(["M4V ", "M4VH", "M4VP"])], signaturesRequired: false),
        DocumentType(
            identifier: "com.apple.quicktime-movie", name: "QuickTime movie", conformsTo: [.movie],
            extensions: ["mov", "qt"], mimeTypes: ["video/quicktime"],
            // Old QuickTime files have no `ftyp` box and start with another atom.
            signatures: [
                .isoBrand(["qt  "]), .bytes([.init(ascii: "moov", at: 4)]), .bytes([.init(ascii: "wide", at: 4)]),
            ]),
        DocumentType(
            identifier: "public.3gpp", name: "3GPP movie", conformsTo: [.movie], extensions: ["3gp", "3gpp"],
            mimeTypes: ["video/3gpp", "audio/3gpp"],
            signatures: [.isoBrand(["3gp4", "3gp5", "3gp6", "3gp7", "3gs7", "3ge6", "3ge7", "3gg6"])]),
        DocumentType(
            identifier: "public.avi", name: "AVI movie", conformsTo: [.movie], extensions: ["avi"],
            mimeTypes: ["video/x-msvideo", "video/avi", "video/msvideo"],
            signatures: [.bytes([.init(ascii: "RIFF"), .init(ascii: "AVI ", at: 8)])]),
        // Matroska and WebM share the EBML header; its DocType element tells them apart.
        DocumentType(
            identifier: "org.webmproject.webm", name: "WebM video", conformsTo: [.movie], extensions: ["webm"],
            mimeTypes: ["video/webm", "audio/webm"],
            signatures: [
                .bytes([
                    .init([0x1A, 0x45, 0xDF, 0xA3]), .init([0x42, 0x82], at: 4, window: 60),
                    .init(ascii: "webm", at: 4, window: 60),
                ])
            ]),
        DocumentType(
            identifier: "org.matroska.mkv", name: "Matroska video", conformsTo: [.movie],
            extensions: ["mkv", "mka", "mk3d"],
            mimeTypes: ["video/x-matroska", "audio/x-matroska"],
            signatures: [
                .bytes([
                    .init([0x1A, 0x45, 0xDF, 0xA3]), .init([0x42, 0x82], at: 4, window: 60),
                    .init(ascii: "matroska", at: 4, window: 60),
                ])
            ]),
        DocumentType(
            identifier: "public.mpeg", name: "MPEG movie", conformsTo: [.movie],
            extensions: ["mpg", "mpeg", "mpe", "m1v"],
            mimeTypes: ["video/mpeg"],
            signatures: [.bytes([.init([0x00, 0x00, 0x01, 0xBA])]), .bytes([.init([0x00, 0x00, 0x01, 0xB3])])]),
        DocumentType(
            identifier: "org.xiph.ogv", name: "Ogg video", conformsTo: ["org.xiph.ogg", .movie], extensions: ["ogv"],
            mimeTypes: ["video/ogg"],
            signatures: [.bytes([.init(ascii: "OggS"), .init([0x80] + Array("theora".utf8), at: 28)])]),
    ]

    private static let rarSignatures: [ContentSignature] = [
        .bytes([.init(Array("Rar!".utf8) + [0x1A, 0x07, 0x00])]),
        .bytes([.init(Array("Rar!".utf8) + [0x1A, 0x07, 0x01, 0x00])]),
    ]

    private static let archiveTypes: [DocumentType] = [
        DocumentType(
            identifier: .zipArchive, name: "ZIP archive", conformsTo: [.archive], extensions: ["zip"],
            mimeTypes: ["application/zip", "application/x-zip-compressed"],
            // A local file header, or the end record of an empty archive.
            signatures: [.bytes([.init([0x50, 0x4B, 0x03, 0x04])]), .bytes([.init([0x50, 0x4B, 0x05, 0x06])])]),
        DocumentType(
            identifier: "com.comicbook.cbz", name: "CBZ comic book", conformsTo: [.zipArchive, .content],
            extensions: ["cbz"], mimeTypes: ["application/vnd.comicbook+zip", "application/x-cbz"],
            signatures: [.zip(.init(entryType: .image, ignoredNames: ["ComicInfo.xml", "Thumbs.db"]))],
            requiresMatchingName: true),
        DocumentType(
            identifier: "com.rarlab.rar-archive", name: "RAR archive", conformsTo: [.archive], extensions: ["rar"],
            mimeTypes: ["application/vnd.rar", "application/x-rar-compressed"], signatures: rarSignatures),
        DocumentType(
            identifier: "com.comicbook.cbr", name: "CBR comic book", conformsTo: ["com.rarlab.rar-archive", .content],
            extensions: ["cbr"], mimeTypes: ["application/vnd.comicbook-rar", "application/x-cbr"],
            signatures: rarSignatures, requiresMatchingName: true),
        DocumentType(
            identifier: "org.7-zip.7-zip-archive", name: "7-Zip archive", conformsTo: [.archive], extensions: ["7z"],
            mimeTypes: ["application/x-7z-compressed"],
            signatures: [.bytes([.init([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C])])]),
        DocumentType(
            identifier: "org.gnu.gnu-zip-archive", name: "gzip archive", conformsTo: [.archive],
            extensions: ["gz", "gzip"], mimeTypes: ["application/gzip", "application/x-gzip"],
            signatures: [.bytes([.init([0x1F, 0x8B, 0x08])])]),
        DocumentType(
            identifier: "org.gnu.gnu-zip-tar-archive", name: "gzipped tar archive",
            conformsTo: ["org.gnu.gnu-zip-archive"], extensions: ["tar.gz", "tgz"],
            mimeTypes: ["application/x-compressed-tar"]),
        DocumentType(
            identifier: "public.bzip2-archive", name: "bzip2 archive", conformsTo: [.archive],
            extensions: ["bz2", "bzip2"], mimeTypes: ["application/x-bzip2"],
            // A first block, or the end of the stream for an empty one.
            signatures: [
                .bytes([.init(ascii: "BZh"), .init([0x31, 0x41, 0x59, 0x26, 0x53, 0x59], at: 4)]),
                .bytes([.init(ascii: "BZh"), .init([0x17, 0x72, 0x45, 0x38, 0x50, 0x90], at: 4)]),
            ]),
        DocumentType(
            identifier: "org.tukaani.xz-archive", name: "XZ archive", conformsTo: [.archive], extensions: ["xz"],
            mimeTypes: ["application/x-xz"], signatures: [.bytes([.init([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00])])]),
        DocumentType(
            identifier: "public.tar-archive", name: "tar archive", conformsTo: [.archive], extensions: ["tar"],
            mimeTypes: ["application/x-tar"], signatures: [.bytes([.init(ascii: "ustar", at: 257)])]),
    ]

    private static let documentTypes: [DocumentType] = [
        DocumentType(
            identifier: "com.adobe.pdf", name: "PDF document", conformsTo: [.data, .compositeContent],
            extensions: ["pdf"], mimeTypes: ["application/pdf"],
            // Readers accept up to 1,024 bytes before the header.
            signatures: [.bytes([.init(ascii: "%PDF-", window: 1024)])]),
        DocumentType(
            identifier: "org.idpf.epub-container", name: "EPUB book", conformsTo: [.zipArchive, .compositeContent],
            extensions: ["epub"], mimeTypes: ["application/epub+zip"],
            signatures: [
                .zip(.init(mimetype: "application/epub+zip")),
                .zip(.init(requiredEntries: ["mimetype", "META-INF/container.xml"])),
            ]),
        DocumentType(
            identifier: "org.openxmlformats.openxml", name: "Office Open XML document",
            conformsTo: [.zipArchive, .compositeContent],
            signatures: [.zip(.init(requiredEntries: ["[Content_Types].xml"]))]),
        DocumentType(
            identifier: "org.openxmlformats.wordprocessingml.document", name: "Word document",
            conformsTo: ["org.openxmlformats.openxml"], extensions: ["docx"],
            mimeTypes: ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
            signatures: [.zip(.init(requiredEntries: ["[Content_Types].xml", "word/"]))]),
        DocumentType(
            identifier: "org.openxmlformats.spreadsheetml.sheet", name: "Excel spreadsheet",
            conformsTo: ["org.openxmlformats.openxml", "public.spreadsheet"], extensions: ["xlsx"],
            mimeTypes: ["application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
            signatures: [.zip(.init(requiredEntries: ["[Content_Types].xml", "xl/"]))]),
        DocumentType(
            identifier: "org.openxmlformats.presentationml.presentation", name: "PowerPoint presentation",
            conformsTo: ["org.openxmlformats.openxml", "public.presentation"], extensions: ["pptx"],
            mimeTypes: ["application/vnd.openxmlformats-officedocument.presentationml.presentation"],
            signatures: [.zip(.init(requiredEntries: ["[Content_Types].xml", "ppt/"]))]),
        DocumentType(
            identifier: "org.oasis-open.opendocument", name: "OpenDocument file",
            conformsTo: [.zipArchive, .compositeContent]),
        DocumentType(
            identifier: "org.oasis-open.opendocument.text", name: "OpenDocument text document",
            conformsTo: ["org.oasis-open.opendocument"], extensions: ["odt"],
            mimeTypes: ["application/vnd.oasis.opendocument.text"],
            signatures: [.zip(.init(mimetype: "application/vnd.oasis.opendocument.text"))]),
        DocumentType(
            identifier: "org.oasis-open.opendocument.spreadsheet", name: "OpenDocument spreadsheet",
            conformsTo: ["org.oasis-open.opendocument", "public.spreadsheet"], extensions: ["ods"],
            mimeTypes: ["application/vnd.oasis.opendocument.spreadsheet"],
            signatures: [.zip(.init(mimetype: "application/vnd.oasis.opendocument.spreadsheet"))]),
        DocumentType(
            identifier: "org.oasis-open.opendocument.presentation", name: "OpenDocument presentation",
            conformsTo: ["org.oasis-open.opendocument", "public.presentation"], extensions: ["odp"],
            mimeTypes: ["application/vnd.oasis.opendocument.presentation"],
            signatures: [.zip(.init(mimetype: "application/vnd.oasis.opendocument.presentation"))]),
        // Office 97–2004 files are OLE compound files; which application made
        // one is taken from its name.
        DocumentType(
            identifier: "com.microsoft.ole.compound-file", name: "OLE compound file", conformsTo: [.data],
            mimeTypes: ["application/x-ole-storage"],
            signatures: [.bytes([.init([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1])])]),
        DocumentType(
            identifier: "com.microsoft.word.doc", name: "Word 97–2004 document",
            conformsTo: ["com.microsoft.ole.compound-file", .compositeContent], extensions: ["doc"],
            mimeTypes: ["application/msword"]),
        DocumentType(
            identifier: "com.microsoft.excel.xls", name: "Excel 97–2004 spreadsheet",
            conformsTo: ["com.microsoft.ole.compound-file", "public.spreadsheet"], extensions: ["xls"],
            mimeTypes: ["application/vnd.ms-excel"]),
        DocumentType(
            identifier: "com.microsoft.powerpoint.ppt", name: "PowerPoint 97–2004 presentation",
            conformsTo: ["com.microsoft.ole.compound-file", "public.presentation"], extensions: ["ppt"],
            mimeTypes: ["application/vnd.ms-powerpoint"]),
    ]
}
