import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program and waits for it; returns its standard output. Throws when it fails.
@discardableResult
func run(_ executable: String, _ arguments: [String], in directory: String? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw ProcessFailure(
            command: ([executable] + arguments).joined(separator: " "), status: process.terminationStatus)
    }
    return String(decoding: data, as: UTF8.self)
}

struct ProcessFailure: Error, CustomStringConvertible {
    var command: String
    var status: Int32
    var description: String { "\(command) exited with \(status)" }
}

/// Small file operations for tests, through the system calls a program would make.
enum Disk {
    /// open(O_CREAT|O_TRUNC), write, close: what most programs do (Foundation's
    /// `createFile` writes a temporary file and renames it instead).
    static func write(_ path: String, _ text: String = "x") {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0, "cannot create \(path): \(errno)")
        var bytes = Array(text.utf8)
        if !bytes.isEmpty { precondition(Glibc.write(fd, &bytes, bytes.count) == bytes.count) }
        close(fd)
    }

    static func mkdir(_ path: String) {
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    static func rename(_ from: String, _ to: String) {
        precondition(Glibc.rename(from, to) == 0, "rename \(from) \(to): \(errno)")
    }

    static func remove(_ path: String) {
        try! FileManager.default.removeItem(atPath: path)
    }

    /// Every path under `root`, relative, with its kind (symbolic links not followed).
    static func snapshot(_ root: String, includeHidden: Bool = false) -> [String: String] {
        var result: [String: String] = [:]
        func visit(_ relative: String) {
            let absolute = relative.isEmpty ? root : root + "/" + relative
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: absolute) else { return }
            for name in names where includeHidden || !name.hasPrefix(".") {
                let child = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                guard lstat(root + "/" + child, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    result[child] = "directory"
                    visit(child)
                case S_IFREG: result[child] = "file"
                case S_IFLNK: result[child] = "symlink"
                default: result[child] = "other"
                }
            }
        }
        visit("")
        return result
    }
}
