import DocumentTypes

/// An upload the accepted types refuse, or whose type cannot be told. It
/// knows no HTTP: the faces answer a refusal with 415 and the reason.
struct UploadRefusal: Error, Sendable {
    /// Why the upload ends.
    enum Kind: Sendable {
        /// Its type is not accepted.
        case refused
        /// Its type could not be told (the staged file could not be read).
        case unreadable
    }

    /// Why the upload ends.
    var kind: Kind
    /// For a person: the reason, as the accepted types give it.
    var reason: String
    /// The name the file should have, when its name lies about its content
    /// and the content's type has an extension (`notes.pdf` for a PDF sent as `notes.txt`).
    var rename: String?

    init(_ kind: Kind, _ reason: String, rename: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.rename = rename
    }

    /// The accepted types' refusal.
    init(_ refusal: Refusal) {
        self.init(
            .refused, refusal.reason,
            rename: refusal.code == .misleadingName ? refusal.identification.correctedName : nil)
    }
}
