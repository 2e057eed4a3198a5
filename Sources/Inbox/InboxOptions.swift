public import DocumentTypes
import FileWatching

/// How an Inbox takes documents in.
public struct InboxOptions: Sendable {
    /// How folders dropped in the Inbox are taken in.
    public enum FolderHandling: String, Sendable, CaseIterable {
        /// As one document package: moved whole, once every file in it is
        /// complete and accepted (otherwise the whole folder is quarantined).
        case package
        /// Unpacked: each file inside is taken in on its own; the emptied
        /// folders are removed.
        case unpack
    }

    /// The Inbox's name inside the processed folder.
    public var inboxName: String
    /// Where refused items go, relative to the processed folder or absolute.
    public var quarantine: String
    /// The types taken in.
    public var acceptedTypes: AcceptedTypes
    /// What becomes of a document whose name lies about its content (a PDF
    /// named `notes.txt`): quarantined, with a reason naming both types
    /// (the default), or taken in under the corrected name (`notes.pdf`,
    /// clash-free; inside a folder taken as one package, renamed in place).
    public var misleadingNames: MisleadingNames
    /// Whether accepted documents go into a folder named after their type
    /// (`PDF document/`) rather than the processed folder itself.
    public var foldersPerType: Bool
    /// How folders are taken in.
    public var folderHandling: FolderHandling
    /// How long a folder must stay unchanged (with nothing in it still being
    /// written) before it is taken in.
    public var folderSettleTime: Duration
    /// The observer's settle time for files (see `ObserverOptions.settleTime`).
    public var settleTime: Duration

    /// Creates options; the defaults are those of `fileshare inbox`.
    public init(
        inboxName: String = "Inbox", quarantine: String = "Quarantine", acceptedTypes: AcceptedTypes = .all(),
        misleadingNames: MisleadingNames = .refuse, foldersPerType: Bool = false,
        folderHandling: FolderHandling = .package, folderSettleTime: Duration = .seconds(2),
        settleTime: Duration = .seconds(1)
    ) {
        self.inboxName = inboxName
        self.quarantine = quarantine
        self.acceptedTypes = acceptedTypes
        self.misleadingNames = misleadingNames
        self.foldersPerType = foldersPerType
        self.folderHandling = folderHandling
        self.folderSettleTime = folderSettleTime
        self.settleTime = settleTime
    }
}

/// A document taken in, as the handler gets it.
public struct InboxDelivery: Sendable, Hashable {
    /// Its absolute path now.
    public var path: String
    /// Its path relative to the processed folder.
    public var relativePath: String
    /// Where it was in the Inbox, relative to the processed folder.
    public var source: String
    /// The accepted type's identifier (`public.folder` for a package).
    public var typeIdentifier: String
    /// Whether the handler was already called for it by a process that was
    /// killed before the handler returned: the handler runs again, told so.
    public var isRepeat: Bool
}

/// What the Inbox reports, one JSON object per line (see the README).
public enum InboxEvent: Sendable, Hashable {
    /// A document was taken in: moved from `from` to `path`.
    case takenIn(from: String, path: String, type: String)
    /// A document was refused and moved to the quarantine, with a reason file beside it.
    case refused(from: String, path: String, reason: String)
    /// The handler returned for a document.
    case handled(path: String, isRepeat: Bool)
    /// Something went wrong that the Inbox survived (a refused document is also reported so).
    case error(message: String, path: String?)

    /// The event as one line of JSON.
    public var jsonLine: String {
        func quoted(_ text: String) -> String { JSONText.quoted(text) }
        switch self {
        case .takenIn(let from, let path, let type):
            return
                "{\"type\":\"taken-in\",\"from\":\(quoted(from)),\"path\":\(quoted(path)),\"document_type\":\(quoted(type))}"
        case .refused(let from, let path, let reason):
            return
                "{\"type\":\"refused\",\"from\":\(quoted(from)),\"path\":\(quoted(path)),\"reason\":\(quoted(reason))}"
        case .handled(let path, let isRepeat):
            return "{\"type\":\"handled\",\"path\":\(quoted(path)),\"repeat\":\(isRepeat)}"
        case .error(let message, let path):
            return "{\"type\":\"error\",\"message\":\(quoted(message))" + (path.map { ",\"path\":\(quoted($0))" } ?? "")
                + "}"
        }
    }
}
