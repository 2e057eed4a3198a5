import ArgumentParser
import FileSharing

/// `fileshare audit [DIR]`: the record of who did what in a shared folder.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Print the record of accesses to DIR kept by 'fileshare serve DIR', oldest first.",
        discussion: """
            Each access: when, who (a user, 'link ID' for a share link, '-' without a users file), \
            from which address, what (signin, download, upload, delete, move, mkdir, lock, \
            link-create, link-open, …), the path and the outcome ('ok' or the HTTP status). Kept in \
            DIR/.fileshare/audit/ (a folder shared read-only may keep it in its state folder elsewhere), \
            rotated by size. Exits 1 when DIR has no audit.
            """
    )

    @Argument(help: "The shared folder.")
    var directory: String = "./Documents"

    @OptionGroup var state: StateFolderOption

    @Option(
        help: ArgumentHelp(
            "Only accesses at or after this time (RFC 3339, or a duration back: P1D).", valueName: "TIME"))
    var since: String?

    @Option(help: ArgumentHelp("Only this user's accesses ('link ID' for a link's).", valueName: "NAME"))
    var user: String?

    @Option(help: ArgumentHelp("Only accesses to this path or under it.", valueName: "P"))
    var path: String?

    @Option(help: ArgumentHelp("At most this many, the latest.", valueName: "N"))
    var limit: Int?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func run() async throws {
        var filter = AuditReader.Filter(user: user, path: path, limit: limit)
        if let since, !filter.setSince(since) {
            CommandOutput.fail("--since takes an RFC 3339 time or an ISO 8601 duration, not '\(since)'", code: 2)
        }
        let folder = AuditReader.folder(forPrivateFolder: state.folder(sharing: directory))
        if AuditReader.files(in: folder).isEmpty {
            CommandOutput.fail("\(directory) has no audit (is it shared with 'fileshare serve'?)", code: 1)
        }
        let events = AuditReader.read(folder: folder, filter: filter)
        if json {
            for event in events { CommandOutput.write(event.jsonLine + "\n") }
        } else {
            CommandOutput.write(AuditReader.table(events) + "\n")
        }
    }
}
