import Accounts
import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare users …`: the users file that `fileshare serve --users FILE`
/// reads. Every change is a read, a checked change and an atomic write,
/// under a lock, so two commands at once do not lose each other's change.
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the accounts of a users file: people, groups, and their rights per folder.",
        discussion: """
            The users file holds each user's password only as a bcrypt hash, the groups, and the \
            rights granted on paths of the shared folder: read (list, download), write (also upload, \
            rename, move, delete), upload (a drop box: add new files, see nothing), none (the path \
            does not exist for them). A right holds for everything under its path unless a more \
            specific one says otherwise; a user's own right beats their groups'. The file is written \
            atomically and readable by its owner only; the commands make it when it does not exist.
            """,
        subcommands: [
            UsersAdd.self, UsersPasswd.self, UsersRemove.self, UsersList.self, UsersGrant.self, UsersRevoke.self,
            UsersGroup.self,
        ]
    )
}

/// `--users FILE`, which every `users` command takes; without it, the
/// users file the configuration of `fileshare serve` names.
struct UsersFileOption: ParsableArguments {
    @Option(
        name: .customLong("users"),
        help: ArgumentHelp(
            "The users file (else FILESHARE_USERS, or 'users' in the configuration file).", valueName: "FILE"))
    var given: String?

    @Option(
        help: ArgumentHelp(
            "The configuration file of 'fileshare serve' (else FILESHARE_CONFIG), whose 'users' names the users file.",
            valueName: "FILE"))
    var config: String?

    /// The users file and the shared folder, as given or configured; ends
    /// the command (exit 2) when no users file is named or the
    /// configuration has a mistake.
    var location: UsersFileLocation {
        do {
            return try UsersFileLocation.resolve(
                given: given, config: config, environment: ProcessInfoLite.environment)
        } catch {
            for problem in error.problems { CommandOutput.writeError("fileshare: \(problem)\n") }
            Glibc.exit(2)
        }
    }

    /// The users file.
    var path: String { location.users }

    /// Reads the file (an empty directory when it does not exist yet), lets
    /// `change` change it, and writes it back, under the file's lock.
    func change(_ change: (inout UserDirectory) throws(AccountsError) -> Void) {
        let lock = UsersFileOption.lock(path)
        defer { close(lock) }
        var directory = read() ?? UserDirectory()
        do {
            try change(&directory)
            try UsersFile.write(directory, to: path)
        } catch {
            CommandOutput.fail(error.message, code: 1)
        }
    }

    /// The directory in the file; `nil` when there is none. A damaged file ends the command (exit 1).
    func read() -> UserDirectory? {
        do {
            return try UsersFile.read(path)
        } catch {
            CommandOutput.fail(error.message, code: 1)
        }
    }

    /// Takes the lock beside the file (`FILE.lock`), waiting for another `users` command to finish.
    static func lock(_ path: String) -> Int32 {
        let lockPath = path + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 {
            CommandOutput.fail("cannot open \(lockPath): \(String(cString: strerror(errno)))", code: 1)
        }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR {
                CommandOutput.fail("cannot lock \(lockPath): \(String(cString: strerror(errno)))", code: 1)
            }
        }
        return fd
    }
}

/// A password read from standard input (a terminal is asked twice, without
/// echo), or made: 20 random characters.
enum PasswordInput {
    /// bcrypt reads 72 bytes at most: a longer password would be cut silently.
    static let maximumBytes = 72
    static let minimumCharacters = 8

    /// The password for `name`, and whether it was generated (then it is printed once).
    static func obtain(for name: String, generate: Bool) -> (password: String, generated: Bool) {
        if generate { return (make(), true) }
        let text: String?
        if isatty(0) == 1 {
            let first = prompt("Password for \(name) (empty: make one): ")
            if first.isEmpty { return (make(), true) }
            guard prompt("The same again: ") == first else {
                CommandOutput.fail("the two passwords differ; nothing was changed", code: 1)
            }
            text = first
        } else {
            text = readLine(strippingNewline: true).map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }
        }
        guard let text, !text.isEmpty else { return (make(), true) }
        check(text)
        return (text, false)
    }

    static func check(_ password: String) {
        if password.count < minimumCharacters {
            CommandOutput.fail(
                "the password is shorter than \(minimumCharacters) characters; give a longer one, or none to have one made",
                code: 2)
        }
        if password.utf8.count > maximumBytes {
            CommandOutput.fail(
                "the password is longer than \(maximumBytes) bytes, more than bcrypt reads; give a shorter one", code: 2
            )
        }
    }

    /// 20 characters from 56 that cannot be mistaken for one another (about 116 bits).
    static func make() -> String {
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var random = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int(random.next(upperBound: UInt64(alphabet.count)))] })
    }

    /// Reads a line from the terminal with echo off.
    private static func prompt(_ text: String) -> String {
        CommandOutput.writeError(text)
        var saved = termios()
        tcgetattr(0, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSAFLUSH, &quiet)
        let line = readLine(strippingNewline: true) ?? ""
        tcsetattr(0, TCSAFLUSH, &saved)
        CommandOutput.writeError("\n")
        return line
    }
}

struct UsersAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a user; the password is read from standard input, or made and printed once.")

    @Argument(help: "The user's name: letters, digits and . _ @ + - (an e-mail address works).")
    var name: String

    @OptionGroup var file: UsersFileOption

    @Flag(help: "The user may do everything everywhere, and manage everyone's shares.")
    var admin = false

    @Flag(name: .customLong("generate-password"), help: "Make a password (printed once) instead of reading one.")
    var generatePassword = false

    func validate() throws {
        guard AccountName.isValid(name) else {
            throw ValidationError(
                "'\(name)' is not a valid name: use 1 to 64 letters, digits and . _ @ + -, starting with a letter or digit"
            )
        }
    }

    func run() async throws {
        if file.read()?.users[name] != nil {
            CommandOutput.fail(
                "the user '\(name)' exists already; 'fileshare users passwd \(name)' changes the password", code: 1)
        }
        let (password, generated) = PasswordInput.obtain(for: name, generate: generatePassword)
        let hash = BcryptHasher().hash(password)
        file.change { (directory: inout UserDirectory) throws(AccountsError) in
            try directory.addUser(name, passwordHash: hash, isAdmin: admin)
        }
        CommandOutput.write(
            generated
                ? "added \(name)\(admin ? " (admin)" : ""); password: \(password)\n"
                : "added \(name)\(admin ? " (admin)" : "")\n")
    }
}

struct UsersPasswd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change a user's password (from standard input, or made and printed once).")

    @Argument(help: "The user.")
    var name: String

    @OptionGroup var file: UsersFileOption

    @Flag(name: .customLong("generate-password"), help: "Make a password (printed once) instead of reading one.")
    var generatePassword = false

    func run() async throws {
        guard file.read()?.users[name] != nil else {
            CommandOutput.fail("no user is called '\(name)' ('fileshare users list' shows who there is)", code: 1)
        }
        let (password, generated) = PasswordInput.obtain(for: name, generate: generatePassword)
        let hash = BcryptHasher().hash(password)
        file.change { (directory: inout UserDirectory) throws(AccountsError) in
            try directory.setPassword(name, passwordHash: hash)
        }
        CommandOutput.write(
            generated ? "changed the password of \(name): \(password)\n" : "changed the password of \(name)\n")
    }
}

struct UsersRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a user, from their groups too, with the rights granted to them.")

    @Argument(help: "The user.")
    var name: String

    @OptionGroup var file: UsersFileOption

    func run() async throws {
        file.change { (directory: inout UserDirectory) throws(AccountsError) in try directory.removeUser(name) }
        CommandOutput.write("removed \(name)\n")
    }
}

struct UsersList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the users (with their groups), the groups, and the rights.")

    @OptionGroup var file: UsersFileOption

    @Flag(help: "One JSON object per line: users, then groups, then rights (never a password hash).")
    var json = false

    func run() async throws {
        let directory = file.read() ?? UserDirectory()
        var text = ""
        for name in directory.users.keys.sorted() {
            let user = directory.users[name]!
            let groups = directory.groups(of: name)
            if json {
                text +=
                    "{\"user\":\(quoted(name)),\"admin\":\(user.isAdmin),\"groups\":[\(groups.map(quoted).joined(separator: ","))]}\n"
            } else {
                text +=
                    "user  \(name)\(user.isAdmin ? " (admin)" : "")\(groups.isEmpty ? "" : " in " + groups.joined(separator: ", "))\n"
            }
        }
        for group in directory.groups.keys.sorted() {
            let members = directory.groups[group]!
            text +=
                json
                ? "{\"group\":\(quoted(group)),\"members\":[\(members.map(quoted).joined(separator: ","))]}\n"
                : "group \(group): \(members.isEmpty ? "(nobody)" : members.joined(separator: ", "))\n"
        }
        for grant in directory.grants {
            let path = "/" + grant.path.joined(separator: "/")
            text +=
                json
                ? "{\"grant\":\(quoted(grant.subject)),\"path\":\(quoted(path)),\"right\":\"\(grant.right)\"}\n"
                : "right \(grant.subject) \(grant.right) on \(path)\n"
        }
        CommandOutput.write(text)
    }

    private func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

struct UsersGrant: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Give a user or group a right on a path (and what is under it), replacing the one they had there.")

    @Argument(help: "The user or group.")
    var name: String

    @Argument(help: "The path in the shared folder (/ for all of it).")
    var path: String

    @Argument(help: "read, write, upload (a drop box) or none (the path does not exist for them).")
    var right: String

    @OptionGroup var file: UsersFileOption

    func validate() throws {
        guard Right(rawValue: right) != nil else {
            throw ValidationError("'\(right)' is not a right: give read, write, upload or none")
        }
    }

    func run() async throws {
        let right = Right(rawValue: right)!
        file.change { (directory: inout UserDirectory) throws(AccountsError) in
            try directory.grant(right, on: path, to: name)
        }
        let shown = "/" + path.split(separator: "/").joined(separator: "/")
        CommandOutput.write("\(name) has \(right) on \(shown)\n")
        // A mistyped path is granted all the same (it may be made later), but said.
        if let folder = file.location.folder, shown != "/" {
            var info = stat()
            if lstat(folder + shown, &info) != 0 && errno == ENOENT {
                CommandOutput.writeError(
                    "fileshare: warning: \(shown) does not exist in \(folder); the right applies once it does (check the spelling)\n"
                )
            }
        }
    }
}

struct UsersRevoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Remove the right of a user or group on a path (what is above applies again).")

    @Argument(help: "The user or group.")
    var name: String

    @Argument(help: "The path in the shared folder.")
    var path: String

    @OptionGroup var file: UsersFileOption

    func run() async throws {
        file.change { (directory: inout UserDirectory) throws(AccountsError) in
            try directory.revoke(on: path, from: name)
        }
        CommandOutput.write("removed the right of \(name) on /\(path.split(separator: "/").joined(separator: "/"))\n")
    }
}

struct UsersGroup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Add users to a group, or take them out.",
        subcommands: [UsersGroupAdd.self, UsersGroupRemove.self])
}

struct UsersGroupAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add users to a group (made when it does not exist).")

    @Argument(help: "The group.")
    var group: String

    @Argument(help: "The users.")
    var members: [String] = []

    @OptionGroup var file: UsersFileOption

    func run() async throws {
        file.change { (directory: inout UserDirectory) throws(AccountsError) in
            try directory.addToGroup(group, members: members)
        }
        CommandOutput.write(
            "group \(group): \(members.isEmpty ? "made" : "added " + members.joined(separator: ", "))\n")
    }
}

struct UsersGroupRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Take users out of a group; without users, remove the group and its rights.")

    @Argument(help: "The group.")
    var group: String

    @Argument(help: "The users (none: the whole group).")
    var members: [String] = []

    @OptionGroup var file: UsersFileOption

    func run() async throws {
        file.change { (directory: inout UserDirectory) throws(AccountsError) in
            if members.isEmpty {
                try directory.removeGroup(group)
            } else {
                try directory.removeFromGroup(group, members: members)
            }
        }
        CommandOutput.write(
            members.isEmpty
                ? "removed the group \(group)\n" : "group \(group): removed \(members.joined(separator: ", "))\n")
    }
}
