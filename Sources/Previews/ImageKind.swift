/// The kinds of file whose thumbnails are decoded in the server's process,
/// with image libraries loaded at run time where the machine has them.
public enum ImageKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// JPEG (libturbojpeg), the camera's embedded thumbnail first.
    case jpeg
    /// PNG (libpng16), read row by row.
    case png
    /// WebP (libwebp), decoded at the thumbnail's size.
    case webp
    /// GIF (giflib), its first frame.
    case gif
    /// HEIF and HEIC (libheif), the embedded thumbnail first.
    case heif
    /// A comic book archive (CBZ): its cover, or its first page.
    case cbz
    /// An EPUB book: the cover its package declares.
    case epub

    public var description: String { rawValue }

    /// The kind's name in a sentence ("the WebP declares…").
    public var name: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .webp: "WebP"
        case .gif: "GIF"
        case .heif: "HEIF image"
        case .cbz: "comic"
        case .epub: "book"
        }
    }

    /// The kind for a media type (`image/png`, `application/epub+zip`…), if any.
    public init?(mediaType: String) {
        let type = mediaType.essence
        guard let kind = ImageKind.byMediaType.first(where: { type.elementsEqual($0.type.utf8) })?.kind else {
            return nil
        }
        self = kind
    }

    private static let byMediaType: [(type: String, kind: ImageKind)] = [
        ("image/jpeg", .jpeg), ("image/png", .png), ("image/webp", .webp), ("image/gif", .gif), ("image/heic", .heif),
        ("image/heif", .heif), ("application/vnd.comicbook+zip", .cbz), ("application/epub+zip", .epub),
    ]

    /// The kind of an image inside an archive, from its name's extension.
    init?(fileName: String) {
        let name = fileName.lowercased()
        guard let dot = name.lastIndex(of: ".") else { return nil }
        switch name[name.index(after: dot)...] {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "gif": self = .gif
        case "heic", "heif": self = .heif
        default: return nil
        }
    }

    /// The Debian package whose library decodes this kind.
    public var package: String {
        switch self {
        case .jpeg: "libturbojpeg0"
        case .png: "libpng16-16"
        case .webp: "libwebp7"
        case .gif: "libgif7"
        case .heif: "libheif1"
        case .cbz, .epub: "zlib1g"
        }
    }
}
