#if canImport(Glibc)
    import Glibc
#endif

/// A server that cannot start as configured, for a reason the person who
/// configured it can fix: the message names the problem and the fix.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// For a person: what is wrong and the fix.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

extension ShareConfiguration {
    /// The files the server reads that must not be served: the users file
    /// (password hashes, and whoever replaces it decides who is admin) and
    /// the TLS private key and certificate.
    var privateFiles: [(what: String, path: String)] {
        var files: [(String, String)] = []
        if let usersFile { files.append(("the users file", usersFile)) }
        if let tls {
            files.append(("the TLS key", tls.key))
            files.append(("the TLS certificate", tls.certificate))
        }
        return files
    }

    /// Throws when one of ``privateFiles`` is inside the shared folder, where
    /// every reader could download it and every writer replace it: a users
    /// file there would make anyone with write on its folder an admin.
    /// - Throws: ``ConfigurationError`` naming the file and the fix.
    func refusePrivateFilesInsideShare() throws(ConfigurationError) {
        if stateFolder != nil && !readOnly {
            throw ConfigurationError(
                "the server's state can be kept outside the shared folder only when it is shared read-only: "
                    + "uploads, versions and the trash need the folder's own disk")
        }
        if stateFolder != nil && sharedDatabase != nil {
            throw ConfigurationError(
                "servers that share a database keep the folder's key inside the folder: "
                    + "share it from a place they can write, or without the database")
        }
        guard let root = ShareConfiguration.resolved(self.root) else { return }
        if let stateFolder, let state = ShareConfiguration.resolved(stateFolder),
            state == root || state.hasPrefix(root == "/" ? "/" : root + "/")
        {
            throw ConfigurationError(
                "the state folder \(stateFolder) is inside the shared folder \(self.root), where people could read it; "
                    + "keep it outside the folder")
        }
        for (what, path) in privateFiles {
            guard let file = ShareConfiguration.resolved(path) else { continue }
            if file == root || file.hasPrefix(root == "/" ? "/" : root + "/") {
                throw ConfigurationError(
                    "\(what) \(path) is inside the shared folder \(self.root), where people could read or replace "
                        + "it; keep it outside the folder (for example in /etc/fileshare/)")
            }
        }
    }

    /// The absolute path with every symbolic link resolved; `nil` when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
