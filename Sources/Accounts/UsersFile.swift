import FileWatching
import Foundation

/// The users file (`fileshare serve --users FILE`): a ``UserDirectory`` as
/// JSON, written only by the `fileshare users` commands, atomically, and
/// readable by its owner only (it holds password hashes).
///
/// ```json
/// {
///   "format" : "fileshare-users 1",
///   "grants" : [ { "path" : "/Projects", "right" : "write", "to" : "team" } ],
///   "groups" : { "team" : [ "alice", "bob" ] },
///   "users" : { "alice" : { "admin" : true, "password" : "$2b$12$…" } }
/// }
/// ```
public enum UsersFile {
    /// The `format` line of the files this version reads and writes.
    public static let format = "fileshare-users 1"
    /// The file's permissions: the owner reads and writes, nobody else anything.
    public static let permissions: UInt32 = 0o600

    /// The directory in the file at `path`; `nil` when there is no file.
    /// - Throws: ``AccountsError``: `.io` when it cannot be read, `.damaged`
    ///   when it is not a users file (or names things inconsistently).
    public static func read(_ path: String) throws(AccountsError) -> UserDirectory? {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path)
        } catch {
            throw AccountsError(.io, "cannot read the users file: \(error.message)")
        }
        guard let bytes else { return nil }
        return try decode(bytes, path: path)
    }

    /// The directory in `bytes` (the content of the file at `path`, named in errors).
    public static func decode(_ bytes: [UInt8], path: String) throws(AccountsError) -> UserDirectory {
        let file = try Reader(path: path).content(of: bytes)
        var grants: [UserDirectory.Grant] = []
        for grant in file.grants {
            let right = Right(rawValue: grant.right)
            guard let right else {
                throw AccountsError(.damaged, "\(path): '\(grant.right)' is not a right (none, upload, read, write)")
            }
            let components: [String]
            do {
                components = try AccountName.pathComponents(grant.path)
            } catch {
                throw AccountsError(.damaged, "\(path): \(error.message)")
            }
            grants.append(UserDirectory.Grant(subject: grant.to, path: components, right: right))
        }
        do {
            return try UserDirectory(
                users: file.users.mapValues {
                    UserDirectory.User(passwordHash: $0.password, isAdmin: $0.admin ?? false)
                },
                groups: file.groups ?? [:], grants: grants)
        } catch {
            throw AccountsError(.damaged, "\(path): \(error.message)")
        }
    }

    /// The file's bytes for `directory`: stable (sorted keys), so that a
    /// change shows as a small difference.
    public static func encode(_ directory: UserDirectory) -> [UInt8] {
        let file = FileContent(
            format: format,
            users: directory.users.mapValues { FileContent.User(password: $0.passwordHash, admin: $0.isAdmin) },
            groups: directory.groups,
            grants: directory.grants.map {
                FileContent.Grant(to: $0.subject, path: "/" + $0.path.joined(separator: "/"), right: $0.right.rawValue)
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and arrays cannot fail.
        let data = (try? encoder.encode(file)) ?? Data("{}".utf8)
        return Array(data) + [UInt8(ascii: "\n")]
    }

    /// Writes `directory` to `path` atomically, readable by its owner only.
    /// - Throws: ``AccountsError`` (`.io`); the old file is left as it was.
    public static func write(_ directory: UserDirectory, to path: String) throws(AccountsError) {
        do {
            try AtomicFile.write(encode(directory), to: path, permissions: permissions)
        } catch {
            throw AccountsError(.io, "cannot write the users file: \(error.message)")
        }
    }

    /// The file as JSON.
    struct FileContent: Codable {
        struct User: Codable {
            var password: String
            var admin: Bool?
        }
        struct Grant: Codable {
            var to: String
            var path: String
            var right: String
        }
        var format: String
        var users: [String: User]
        var groups: [String: [String]]?
        var grants: [Grant]
    }
}
