import CFileshareShim
import FileWatching
import HTTPTypes
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// A file opened to be sent: its descriptor (the sender closes it), its
/// metadata, and its bytes when it is small and wanted whole.
struct OpenedFile: Sendable {
    var fd: Int32
    var metadata: SharedFolder.Metadata
    /// The whole file, read with its open; `nil` when it is sent as it is read.
    var content: ByteBuffer?

    var parts: (Int32, SharedFolder.Metadata, ByteBuffer?) { (fd, metadata, content) }
}

extension FileResponses {
    /// Files up to this size are read whole with their open and stat.
    static let smallFileBytes: Int64 = 256 * 1024

    /// Opens the file to send, reads its metadata and, when `wantContent`
    /// and it is small, its bytes.
    ///
    /// Where the kernel has it all cached (the names on the way and the
    /// bytes), this is done right here without a trip to the thread pool:
    /// `openCached` and `preadv2(RWF_NOWAIT)` answer from the caches or say
    /// they would wait, and only then is the work taken to the pool, so an
    /// event loop never waits on the disk. A small GET, `HEAD` or `304` of a
    /// file read recently costs no thread hop at all.
    /// - Parameters:
    ///   - open: Opens the file (blocking; run in the pool).
    ///   - openCached: Opens it when that needs no wait on the disk, `nil`
    ///     when it would wait; `nil` for a file with no such way to open it.
    static func opened(
        _ path: SharePath, wantContent: Bool, open: @escaping @Sendable () throws -> Int32,
        openCached: (() throws -> Int32?)?
    ) async throws -> OpenedFile {
        if let openCached,
            let (file, contentWaits) = try openedWithoutWaiting(
                path, wantContent: wantContent, openCached: openCached)
        {
            guard contentWaits else { return file }
            let (fd, size) = (file.fd, Int(file.metadata.size))
            let content = await runBlocking { FileResponses.readWhole(fd, size: size) }
            return OpenedFile(fd: fd, metadata: file.metadata, content: content)
        }
        return try await runBlocking {
            let fd = try open()
            do throws(FolderError) {
                let metadata = try SharedFolder.metadata(fd: fd, path: path)
                guard wantContent, metadata.kind == .file, metadata.size <= FileResponses.smallFileBytes else {
                    return OpenedFile(fd: fd, metadata: metadata, content: nil)
                }
                return OpenedFile(
                    fd: fd, metadata: metadata, content: FileResponses.readWhole(fd, size: Int(metadata.size)))
            } catch {
                close(fd)
                throw error
            }
        }
    }

    /// The file opened and stat'ed without waiting on the disk and, when
    /// `wantContent` and it is small, read from the page cache; `nil` when
    /// opening would wait. `contentWaits`: its bytes are wanted but not all
    /// cached (it is open: read them the waiting way). The routed answer
    /// (``opened(_:wantContent:open:openCached:)``) and the event loop's
    /// own (`SmallReads`) both start here. `headroom`: bytes left free
    /// before the content, for a head written in front of it (``readCached(_:size:headroom:)``).
    static func openedWithoutWaiting(
        _ path: SharePath, wantContent: Bool, headroom: Int = 0, openCached: () throws -> Int32?
    ) throws -> (file: OpenedFile, contentWaits: Bool)? {
        guard let fd = try openCached() else { return nil }
        do {
            let metadata = try SharedFolder.metadata(fd: fd, path: path)
            guard wantContent, metadata.kind == .file, metadata.size <= smallFileBytes else {
                return (OpenedFile(fd: fd, metadata: metadata, content: nil), false)
            }
            switch readCached(fd, size: Int(metadata.size), headroom: headroom) {
            case .whole(let content): return (OpenedFile(fd: fd, metadata: metadata, content: content), false)
            case .changed: return (OpenedFile(fd: fd, metadata: metadata, content: nil), false)
            case .wouldWait: return (OpenedFile(fd: fd, metadata: metadata, content: nil), true)
            }
        } catch {
            close(fd)
            throw error
        }
    }

    /// Whether a GET or HEAD wants the file's bytes read with its open:
    /// not for `HEAD`, nor when the answer will likely be `304`.
    static func wantsContent(head: Bool, request: HTTPFields) -> Bool {
        !head && !request.contains(.ifNoneMatch) && !request.contains(.ifModifiedSince)
    }

    /// What a read from the page cache alone gave.
    enum CachedRead {
        /// The whole file, as its stat said.
        case whole(ByteBuffer)
        /// More than its stat said: it grew since (it is sent as it is read).
        case changed
        /// Not all of it is cached (or it shrank, or the read failed): read it the waiting way.
        case wouldWait
    }

    /// The whole file of `size` bytes if the page cache holds it (`preadv2(RWF_NOWAIT)`: never waits on the disk).
    ///
    /// With `headroom`, the buffer keeps that many bytes free before the
    /// content (its reader index): an answer's head written there makes the
    /// answer without copying the content (`SmallReadLane.bytes(of:scratch:allocator:)`).
    static func readCached(_ fd: Int32, size: Int, headroom: Int = 0) -> CachedRead {
        var buffer = ByteBufferAllocator().buffer(capacity: headroom + size + 1)
        if headroom > 0 {
            buffer.moveWriterIndex(to: headroom)
            buffer.moveReaderIndex(to: headroom)
        }
        var result = 0
        _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size + 1) { raw in
            result = cfs_pread_cached(fd, raw.baseAddress!, size + 1, 0)
            return max(0, result)
        }
        if result == size { return .whole(buffer) }
        return result == size + 1 ? .changed : .wouldWait
    }

    /// The whole file of `size` bytes; `nil` when it is not that size any
    /// more (it changed since its stat: then it is sent as it is read).
    static func readWhole(_ fd: Int32, size: Int) -> ByteBuffer? {
        var buffer = ByteBufferAllocator().buffer(capacity: size + 1)
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size + 1) { raw in
            max(0, cfs_pread(fd, raw.baseAddress!, size + 1, 0))
        }
        return read == size ? buffer : nil
    }
}
