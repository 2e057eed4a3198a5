import FileWatching
import Logging
import Previews

#if canImport(Glibc)
    import Glibc
#endif

/// A thumbnail ready to send: its bytes and their media type.
struct MadeThumbnail: Sendable {
    var bytes: [UInt8]
    var contentType: String
}

/// What makes the thumbnails of one kind of file on this server.
enum ThumbnailMaker: Sendable {
    /// An image, a comic or a book, decoded in the process (a JPEG).
    case image(ImageThumbnailer, ImageKind)
    /// A PDF, a video or an audio file's cover, made by a program (a PNG).
    case program(ExternalThumbnailer, ThumbnailKind)

    /// The cache's extension for what it makes.
    var format: String {
        switch self {
        case .image: "jpg"
        case .program: "png"
        }
    }

    var contentType: String {
        switch self {
        case .image: "image/jpeg"
        case .program: "image/png"
        }
    }

    func make(_ fd: Int32, priority: ThumbnailPriority) async throws(ThumbnailError) -> [UInt8] {
        switch self {
        case .image(let thumbnailer, let kind): try await thumbnailer.thumbnail(of: fd, kind: kind, priority: priority)
        case .program(let thumbnailer, let kind):
            try await thumbnailer.thumbnail(of: fd, kind: kind, priority: priority)
        }
    }
}

extension ShareCore {
    /// What makes thumbnails of a file called `name` here.
    /// - Throws: `ThumbnailError` (`notThisKind`, `libraryMissing`,
    ///   `programMissing`) when this server makes none.
    func thumbnailMaker(for name: String) throws(ThumbnailError) -> ThumbnailMaker {
        try thumbnailMaker(forType: FileResponses.mediaType(for: name))
    }

    /// What makes thumbnails of a file of this media type here: the same
    /// for every file of the type (the programs and libraries are found once).
    func thumbnailMaker(forType type: String) throws(ThumbnailError) -> ThumbnailMaker {
        if let kind = ThumbnailKind(mediaType: type) {
            guard let thumbnailer, thumbnailer.programs[kind] != nil else {
                throw ThumbnailError(
                    .programMissing,
                    "no thumbnail for this kind of file on this server (\(kind.program) is not installed)")
            }
            return .program(thumbnailer, kind)
        }
        if let kind = ImageKind(mediaType: type) {
            guard let imageThumbnailer, imageThumbnailer.mayMake(kind) else {
                throw ThumbnailError(
                    .libraryMissing,
                    "no thumbnail for this kind of file on this server (its library, Debian's \(kind.package), is not installed)"
                )
            }
            return .image(imageThumbnailer, kind)
        }
        throw ThumbnailError(.notThisKind, "no thumbnail for this kind of file")
    }

    /// The thumbnail of the file at `path`, kept by id and version in the
    /// cache: read from it, or made once the file is finished, and kept.
    /// - Parameters:
    ///   - priority: A request's thumbnail is made before those made ahead.
    ///   - reading: Whether a kept thumbnail is read (`false`: made ahead,
    ///     one already kept is left as it is and `nil` comes back).
    /// - Throws: `ThumbnailError` when there is none (the faces' icon),
    ///   `FolderError` when the file cannot be opened.
    func thumbnail(of path: SharePath, priority: ThumbnailPriority, reading: Bool = true) async throws
        -> MadeThumbnail?
    {
        let maker = try thumbnailMaker(for: path.name)
        guard let cache = thumbnails else { throw ThumbnailError(.notThisKind, "no thumbnails on this server") }
        guard let item = observer.item(at: path.itemPath) else {
            throw FolderError(.notFound, "'\(path)' does not exist", operation: .read, path: path)
        }
        // Never from a half-copied file: the observer knows when a copy has finished.
        guard !item.isWriting else {
            throw ThumbnailError(
                .unfinished, "'\(path)' is still being written; its thumbnail comes once it is finished")
        }
        let folder = self.folder
        let id = item.id.description
        let (fd, name, cached) = try await blocking { () throws -> (Int32, String, [UInt8]?) in
            let fd = try folder.open(path, flags: O_RDONLY | O_NONBLOCK)
            do throws(FolderError) {
                let metadata = try SharedFolder.metadata(fd: fd, path: path)
                guard metadata.kind == .file else {
                    throw FolderError(.isFolder, "'\(path)' is a folder", operation: .read, path: path)
                }
                let name = ThumbnailCache.name(
                    id: id, modified: metadata.modified, size: metadata.size, format: maker.format)
                if !reading { return (fd, name, cache.contains(named: name) ? [] : nil) }
                return (fd, name, cache.thumbnail(named: name))
            } catch {
                close(fd)
                throw error
            }
        }
        defer { close(fd) }
        if let cached { return reading ? MadeThumbnail(bytes: cached, contentType: maker.contentType) : nil }
        // One decode of a file at a time: a request for what is being made ahead waits for it.
        let core = self
        let image = try await thumbnailFlights.thumbnail(named: name) { () async throws(ThumbnailError) -> [UInt8] in
            let image = try await maker.make(fd, priority: priority)
            _ = try? await core.blocking { cache.keep(image, named: name, id: id) }
            return image
        }
        return MadeThumbnail(bytes: image, contentType: maker.contentType)
    }

    /// Queues, to be made ahead in the background, the thumbnails of the
    /// finished files among `items` (a folder just listed) that this server
    /// makes thumbnails of. Returns at once: what the queue cannot hold is
    /// dropped, and those are made when asked for.
    func makeThumbnailsAhead(of items: some Sequence<Item>) {
        guard let ahead = thumbnailsAhead else { return }
        var jobs: [ThumbnailsAhead.Job] = []
        // Whether this server makes thumbnails of a type, asked once per
        // type: a listing of 10,000 text files spent half its time asking
        // (and making an error) for each file.
        var thumbnailed: [String: Bool] = [:]
        // And by the extension's bytes, so most files need no string at all
        // (a sixth of a 10,000-file listing made one for each).
        var byExtension: [UInt64: Bool] = [:]
        for item in items where item.kind == .file && !item.isWriting {
            let key = FileResponses.extensionKey(ofName: item.path.nameBytes)
            let made: Bool
            if let key, let known = byExtension[key] {
                made = known
            } else {
                let type = FileResponses.mediaType(for: item.name)
                made =
                    thumbnailed[type]
                    ?? {
                        let made = (try? thumbnailMaker(forType: type)) != nil
                        thumbnailed[type] = made
                        return made
                    }()
                if let key { byExtension[key] = made }
            }
            guard made, let path = try? SharePath(plain: item.path.description) else { continue }
            jobs.append(.init(id: item.id, path: path))
        }
        guard !jobs.isEmpty else { return }
        ahead.offer(jobs) { path in
            do {
                _ = try await self.thumbnail(of: path, priority: .background, reading: false)
            } catch {
                self.logger.debug("no thumbnail ahead", metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
    }
}
