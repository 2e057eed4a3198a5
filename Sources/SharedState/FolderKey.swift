#if canImport(Glibc)
    import Glibc
#endif

/// The key of a shared folder in the database: made once, at random, and
/// kept in the folder's private folder (`.fileshare/folder-key`), so every
/// server of the folder finds the same key wherever the shared storage is
/// mounted, and two folders never share a log by accident.
public enum FolderKey {
    /// The key file's path, relative to the shared folder.
    public static let fileName = ".fileshare/folder-key"

    /// The folder's key: read from its key file, or made and written there
    /// (`O_EXCL`: when two servers start at once, both read the one that won).
    /// - Throws: ``FolderKeyError`` saying what failed.
    public static func key(forSharedFolder root: String) throws(FolderKeyError) -> String {
        let root = root.hasSuffix("/") ? String(root.dropLast()) : root
        let folder = root + "/.fileshare"
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw FolderKeyError(message: "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        let path = root + "/" + fileName
        for _ in 0..<50 {
            if let existing = try read(path) { return existing }
            var generator = SystemRandomNumberGenerator()
            let digits = Array("0123456789abcdef")
            let key = String((0..<32).map { _ in digits[Int(generator.next(upperBound: UInt(16)))] })
            let temporary = path + ".\(getpid()).tmp"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw FolderKeyError(message: "cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
            let line = Array((key + "\n").utf8)
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            let synced = fsync(fd) == 0
            close(fd)
            guard written == line.count && synced else {
                unlink(temporary)
                throw FolderKeyError(message: "cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
            // A whole file appears at once, and never replaces another's key.
            let linked = link(temporary, path) == 0
            let linkError = errno
            unlink(temporary)
            if linked { return key }
            guard linkError == EEXIST else {
                throw FolderKeyError(message: "cannot write \(path): \(String(cString: strerror(linkError)))")
            }
        }
        throw FolderKeyError(message: "cannot read \(path): it keeps changing")
    }

    /// The key in the file, `nil` when there is no file.
    private static func read(_ path: String) throws(FolderKeyError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw FolderKeyError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        let text = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        let key = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw FolderKeyError(
                message:
                    "\(path) holds no folder key: remove it only if no server of this folder ever used the database")
        }
        return key
    }
}

/// The folder's key cannot be read or made.
public struct FolderKeyError: Error, Sendable, CustomStringConvertible {
    /// For a person: what failed.
    public var message: String
    public var description: String { message }
}
