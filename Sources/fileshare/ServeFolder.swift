import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// The shared folder as `serve` finds it at start: made when missing (its
/// last component only, as `mkdir` does, so a mistyped parent is not made
/// too), checked writable, and taken back by ``undo()`` when the start
/// fails, so that a failed start leaves nothing behind.
struct ServeFolder: Sendable {
    /// The folder, as given.
    let path: String
    /// Whether this start made it.
    let made: Bool
    /// Whether its private state (`.fileshare`) was there before this start.
    let hadPrivateState: Bool
    /// Where the server keeps its state when not in `.fileshare` inside
    /// the folder: a read-only share of a folder it cannot write.
    let stateFolder: String?
    /// Whether this start made ``stateFolder``.
    let madeStateFolder: Bool

    /// The private state's folder inside the shared one.
    static let privateName = ".fileshare"

    /// Why a folder cannot be shared, in plain words.
    struct Problem: Error, Sendable, Equatable {
        let message: String
    }

    /// Makes the folder at `path` if it is missing and checks that the
    /// server can keep its state there; a folder shared read-only that the
    /// server cannot write keeps its state in `state`, or else in
    /// ``defaultStateFolder(for:environment:)``.
    /// - Throws: ``Problem`` naming the real cause: a parent that does not
    ///   exist, a folder the user cannot write, a file where the folder goes.
    static func prepare(
        _ path: String, readOnly: Bool, state: String? = nil,
        environment: [String: String] = ProcessInfoLite.environment
    ) throws(Problem) -> ServeFolder {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        var info = stat()
        var made = false
        if stat(trimmed, &info) != 0 {
            guard errno == ENOENT else { throw Problem(message: "cannot open \(trimmed): \(errorText(errno))") }
            if mkdir(trimmed, 0o755) != 0 {
                let code = errno
                let parent = parentPath(of: trimmed)
                switch code {
                case ENOENT:
                    throw Problem(
                        message:
                            "cannot create \(trimmed): \(parent) does not exist (only the last folder of the path is made: check the spelling, or create \(parent) first)"
                    )
                case EACCES, EPERM, EROFS:
                    throw Problem(message: "cannot create \(trimmed): you cannot write in \(parent)")
                default:
                    throw Problem(message: "cannot create \(trimmed): \(errorText(code))")
                }
            }
            made = true
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw Problem(message: "\(trimmed) is not a folder; give a folder to share")
        }
        let privatePath = trimmed + "/" + privateName
        var privateInfo = stat()
        let hadPrivateState = lstat(privatePath, &privateInfo) == 0
        var stateFolder = state
        if state != nil && !readOnly {
            throw Problem(
                message:
                    "the state folder (--state-folder) is only for a folder shared read-only (--read-only): a folder people change keeps its state inside it, beside its versions and trash"
            )
        }
        if state == nil && !made && access(trimmed, W_OK) != 0 && [EACCES, EPERM, EROFS].contains(errno) {
            if !readOnly {
                throw Problem(
                    message:
                        "cannot share \(trimmed): you cannot write there; serve it as a user who can, or share it with --read-only"
                )
            }
            // A state folder made inside it once, by someone who could, is used.
            if !hadPrivateState || access(privatePath, W_OK) != 0 {
                guard let folder = defaultStateFolder(for: trimmed, environment: environment) else {
                    throw Problem(
                        message:
                            "cannot share \(trimmed) read-only: you cannot write there, and there is no home folder to keep the server's state in; give a folder for it with --state-folder"
                    )
                }
                stateFolder = folder
            }
        }
        var madeStateFolder = false
        if let folder = stateFolder {
            var info = stat()
            if stat(folder, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    throw Problem(message: "\(folder) is not a folder; give a folder for the server's state")
                }
            } else {
                madeStateFolder = true
            }
            if !makeFolders(folder) || access(folder, W_OK) != 0 {
                let code = errno
                if madeStateFolder { removeTree(folder) }
                throw Problem(
                    message:
                        "cannot keep the server's state in \(folder): \(errorText(code)); give a folder you can write with --state-folder"
                )
            }
        }
        return ServeFolder(
            path: trimmed, made: made, hadPrivateState: hadPrivateState, stateFolder: stateFolder,
            madeStateFolder: madeStateFolder)
    }

    /// Where a read-only share of `folder` keeps the server's state when
    /// given no place: a folder named after its path (escaped as
    /// `systemd-escape --path` does: `/mnt/nas/Photos` is `mnt-nas-Photos`)
    /// in systemd's `STATE_DIRECTORY`, or in `fileshare` in
    /// `XDG_STATE_HOME`, or in `~/.local/state/fileshare`; `nil` when none
    /// of those is set or the name would be too long.
    static func defaultStateFolder(for folder: String, environment: [String: String]) -> String? {
        let base: String
        if let systemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !systemd.isEmpty {
            base = String(systemd)
        } else if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = state + "/fileshare"
        } else if let home = environment["HOME"], home.hasPrefix("/"), home != "/nonexistent" {
            base = home + "/.local/state/fileshare"
        } else {
            return nil
        }
        let resolved = realpath(folder, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
        let name = escapedName(resolved ?? folder)
        guard name.utf8.count <= 255 else { return nil }
        return base + "/" + name
    }

    /// `path` as one file name, as `systemd-escape --path` writes it: the
    /// slashes between its parts as `-`, and every byte but ASCII letters,
    /// digits, `:`, `_` and a `.` that does not start the name as `\xNN`
    /// (so no two paths share a name); `-` for the root.
    static func escapedName(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !parts.isEmpty else { return "-" }
        var name = ""
        for (index, part) in parts.enumerated() {
            if index > 0 { name += "-" }
            for byte in part.utf8 {
                let scalar = Unicode.Scalar(byte)
                let plain =
                    (byte < 0x80 && (Character(scalar).isLetter || Character(scalar).isNumber))
                    || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "_")
                    || (byte == UInt8(ascii: ".") && !name.isEmpty)
                name += plain ? String(Character(scalar)) : "\\x" + hex(byte)
            }
        }
        return name
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    /// Makes `path` and the folders above it that are missing (mode 0700,
    /// the server's own); whether it is there now.
    static func makeFolders(_ path: String) -> Bool {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST { return false }
        }
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The server's state folder for `folder` when it was served with
    /// `state` (or none): what `fileshare audit` and `fileshare changes`
    /// read. Inside the folder when it is there; else the default for a
    /// read-only share, when that is there.
    static func stateFolder(forReading folder: String, state: String?) -> String {
        if let state { return state }
        let inside = folder + "/" + privateName
        var info = stat()
        if lstat(inside, &info) == 0 { return inside }
        if let outside = defaultStateFolder(for: folder, environment: ProcessInfoLite.environment),
            stat(outside, &info) == 0
        {
            return outside
        }
        return inside
    }

    /// Removes what this start made: the private state when it was not
    /// there before, and the folder itself when this start made it.
    func undo() {
        if let stateFolder {
            if madeStateFolder { ServeFolder.removeTree(stateFolder) }
        } else if !hadPrivateState {
            ServeFolder.removeTree(path + "/" + ServeFolder.privateName)
        }
        if made { rmdir(path) }
    }

    /// Removes `path` and everything under it, following no symbolic link.
    static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR, let directory = opendir(path) {
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(directory)
            for name in names { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// The folder that holds `path` (`.` for a bare name).
    static func parentPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// What an `errno` value says.
    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// `--state-folder DIR` of the commands that read what a server kept
/// (`audit`, `changes --since`): needed only when the server was given one.
struct StateFolderOption: ParsableArguments {
    @Option(
        name: .customLong("state-folder"),
        help: ArgumentHelp(
            "The server's state folder, when it was given one (serve --state-folder); the default one is found.",
            valueName: "DIR"))
    var path: String?

    /// The state folder of the server that shared `folder`.
    func folder(sharing folder: String) -> String { ServeFolder.stateFolder(forReading: folder, state: path) }
}
