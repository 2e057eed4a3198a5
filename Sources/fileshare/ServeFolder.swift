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

    /// The private state's folder inside the shared one.
    static let privateName = ".fileshare"

    /// Why a folder cannot be shared, in plain words.
    struct Problem: Error, Sendable, Equatable {
        let message: String
    }

    /// Makes the folder at `path` if it is missing and checks that the
    /// server can keep its state there (`readOnly`: only the private state
    /// must be writable).
    /// - Throws: ``Problem`` naming the real cause: a parent that does not
    ///   exist, a folder the user cannot write, a file where the folder goes.
    static func prepare(_ path: String, readOnly: Bool) throws(Problem) -> ServeFolder {
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
        if !made && access(trimmed, W_OK) != 0 && [EACCES, EPERM, EROFS].contains(errno) {
            if !readOnly {
                throw Problem(
                    message:
                        "cannot share \(trimmed): you cannot write there; serve it as a user who can, or share it with --read-only"
                )
            }
            if !hadPrivateState || access(privatePath, W_OK) != 0 {
                throw Problem(
                    message:
                        "cannot share \(trimmed) read-only: the server keeps its state in \(privatePath), and you cannot write there; create that folder once as a user who can, owned by the user that serves"
                )
            }
        }
        return ServeFolder(path: trimmed, made: made, hadPrivateState: hadPrivateState)
    }

    /// Removes what this start made: the private state when it was not
    /// there before, and the folder itself when this start made it.
    func undo() {
        if !hadPrivateState { ServeFolder.removeTree(path + "/" + ServeFolder.privateName) }
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
