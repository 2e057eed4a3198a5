/// The kinds of file whose thumbnails are made by a program the machine
/// may or may not have.
public enum ThumbnailKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The first page of a PDF (`pdftoppm`, from poppler-utils).
    case pdf
    /// A frame a little way into a video (`ffmpeg`).
    case video
    /// The cover art embedded in an audio file (`ffmpeg`).
    case audio

    public var description: String { rawValue }

    /// The kind for a media type (`application/pdf`, `video/mp4`…), if any.
    public init?(mediaType: String) {
        let type = mediaType.essence
        if type.elementsEqual("application/pdf".utf8) {
            self = .pdf
        } else if type.starts(with: "video/".utf8) {
            self = .video
        } else if type.starts(with: "audio/".utf8) {
            self = .audio
        } else {
            return nil
        }
    }

    /// The program that makes this kind's thumbnails.
    public var program: String {
        switch self {
        case .pdf: "pdftoppm"
        case .video, .audio: "ffmpeg"
        }
    }

    /// The Debian package that has the program.
    public var package: String {
        switch self {
        case .pdf: "poppler-utils"
        case .video, .audio: "ffmpeg"
        }
    }
}

extension String {
    /// A media type's bytes before its parameters (`text/plain` of
    /// `text/plain; charset=utf-8`). On the bytes, not Characters: a
    /// listing asks this of every file it holds.
    var essence: Substring.UTF8View {
        let bytes = utf8
        return self[..<(bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex)].utf8
    }
}
