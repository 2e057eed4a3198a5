/// What a file is, and how that was told: by its content, by its name, or
/// by both.
///
/// Content decides when it is recognised: a PDF named `Report.txt` is a PDF
/// document, and ``contradictsName`` says that its name claims otherwise.
/// Text without a signature is taken at its name's word (`notes.md` is
/// Markdown), and so is an empty file.
public struct Identification: Hashable, Sendable, CustomStringConvertible {
    /// How the type was told.
    public enum Basis: Hashable, Sendable {
        /// The content alone: a signature was found, or the content is text
        /// and the name says nothing more.
        case content
        /// The content, narrowed by the name: a ZIP archive of images named
        /// `.cbz`, an MPEG-4 file named `.m4a`, XML named `.svg`.
        case contentAndName
        /// The name: text without a signature, an empty file, or a type that
        /// has no signature.
        case name
        /// Nothing: the content is not recognised and the name does not help;
        /// the type is `public.data`.
        case unknown
    }

    /// What the content showed, whatever the name says.
    public enum Content: Hashable, Sendable {
        /// A signature of this type (the most specific one found).
        case recognised(DocumentType)
        /// Text without a signature.
        case text
        /// Bytes that are neither text nor of a known signature.
        case unrecognised
        /// No bytes at all.
        case empty
    }

    /// The type of the file.
    public var type: DocumentType
    /// How ``type`` was told.
    public var basis: Basis
    /// What the content showed.
    public var content: Content
    /// The type the file's name says by its extension, if any.
    public var nameType: DocumentType?
    /// The file's name, if one was given.
    public var fileName: String?
    /// Whether the content contradicts the name: the name says a type that
    /// the content is not (a PDF named `.txt`, text named `.jpg`, a ZIP
    /// archive without `word/` named `.docx`).
    public var contradictsName: Bool
    /// Whether the name lies about the content: it says a type, the content
    /// shows another, and neither is a kind of the other (nor are both text).
    ///
    /// An app that opens files by their extension fails on such a file: a
    /// PDF named `notes.txt`, text named `photo.png`. A name that merely says
    /// less or more than the content shows does not lie: a ZIP archive named
    /// `.docx` (the name says a kind of ZIP archive), an EPUB named `.zip`,
    /// CSV text named `.txt`. Neither does a name without a known extension,
    /// nor one of an empty file or of content that was not recognised: there
    /// is no evidence against it.
    public var nameMisleads: Bool

    /// Creates an identification.
    public init(
        type: DocumentType, basis: Basis, content: Content, nameType: DocumentType?, fileName: String?,
        contradictsName: Bool, nameMisleads: Bool = false
    ) {
        self.type = type
        self.basis = basis
        self.content = content
        self.nameType = nameType
        self.fileName = fileName
        self.contradictsName = contradictsName
        self.nameMisleads = nameMisleads
    }

    /// The file's name with the extension its content calls for, when
    /// ``nameMisleads``: `notes.txt` holding a PDF is `notes.pdf`, `photo.PNG`
    /// holding text is `photo.txt`, `backup.tar.gz` holding a PDF is
    /// `backup.pdf`. `nil` when the name does not lie, or when the content's
    /// type has no extension to give (an OLE compound file that no name
    /// tells more of).
    public var correctedName: String? {
        guard nameMisleads, let fileName, let nameType, let wanted = type.preferredExtension else { return nil }
        // The extension the name was read by: the longest of the type's that
        // its last dot-separated parts spell, in any case, as the registry reads names.
        var parts = fileName.split(separator: ".", omittingEmptySubsequences: false)
        let spelled = nameType.extensions.filter { candidate in
            let count = candidate.split(separator: ".", omittingEmptySubsequences: false).count
            guard parts.count > count else { return false }
            return parts.suffix(count).joined(separator: ".").lowercased() == candidate
        }
        guard let matched = spelled.max(by: { $0.count < $1.count }) else { return nil }
        parts.removeLast(matched.split(separator: ".", omittingEmptySubsequences: false).count)
        var stem = parts.joined(separator: ".")
        // A longer extension must not make a name longer than a file system's 255 bytes.
        while !stem.isEmpty && stem.utf8.count + 1 + wanted.utf8.count > 255 { stem.removeLast() }
        guard !stem.isEmpty else { return nil }
        return stem + "." + wanted
    }

    /// The type content showed, if a signature was found.
    public var contentType: DocumentType? {
        if case .recognised(let type) = content { return type }
        return nil
    }

    /// What the content is, for a sentence: "a PDF document", "plain text",
    /// "not one" (when nothing was recognised).
    var contentPhrase: String {
        switch content {
        case .recognised(let type): return type.nameWithArticle
        case .text: return "text"
        case .unrecognised: return "not recognised"
        case .empty: return "empty"
        }
    }

    /// A sentence fragment: "a PDF document (by its content)".
    public var description: String {
        let how: String
        switch basis {
        case .content: how = "by its content"
        case .contentAndName: how = "by its content and name"
        case .name: how = "by its name"
        case .unknown: how = "content not recognised"
        }
        return "\(type.nameWithArticle) (\(how))"
    }
}
