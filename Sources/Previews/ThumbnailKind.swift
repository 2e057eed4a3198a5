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
        let type = mediaType.split(separator: ";").first.map(String.init) ?? mediaType
        if type == "application/pdf" {
            self = .pdf
        } else if type.hasPrefix("video/") {
            self = .video
        } else if type.hasPrefix("audio/") {
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
