import CImageThumbnail
import FileWatching
public import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Makes thumbnails of images, comics and books in the server's process,
/// with image libraries loaded at run time (``ImageLibraries``): JPEG at
/// reduced DCT scale (the camera's embedded thumbnail first), PNG and GIF
/// row by row, WebP at the thumbnail's size, HEIF from its embedded
/// thumbnail or decoded whole up to 50 megapixels; a comic's cover or first
/// page and a book's declared cover, read from the ZIP with bounded reads.
/// Every result is a JPEG (quality 80) whose longer side is at most
/// ``size``, turned as its EXIF orientation says. Decoding runs on threads
/// of its own, at most ``concurrent`` at once: off the cooperative pool and
/// off the threads the server's disk work runs on (`runBlocking`), so a
/// burst of large images costs a bounded share of memory and cores and
/// never makes a listing wait.
///
/// Each decode is bounded: the file's headers are read first, and one that
/// declares more than its kind's budget (pixels, memory, a JPEG's scans and
/// decoding work) is refused before the library sees it (``ThumbnailError``,
/// `tooCostly`); PNG and GIF, read in rows, are given up at ``timeLimit``.
public struct ImageThumbnailer: Sendable {
    /// The thumbnail's longer side, in pixels, at most.
    public let size: Int
    /// The decodes at once, at most.
    public let concurrent: Int
    /// How much CPU time a PNG or GIF, read row by row, may take before it
    /// is given up (its icon), and six times it on the clock while its
    /// reads wait: a slow file holds a decode slot no longer, and a machine
    /// busy with other work does not turn a good file into an icon. The
    /// other kinds are one library call each, which cannot be stopped: their
    /// time is bounded by what their headers may declare (a JPEG's scans and
    /// decoding work, at most about a second of CPU; WebP's and HEIF's pixels).
    public let timeLimit: Duration
    let libraries: ImageLibraries
    /// Who decodes next: a request before what is made ahead.
    let pool: RunPool
    /// Where decodes run: ``concurrent`` threads of their own.
    let decoders: BlockingPool
    let logger: Logger

    /// A thumbnailer with the libraries this process finds.
    public init(
        size: Int = 256, concurrent: Int = 2, timeLimit: Duration = .seconds(10),
        logger: Logger = Logger(label: "fileshare.previews")
    ) {
        self.init(libraries: .shared, size: size, concurrent: concurrent, timeLimit: timeLimit, logger: logger)
    }

    /// A thumbnailer with these libraries (a test's, with some missing).
    package init(
        libraries: ImageLibraries, size: Int = 256, concurrent: Int = 2, timeLimit: Duration = .seconds(10),
        logger: Logger = Logger(label: "fileshare.previews")
    ) {
        self.libraries = libraries
        self.timeLimit = timeLimit
        self.size = max(1, size)
        self.concurrent = max(1, concurrent)
        self.pool = RunPool(limit: max(1, concurrent))
        self.decoders = BlockingPool(threads: max(1, concurrent))
        self.logger = logger
    }

    /// The kinds this machine can make thumbnails of.
    public var kinds: [ImageKind] { libraries.kinds }

    /// A JPEG thumbnail of the file open as `fd` (read from the start with
    /// positioned reads; the descriptor stays open), made on the decoding threads.
    /// - Parameter priority: A request's decode goes before those made ahead of time.
    /// - Throws: ``ThumbnailError``: `libraryMissing`, `failed` for a file
    ///   the library cannot decode (corrupt, truncated before its first
    ///   row), `tooCostly` for one over its budget, `timedOut` past the time
    ///   limit, `noImage` for an archive without a cover.
    public func thumbnail(of fd: Int32, kind: ImageKind, priority: ThumbnailPriority = .request)
        async throws(ThumbnailError) -> [UInt8]
    {
        await pool.acquire(priority)
        defer { Task { await pool.release() } }
        let result: Result<[UInt8], ThumbnailError> = await decoders.run {
            do throws(ThumbnailError) {
                return .success(try self.encoded(fd: fd, bytes: nil, kind: kind))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The thumbnail, as JPEG bytes: the camera's own when it needs no
    /// turning (no library needed), else decoded, turned and encoded.
    package func encoded(fd: Int32, bytes: [UInt8]?, kind: ImageKind) throws(ThumbnailError) -> [UInt8] {
        if kind == .jpeg {
            let head = ImageThumbnailer.head(fd: fd, bytes: bytes)
            if let embedded = ExifThumbnail.extract(from: head), (ExifThumbnail.orientation(from: head) ?? 1) == 1 {
                return embedded
            }
        }
        guard let jpeg = libraries.jpeg else { throw ThumbnailError(.libraryMissing, JPEGCodec.installHint) }
        let image = try self.image(fd: fd, bytes: bytes, kind: kind)
        guard let encoded = jpeg.encode(rgb: image.pixels, width: image.width, height: image.height, quality: 80)
        else { throw ThumbnailError(.failed, "the thumbnail could not be encoded") }
        return encoded
    }

    /// The start of the file, where a JPEG keeps its EXIF block.
    static func head(fd: Int32, bytes: [UInt8]?) -> [UInt8] {
        bytes.map { Array($0.prefix(ExifThumbnail.headerBytes)) }
            ?? ZipArchive.read(fd, at: 0, count: ExifThumbnail.headerBytes)
    }

    /// Whether a thumbnail of `kind` may be made here: a kind whose
    /// libraries are loaded, or a JPEG, whose camera's thumbnail needs none.
    public func mayMake(_ kind: ImageKind) -> Bool { kind == .jpeg || kinds.contains(kind) }

    /// What the image libraries missing here take away, and which packages
    /// add them: for a warning when the server starts; `nil` when none is missing.
    public var missingLibraries: String? {
        let missing = ImageKind.allCases.filter { !kinds.contains($0) }
        guard !missing.isEmpty else { return nil }
        let packages = Set(missing.map(\.package) + (libraries.jpeg == nil ? ["libturbojpeg0"] : []))
        return "no thumbnails of " + missing.map(\.rawValue).joined(separator: ", ")
            + " (Debian: apt-get install " + packages.sorted().joined(separator: " ") + "): "
            + libraries.missing.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
    }

    /// The thumbnail's pixels: at most ``size`` a side, as it is meant to be seen.
    package func image(fd: Int32, bytes: [UInt8]?, kind: ImageKind) throws(ThumbnailError) -> RGBImage {
        func missing(_ library: String) -> ThumbnailError {
            ThumbnailError(
                .libraryMissing, "\(kind) thumbnails need \(library) (Debian: apt-get install \(kind.package))")
        }
        func decoded(
            _ library: OpaquePointer?, _ name: String,
            _ decode: (OpaquePointer?, cit_input, Int32, UnsafeMutablePointer<cit_image>) -> Int32
        ) throws(ThumbnailError) -> (RGBImage, exif: [UInt8]?) {
            guard let library else { throw missing(name) }
            var out = cit_image()
            let (seconds, attoseconds) = timeLimit.components
            let limit = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            // The limit in CPU time, and a multiple of it on the wall clock (reads that wait, a loaded machine).
            let deadline = cit_now() + limit
            let wallDeadline = cit_wall_now() + limit * Int64(clockTimesCPULimit)
            let status: Int32
            if let bytes {
                status = bytes.withUnsafeBufferPointer {
                    decode(
                        library,
                        cit_input(
                            fd: -1, bytes: $0.baseAddress, size: $0.count, deadline: deadline,
                            wall_deadline: wallDeadline),
                        Int32(size), &out)
                }
            } else {
                let input = cit_input(fd: fd, bytes: nil, size: 0, deadline: deadline, wall_deadline: wallDeadline)
                status = decode(library, input, Int32(size), &out)
            }
            let exif = out.exif.map { Array(UnsafeBufferPointer(start: $0, count: out.exif_size)) }
            switch Int(status) {
            case CIT_MADE:
                guard let image = RGBImage(taking: &out) else { break }
                return (image, exif)
            case CIT_TOO_COSTLY:
                throw ImageThumbnailer.refusal(out, kind: kind)
            case CIT_TIMED_OUT:
                // The decode ran on this thread: its CPU time says which deadline passed.
                if cit_now() > deadline {
                    throw ThumbnailError(
                        .timedOut, "the \(kind.name) took more than \(timeLimit) of CPU time to decode")
                }
                throw ThumbnailError(
                    .tookTooLong,
                    "the \(kind.name) took more than \(timeLimit * clockTimesCPULimit) to decode, the machine being busy; it is tried again when next asked for"
                )
            default: break
            }
            cit_image_free(&out)
            throw ThumbnailError(.failed, "not a \(kind.name) image \(name) can decode")
        }
        switch kind {
        case .jpeg:
            guard let jpeg = libraries.jpeg else { throw missing("libturbojpeg") }
            guard let image = try jpeg.decode(fd: fd, bytes: bytes, maxSide: size).fitted(maxSide: size) else {
                throw ThumbnailError(.failed, "the JPEG could not be scaled")
            }
            return image.oriented(ExifThumbnail.orientation(from: ImageThumbnailer.head(fd: fd, bytes: bytes)) ?? 1)
        case .png:
            let (image, exif) = try decoded(libraries.png, "libpng16", cit_png_thumbnail)
            return image.oriented(exif.flatMap(ExifThumbnail.orientation(inTIFF:)) ?? 1)
        case .webp:
            return try decoded(libraries.webp, "libwebp", cit_webp_thumbnail).0
        case .gif:
            return try decoded(libraries.gif, "giflib", cit_gif_thumbnail).0
        case .heif:
            // libheif turns the image itself (irot, imir).
            return try decoded(libraries.heif, "libheif", cit_heif_thumbnail).0
        case .cbz, .epub:
            guard bytes == nil else { throw ThumbnailError(.noImage, "an archive inside an archive") }
            let (page, pageKind) = try cover(fd: fd, kind: kind)
            return try image(fd: -1, bytes: page, kind: pageKind)
        }
    }

    /// Why an image over its budget was refused, for a person: what it
    /// declares against the budget it went over.
    static func refusal(_ out: cit_image, kind: ImageKind) -> ThumbnailError {
        let size = "\(out.declared_width)×\(out.declared_height) pixels"
        if let refusal = out.refusal {
            return ThumbnailError(.tooCostly, "the \(kind.name) is refused: " + String(cString: refusal))
        }
        if out.declared_width < 0 {
            return ThumbnailError(.tooCostly, "the \(kind.name) declares a side longer than its library decodes")
        }
        if out.declared_width == 0 {
            return ThumbnailError(.tooCostly, "the \(kind.name) is larger than \(CIT_MAX_INPUT >> 20) MiB")
        }
        if out.declared_width * out.declared_height > CIT_MAX_STREAMED_PIXELS {
            return ThumbnailError(
                .tooCostly,
                "the \(kind.name) declares \(size), more than the \(CIT_MAX_STREAMED_PIXELS / 1_000_000) megapixels a thumbnail is made from"
            )
        }
        let budget = kind == .heif ? Int(CIT_MAX_HEIF_MEMORY) : Int(CIT_MAX_MEMORY)
        return ThumbnailError(
            .tooCostly,
            "decoding this \(kind.name) of \(size) would take \((Int(out.memory) + (1 << 20) - 1) >> 20) MiB, more than the \(budget >> 20) MiB a thumbnail may"
        )
    }

    /// The cover's bytes and kind: a comic's marked cover or first page, a
    /// book's declared cover.
    func cover(fd: Int32, kind: ImageKind) throws(ThumbnailError) -> ([UInt8], ImageKind) {
        let archive = try ZipArchive(fd: fd)
        // The small XML files that name the cover, at most 1 MiB each.
        func text(_ name: String) throws(ThumbnailError) -> String? {
            guard let entry = archive.entry(named: name) else { return nil }
            return String(decoding: try archive.data(of: entry, zlib: libraries.zlib, limit: 1 << 20), as: UTF8.self)
        }
        let name: String?
        if kind == .cbz {
            let pages = ArchiveCover.comicPages(archive.entries.map(\.name))
            let info = archive.entries.first { $0.name.lowercased() == "comicinfo.xml" }.map(\.name)
            name = ArchiveCover.comicCover(pages: pages, comicInfo: try info.flatMap(text))
        } else {
            guard let container = try text("META-INF/container.xml"),
                let packagePath = ArchiveCover.bookPackage(container: container),
                let package = try text(packagePath)
            else { throw ThumbnailError(.noImage, "the EPUB has no package document") }
            name = ArchiveCover.bookCover(package: package, packagePath: packagePath)
        }
        guard let name, let entry = archive.entry(named: name), let pageKind = ImageKind(fileName: name) else {
            throw ThumbnailError(.noImage, "the \(kind) has no cover image")
        }
        return (try archive.data(of: entry, zlib: libraries.zlib), pageKind)
    }
}
