/// The content of a package document: a folder read and saved whole (as
/// `Story.pages/` holding `index.xml` and `Data/image.png`), as a value.
///
/// Paths are relative to the package's folder, their names separated by `/`
/// (`Data/image.png`). Every folder on the way to a file is part of the
/// package; ``folders`` holds them and the empty ones a person made.
/// Symbolic links and other special files are not part of a package: a read
/// leaves them out, so a save does not carry them over.
public struct PackageContents: Sendable, Hashable {
    /// Each file's bytes, by relative path.
    public private(set) var files: [String: [UInt8]]
    /// Every folder in the package (the package's own folder not included), by relative path.
    public private(set) var folders: Set<String>

    /// An empty package.
    public init() {
        files = [:]
        folders = []
    }

    /// A package of `files`, with the extra (empty) `folders`.
    /// - Throws: ``DocumentsError/Code/invalidPath`` for a path that is not
    ///   a plain relative one, or a name that is both a file and a folder.
    public init(files: [String: [UInt8]], folders: Set<String> = []) throws(DocumentsError) {
        self.init()
        for folder in folders { try addFolder(folder) }
        for (path, bytes) in files { try setFile(path, bytes) }
    }

    /// The bytes of the file at `path`, if there is one.
    public subscript(file path: String) -> [UInt8]? { files[path] }

    /// The bytes of all files.
    public var byteCount: Int64 { files.values.reduce(0) { $0 + Int64($1.count) } }

    /// Puts `bytes` at `path`, making the folders on the way.
    /// - Throws: ``DocumentsError/Code/invalidPath`` (changing nothing) for a
    ///   path that is not a plain relative one or that is a folder, or one
    ///   whose way passes through a file.
    public mutating func setFile(_ path: String, _ bytes: [UInt8]) throws(DocumentsError) {
        let names = try PackageContents.names(of: path)
        if folders.contains(path) { throw DocumentsError(.invalidPath, "'\(path)' is a folder of the package") }
        let ancestors = PackageContents.ancestors(names)
        for ancestor in ancestors where files[ancestor] != nil {
            throw DocumentsError(.invalidPath, "'\(ancestor)' is a file of the package, not a folder")
        }
        folders.formUnion(ancestors)
        files[path] = bytes
    }

    /// Adds the folder `path` (and those on the way), empty unless files are put in it.
    public mutating func addFolder(_ path: String) throws(DocumentsError) {
        let names = try PackageContents.names(of: path)
        let all = PackageContents.ancestors(names) + [path]
        for folder in all where files[folder] != nil {
            throw DocumentsError(.invalidPath, "'\(folder)' is a file of the package, not a folder")
        }
        folders.formUnion(all)
    }

    /// Removes the file or the folder (with everything in it) at `path`.
    public mutating func remove(_ path: String) {
        files[path] = nil
        folders.remove(path)
        let prefix = path + "/"
        files = files.filter { !$0.key.hasPrefix(prefix) }
        folders = folders.filter { !$0.hasPrefix(prefix) }
    }

    /// The names of a plain relative path: no empty, `.` or `..` names, no NUL.
    static func names(of path: String) throws(DocumentsError) -> [Substring] {
        let names = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, !path.contains("\0"), names.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else {
            throw DocumentsError(.invalidPath, "'\(path)' is not a relative path inside a package")
        }
        return names
    }

    /// The paths of the folders above the last of `names`.
    private static func ancestors(_ names: [Substring]) -> [String] {
        guard names.count > 1 else { return [] }
        return (1..<names.count).map { names[..<$0].joined(separator: "/") }
    }
}

/// How large a package a document reads or saves: a folder beyond either
/// bound is refused with ``DocumentsError/Code/tooLarge`` rather than read
/// into memory whole.
public struct PackageLimits: Sendable, Hashable {
    /// The most files and folders a package may hold.
    public var maximumItems: Int
    /// The most bytes its files may hold together.
    public var maximumBytes: Int64

    /// By default 10,000 items and 256 MiB.
    public init(maximumItems: Int = 10_000, maximumBytes: Int64 = 256 << 20) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }
}

/// What a document holds: bytes (a file) or a package (a folder).
public enum DocumentContents: Sendable, Hashable {
    /// The content of a file.
    case bytes([UInt8])
    /// The content of a folder saved whole.
    case package(PackageContents)

    /// Whether it is a package.
    public var isPackage: Bool {
        if case .package = self { true } else { false }
    }
}
