import Foundation
import ZipStream

/// An entry to put in a test archive.
struct TestEntry: Sendable {
    var name: String
    var kind: ZipEntryKind = .file
    /// Seconds since 1970.
    var modified: Int64 = 1_700_000_001
    var content: [UInt8] = []
    var permissions: UInt16? = nil

    static func file(_ name: String, _ content: [UInt8] = [], modified: Int64 = 1_700_000_001) -> TestEntry {
        TestEntry(name: name, modified: modified, content: content)
    }

    static func folder(_ name: String, modified: Int64 = 1_700_000_001) -> TestEntry {
        TestEntry(name: name, kind: .directory, modified: modified)
    }

    /// The name as stored: with a trailing `/` for a folder.
    var storedName: String { kind == .directory && !name.hasSuffix("/") ? name + "/" : name }

    /// The Unix mode a reader should see.
    var mode: Int {
        kind == .file ? 0o100000 | Int(permissions ?? 0o644) : 0o040000 | Int(permissions ?? 0o755)
    }
}

/// A file written through a buffer, as a server writes to a socket.
final class OutputFile {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private(set) var count: UInt64 = 0

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ bytes: some Collection<UInt8>) throws {
        count += UInt64(bytes.count)
        if buffer.count + bytes.count > 1 << 20 { try flush() }
        if bytes.count >= 1 << 20 {
            try handle.write(contentsOf: Data(bytes))
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        try handle.close()
    }
}

/// Writes `entries` to a ZIP file at `path`, each file's content in chunks of
/// `chunkSize` bytes, the way the server drives the writer. Returns the writer
/// once finished.
@discardableResult
func writeArchive(
    _ entries: [TestEntry], to path: String, forceZip64: Bool = false, chunkSize: Int = 65_537,
    passExpectedSizes: Bool = true
) throws -> ZipStreamWriter {
    let out = try OutputFile(path: path)
    var zip = ZipStreamWriter(forceZip64: forceZip64)
    for entry in entries {
        try out.write(
            zip.beginEntry(
                name: entry.name, kind: entry.kind, modified: entry.modified,
                expectedSize: passExpectedSizes ? UInt64(entry.content.count) : nil, permissions: entry.permissions))
        var start = 0
        while start < entry.content.count {
            let chunk = entry.content[start..<min(start + chunkSize, entry.content.count)]
            zip.update(chunk)
            try out.write(chunk)
            start += chunk.count
        }
        try out.write(zip.endEntry())
    }
    try out.write(zip.finish())
    try out.close()
    precondition(out.count == zip.bytesWritten, "the writer's count differs from the bytes written")
    return zip
}
