import Accounts
import CFileshareShim
import FileWatching
import Hummingbird
import NIOCore
import NIOPosix
import ZipStream

#if canImport(Glibc)
    import Glibc
#endif

/// A folder's tree as a ZIP, streamed as it is read (stored, ZIP64 where
/// needed), so memory stays flat whatever the size: the share's folders
/// (`GET /api/zip`) and a package's kept versions (`GET /api/versions/content`).
enum ZipTree {
    /// The ZIP of everything under the open folder `fd` (closed when the
    /// body ends), each entry named `prefix` + its relative path. Hidden
    /// names and symbolic links are left out; `include` says which of the
    /// rest go in (a folder left out is not entered).
    static func body(
        folder fd: Int32, prefix: String, core: ShareCore,
        include: @escaping @Sendable (_ relative: [String], _ kind: ItemKind) -> Bool
    ) -> ResponseBody {
        ResponseBody { writer in
            defer { close(fd) }
            var zip = ZipStreamWriter()
            // Depth first, one open descriptor per level.
            var stack: [(fd: Int32, name: String, entries: [String])] = []
            func push(_ fd: Int32, _ name: String) async throws {
                let entries = try await core.blocking {
                    try SharedFolder.entries(fd: fd, path: .root).filter { !$0.hasPrefix(".") }.sorted()
                }
                stack.append((fd, name, entries.reversed()))
            }
            if !prefix.isEmpty {
                let modified = (try? FileStatus(descriptor: fd))?.modified ?? 0
                try await writer.write(
                    ByteBuffer(
                        bytes: try zip.beginEntry(name: prefix, kind: .directory, modified: modified / 1_000_000_000)))
                try await writer.write(ByteBuffer(bytes: try zip.endEntry()))
            }
            try await push(dup(fd), prefix)
            defer { for level in stack { close(level.fd) } }
            while !stack.isEmpty {
                guard let name = stack[stack.count - 1].entries.popLast() else {
                    close(stack.removeLast().fd)
                    continue
                }
                let directory = stack[stack.count - 1]
                let relative = directory.name.dropFirst(prefix.count).split(separator: "/").map(String.init) + [name]
                guard let status = try? FileStatus(name: name, in: directory.fd) else { continue }  // gone meanwhile
                guard status.kind == .directory || status.kind == .file, include(relative, status.kind) else {
                    continue  // symbolic links, fifos, sockets: not archived
                }
                let entryName = directory.name + name
                if status.kind == .directory {
                    let child = openat(directory.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    guard child >= 0 else { continue }
                    try await writer.write(
                        ByteBuffer(
                            bytes: try zip.beginEntry(
                                name: entryName + "/", kind: .directory, modified: status.modified / 1_000_000_000)))
                    try await writer.write(ByteBuffer(bytes: try zip.endEntry()))
                    try await push(child, entryName + "/")
                    continue
                }
                let file = openat(directory.fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
                guard file >= 0 else { continue }
                defer { close(file) }
                try await writer.write(
                    ByteBuffer(
                        bytes: try zip.beginEntry(
                            name: entryName, kind: .file, modified: status.modified / 1_000_000_000,
                            expectedSize: UInt64(status.size))))
                var offset: Int64 = 0
                while true {
                    let position = offset
                    let chunk = try await core.blocking { () -> ByteBuffer in
                        var buffer = ByteBufferAllocator().buffer(capacity: 256 * 1024)
                        _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 256 * 1024) { raw in
                            max(0, cfs_pread(file, raw.baseAddress!, 256 * 1024, position))
                        }
                        return buffer
                    }
                    if chunk.readableBytes == 0 { break }
                    chunk.withUnsafeReadableBytes { zip.update($0) }
                    offset += Int64(chunk.readableBytes)
                    try await writer.write(chunk)
                }
                try await writer.write(ByteBuffer(bytes: try zip.endEntry()))
            }
            try await writer.write(ByteBuffer(bytes: try zip.finish()))
            try await writer.finish(nil)
        }
    }
}

extension APIFace {
    /// `GET /api/zip?path=P`: the folder as a ZIP, streamed as it is read
    /// (stored, ZIP64 where needed), so memory stays flat whatever the size.
    /// Hidden names and symbolic links are left out, as everywhere.
    func zip(_ request: Request) async throws -> Response {
        try await zip(at: try SharePath(plain: try APIRequest.query(request, "path") ?? ""))
    }

    /// The folder at `path` as a ZIP, as the current requester may read it.
    func zip(at path: SharePath) async throws -> Response {
        AuditNote.about(path: path.description)
        // Only what may be read goes in: a drop box's ZIP is empty, a folder
        // that is only a way in holds only what is shared below it.
        let scope = try core.listingScope(path)
        let policy = Requester.current.policy
        let core = self.core
        let folder = core.folder
        let fd = try await core.blocking { try folder.open(path, flags: O_RDONLY | O_DIRECTORY) }
        let archiveName =
            (path.isRoot ? (folder.rootPath.split(separator: "/").last.map(String.init) ?? "share") : path.name)
        let body = ZipTree.body(folder: fd, prefix: path.isRoot ? "" : path.name + "/", core: core) {
            relative, kind in
            guard scope != .empty else { return false }
            let itemPath = relative.reduce(path) { $0.child($1) }
            guard policy.shows(itemPath) else { return false }
            return kind == .directory || policy.isAdmin || policy.right(at: itemPath.components).canRead
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/zip", .contentDisposition: FileResponses.attachment(archiveName + ".zip"),
                .cacheControl: "no-store",
            ],
            body: body)
    }
}
