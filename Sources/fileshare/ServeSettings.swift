import Accounts
import ChangeLog
import FileSharing
import Versions

/// The settings of `fileshare serve`, read from ``ResolvedSettings``
/// (every text already checked against its setting's kind).
struct ServeSettings: Sendable, Equatable {
    var folder: String
    var port: Int
    var bind: String
    var user: String?
    var password: String?
    var users: String?
    var noAuth: Bool
    var tlsCertificate: String?
    var tlsKey: String?
    var readOnly: Bool
    var inbox: Bool
    var maxUpload: Int64?
    var accept: String?
    var types: String?
    var headerTimeout: Duration
    var keepAliveTimeout: Duration
    var bodyTimeout: Duration
    var database: String?
    var stateFolder: String?
    var fixExtensions: Bool
    var quiet: Bool
    var printChanges: Bool
    var history: HistoryOptions
    var changeRetention: ChangeLogRetention
    var thumbnailSize: Int
    var thumbnailsConcurrent: Int
    var thumbnailTimeLimit: Duration
    var thumbnailsAhead: Int
    var pendingUploads: PendingUploadLimits
    var signInLimits: SignInThrottle.Limits

    /// Reads the typed values of `resolved`.
    init(_ resolved: ResolvedSettings) {
        func text(_ key: String) -> String? {
            precondition(ServeSetting.named(key) != nil, "\(key) is not in ServeSetting.all")
            return resolved.texts[key].flatMap { $0.isEmpty ? nil : $0 }
        }
        func count(_ key: String) -> Int { text(key).flatMap { Int($0) } ?? 0 }
        func flag(_ key: String) -> Bool { text(key).flatMap(ServeSetting.switchValue) ?? false }
        func size(_ key: String) -> Int64? { text(key).flatMap { ServeSetting.sizeValue($0, optional: true) } ?? nil }
        func duration(_ key: String) -> Duration? {
            text(key).flatMap { ServeSetting.durationValue($0, most: Int64.max / 1_000_000_000, optional: true) } ?? nil
        }
        folder = text("folder") ?? "./Documents"
        port = count("port")
        bind = text("bind") ?? "127.0.0.1"
        user = text("user")
        password = text("password")
        users = text("users")
        noAuth = flag("no-auth")
        tlsCertificate = text("tls-cert")
        tlsKey = text("tls-key")
        readOnly = flag("read-only")
        inbox = flag("inbox")
        maxUpload = size("max-upload")
        accept = text("accept")
        types = text("types")
        headerTimeout = duration("header-timeout") ?? .seconds(60)
        keepAliveTimeout = duration("keep-alive-timeout") ?? .seconds(75)
        bodyTimeout = duration("body-timeout") ?? .seconds(300)
        database = text("database")
        stateFolder = text("state-folder")
        fixExtensions = flag("fix-extensions")
        quiet = flag("quiet")
        printChanges = flag("print-changes")
        history = HistoryOptions(
            versions: VersionRetention(
                maximumCount: count("versions.max-count"), maximumAge: duration("versions.max-age")?.nanoseconds,
                maximumBytes: size("versions.max-size")),
            trash: TrashRetention(
                maximumAge: duration("trash.max-age")?.nanoseconds, maximumBytes: size("trash.max-size")))
        changeRetention = ChangeLogRetention(
            maxRecords: UInt64(count("changes.max-records")),
            maxAgeSeconds: duration("changes.max-age")?.components.seconds ?? 30 * 86_400)
        thumbnailSize = count("thumbnails.size")
        thumbnailsConcurrent = count("thumbnails.concurrent")
        thumbnailTimeLimit = duration("thumbnails.time-limit") ?? .seconds(10)
        thumbnailsAhead = count("thumbnails.ahead")
        pendingUploads = PendingUploadLimits(
            lifetime: duration("uploads.lifetime") ?? .seconds(86_400), perOwner: count("uploads.per-user"),
            total: count("uploads.total"))
        signInLimits = SignInThrottle.Limits(
            freeFailures: count("sign-in.free-failures"), maxDelay: duration("sign-in.longest-wait") ?? .seconds(300))
    }

    /// What the settings say together that none says alone (`--tls-cert`
    /// without `--tls-key`), for a person; empty when they agree.
    var conflicts: [String] {
        var found: [String] = []
        if (tlsCertificate == nil) != (tlsKey == nil) {
            found.append("--tls-cert and --tls-key (tls-cert, tls-key) go together; give both")
        }
        if users != nil && (noAuth || user != nil || password != nil) {
            found.append(
                "--users cannot be combined with --user, --password or --no-auth (users, user, password, no-auth)")
        } else if noAuth && !Serve.isLoopback(bind) {
            found.append(
                "--no-auth is accepted only on a loopback address; bind to 127.0.0.1 or give credentials")
        } else if noAuth && (user != nil || password != nil) {
            found.append("--no-auth cannot be combined with credentials")
        } else if (user == nil) != (password == nil) {
            found.append(
                "give both --user and --password (or FILESHARE_USER and FILESHARE_PASSWORD, or user and password)")
        }
        if let user, let password, user.isEmpty || password.isEmpty || user.contains(":") {
            found.append("the user name and password must not be empty, and the user name has no ':'")
        }
        if let accept, TypeOptions.listItems(accept).isEmpty {
            found.append(
                "--accept takes type identifiers or extensions separated by commas, such as public.image,com.adobe.pdf"
            )
        }
        return found
    }

    /// The settings that differ between `self` and `other`, by key.
    static func changedKeys(from old: ResolvedSettings, to new: ResolvedSettings) -> [String] {
        ServeSetting.all.map(\.key).filter { old.texts[$0] != new.texts[$0] }
    }
}
