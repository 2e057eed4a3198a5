/// One setting of `fileshare serve`: its key in the configuration file, its
/// flag, its environment variable, the kind of value it takes, its default.
///
/// ``all`` is the one list of settings: the file's keys are checked against
/// it, `--check-config` prints it, `Documentation/configuration.md` and
/// `Packaging/fileshare.yaml` are tested against it.
struct ServeSetting: Sendable, Hashable {
    /// The kind of value a setting takes, and how its text is read.
    enum Kind: Sendable, Hashable {
        /// A word, a path or an address, as given.
        case text
        /// `true` or `false` (also `yes`/`no`, `on`/`off`, `1`/`0`).
        case onOff
        /// A whole number within `range`.
        case count(ClosedRange<Int>)
        /// A size in bytes, with an optional suffix K, M, G or T; `unlimited` when `optional`.
        case size(optional: Bool)
        /// A length of time: a number of seconds, or a number with `s`,
        /// `m`, `h` or `d`; more than 0 and at most `most` seconds;
        /// `unlimited` when `optional`.
        case duration(most: Int64, optional: Bool)
    }

    /// The key: a top-level key is the long flag's name; a key in a section is `section.name`.
    let key: String
    /// The flag that sets it, or `nil` (a setting of a section has none).
    let flag: String?
    /// What it takes.
    let kind: Kind
    /// The value when nothing sets it, as the file would write it (`nil`: not set).
    let defaultValue: String?
    /// What it does, in a few words.
    let summary: String
    /// Whether a change of it in the file applies without a restart.
    let reloads: Bool
    /// Whether its value is kept out of what is printed (a password).
    let secret: Bool

    init(
        _ key: String, flag: String? = nil, _ kind: Kind, default defaultValue: String?, reloads: Bool = false,
        secret: Bool = false, _ summary: String
    ) {
        self.key = key
        self.flag = flag
        self.kind = kind
        self.defaultValue = defaultValue
        self.summary = summary
        self.reloads = reloads
        self.secret = secret
    }

    /// The environment variable that sets it: `FILESHARE_` and the key in
    /// capitals, `-` and `.` as `_` (what swift-configuration's
    /// `EnvironmentVariablesProvider` reads for the key under `fileshare`).
    var environmentName: String {
        "FILESHARE_" + String(key.uppercased().map { $0 == "-" || $0 == "." ? "_" : $0 })
    }

    /// The key's parts: `["versions", "max-count"]`.
    var components: [String] { key.split(separator: ".").map(String.init) }

    /// The section it sits in, or `nil` at the top level.
    var section: String? { components.count > 1 ? components[0] : nil }

    /// What it takes, for a person.
    var kindDescription: String {
        switch kind {
        case .text: "text"
        case .onOff: "true or false"
        case .count(let range):
            range.upperBound == Int.max
                ? "a whole number from \(range.lowerBound)"
                : "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .size(let optional): optional ? "a size such as 500M or 2G, or unlimited" : "a size such as 500M or 2G"
        case .duration(_, let optional):
            optional ? "a time such as 90s, 30m, 12h or 30d, or unlimited" : "a time such as 90s, 30m, 12h or 30d"
        }
    }
}

extension ServeSetting {
    /// Every setting of `fileshare serve`, in the order the reference and the example file give them.
    static let all: [ServeSetting] = [
        ServeSetting(
            "folder", flag: "DIR", .text, default: "./Documents",
            "The folder to share (created if missing); given on the command line as DIR."),
        ServeSetting("port", flag: "--port", .count(0...65535), default: "8080", "The port (0 picks a free one)."),
        ServeSetting("bind", flag: "--bind", .text, default: "127.0.0.1", "The address to listen on."),
        ServeSetting(
            "user", flag: "--user", .text, default: nil, "The one user's name, for the page's sign-in and HTTP Basic."),
        ServeSetting(
            "password", flag: "--password", .text, default: nil, secret: true,
            "The one user's password."),
        ServeSetting(
            "users", flag: "--users", .text, default: nil,
            "The users file ('fileshare users'): sign-in as its users, with their rights; read again when it changes."),
        ServeSetting(
            "no-auth", flag: "--no-auth", .onOff, default: "false",
            "No credentials (only when bound to a loopback address)."),
        ServeSetting("tls-cert", flag: "--tls-cert", .text, default: nil, "A PEM certificate chain, to serve HTTPS."),
        ServeSetting("tls-key", flag: "--tls-key", .text, default: nil, "The PEM private key of the certificate."),
        ServeSetting(
            "read-only", flag: "--read-only", .onOff, default: "false", "Allow no change through the server (403)."),
        ServeSetting(
            "state-folder", flag: "--state-folder", .text, default: nil,
            "Where the server keeps its state when the folder is shared read-only (by default inside it, or in ~/.local/state/fileshare when it cannot be written)."
        ),
        ServeSetting(
            "inbox", flag: "--inbox", .onOff, default: "false",
            "Also take in the documents that arrive in the folder's Inbox."),
        ServeSetting(
            "max-upload", flag: "--max-upload", .size(optional: true), default: "unlimited",
            "The largest upload accepted (413 above it)."),
        ServeSetting(
            "accept", flag: "--accept", .text, default: nil,
            "The only types uploads may be: type identifiers or extensions, comma-separated."),
        ServeSetting(
            "types", flag: "--types", .text, default: nil, "A document types file (JSON, YAML or TOML)."),
        ServeSetting(
            "header-timeout", flag: "--header-timeout", .duration(most: 86_400, optional: false), default: "60",
            "The most time from a request's first byte to the end of its header (408 past it)."),
        ServeSetting(
            "keep-alive-timeout", flag: "--keep-alive-timeout", .duration(most: 86_400, optional: false),
            default: "75", "How long a connection may stay open with no request under way."),
        ServeSetting(
            "body-timeout", flag: "--body-timeout", .duration(most: 86_400, optional: false), default: "300",
            "How long a request body may go without a byte."),
        ServeSetting(
            "database", flag: "--database", .text, default: nil, secret: true,
            "A PostgreSQL URL: the change log, locks, uploads, sessions and links shared by every server of the folder."
        ),
        ServeSetting(
            "fix-extensions", flag: "--fix-extensions", .onOff, default: "false",
            "Put an upload whose name lies about its content in place under the corrected name."),
        ServeSetting(
            "quiet", flag: "--quiet", .onOff, default: "false", "Log only warnings and errors on stderr (no notices)."),
        ServeSetting(
            "print-changes", flag: "--print-changes", .onOff, default: "false",
            "Print each change of the folder (and each Inbox event) to stderr as a JSON line."),
        ServeSetting(
            "versions.max-count", .count(0...Int.max), default: "20", reloads: true,
            "The most versions kept of one file."),
        ServeSetting(
            "versions.max-age", .duration(most: 100 * 365 * 86_400, optional: true), default: "30d", reloads: true,
            "The longest a version is kept."),
        ServeSetting(
            "versions.max-size", .size(optional: true), default: "1G", reloads: true,
            "The most bytes all versions take."),
        ServeSetting(
            "trash.max-age", .duration(most: 100 * 365 * 86_400, optional: true), default: "30d", reloads: true,
            "The longest a deleted item stays in the trash."),
        ServeSetting(
            "trash.max-size", .size(optional: true), default: "1G", reloads: true,
            "The most bytes the items in the trash take."),
        ServeSetting(
            "changes.max-records", .count(1...Int.max), default: "10000000",
            "The newest records of the change log always kept."),
        ServeSetting(
            "changes.max-age", .duration(most: 100 * 365 * 86_400, optional: false), default: "30d",
            "Records of the change log older than this are dropped."),
        ServeSetting(
            "thumbnails.size", .count(16...4096), default: "256", "A thumbnail's longer side, in pixels, at most."),
        ServeSetting(
            "thumbnails.concurrent", .count(1...64), default: "2",
            "The image decodes at once, and the thumbnail programs (pdftoppm, ffmpeg) at once, at most."),
        ServeSetting(
            "thumbnails.time-limit", .duration(most: 3600, optional: false), default: "10s",
            "The CPU time one thumbnail may take before it is given up (its icon)."),
        ServeSetting(
            "thumbnails.ahead", .count(0...1_000_000), default: "4096",
            "How many files of listed folders may wait to have their thumbnails made ahead (0: none)."),
        ServeSetting(
            "uploads.lifetime", .duration(most: 365 * 86_400, optional: false), default: "24h",
            "How long a resumable upload is kept after its last chunk."),
        ServeSetting(
            "uploads.per-user", .count(1...1_000_000), default: "20",
            "How many resumable uploads one user (or one address) may have under way."),
        ServeSetting(
            "uploads.total", .count(1...1_000_000), default: "1000",
            "How many resumable uploads the folder holds under way."),
        ServeSetting(
            "sign-in.free-failures", .count(1...1_000_000), default: "5",
            "Failed sign-ins from one address, or for one name, before each further attempt must wait."),
        ServeSetting(
            "sign-in.longest-wait", .duration(most: 86_400, optional: false), default: "5m",
            "The longest wait between attempts after failed sign-ins (from 1 s, doubled after each failure)."),
    ]

    /// The setting of `key`, if there is one.
    static func named(_ key: String) -> ServeSetting? { all.first { $0.key == key } }

    /// The sections of the file, in order.
    static var sections: [String] {
        var seen: [String] = []
        for setting in all { if let section = setting.section, !seen.contains(section) { seen.append(section) } }
        return seen
    }
}
