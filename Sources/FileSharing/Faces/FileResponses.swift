import CFileshareShim
import FileWatching
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import Previews

#if canImport(Glibc)
    import Glibc
#endif

extension APIFace {
    /// `GET /api/files/P`: the file, with ranges, validators and conditional requests.
    func download(_ request: Request, head: Bool) async throws -> Response {
        try await FileResponses.download(
            APIRequest.path(of: request, after: "/api/files/"), request: request, head: head, core: core)
    }

    /// `GET /api/thumbnail/P`: see `FileResponses.thumbnail`.
    func thumbnail(_ request: Request) async throws -> Response {
        try await FileResponses.thumbnail(
            APIRequest.path(of: request, after: "/api/thumbnail/"), request: request, core: core)
    }
}

/// The answers that send a file's content, for the JSON API and WebDAV alike.
enum FileResponses {
    /// Sends the file at `path`, with ranges, validators and conditional requests.
    static func download(_ path: SharePath, request: Request, head: Bool, core: ShareCore) async throws -> Response {
        try core.authorize(.read, path)
        let folder = core.folder
        return try await send(
            named: path.name, path: path, request: request, head: head, core: core,
            notFile: "'\(path)' is a folder; list it with /api/list or download it with /api/zip",
            open: { try folder.open(path, flags: O_RDONLY | O_NONBLOCK) },
            openCached: { try folder.openCached(path, flags: O_RDONLY | O_NONBLOCK) })
    }

    /// Sends the file `open` opens (a shared file, or a kept version), as a
    /// file called `name`, with ranges, validators and conditional requests.
    /// - Parameters:
    ///   - path: The shared path it is about (for errors).
    ///   - notFile: The 404's message when what is opened is not a file.
    ///   - open: Opens the file (blocking).
    ///   - openCached: Opens it without waiting on the disk, or says it
    ///     would wait (see ``opened(_:wantContent:open:openCached:)``).
    static func send(
        named name: String, path: SharePath, request: Request, head: Bool, core: ShareCore, notFile: String,
        open: @escaping @Sendable () throws -> Int32, openCached: (() throws -> Int32?)? = nil
    ) async throws -> Response {
        // A small file is read with its open and stat: in one trip to the
        // thread pool at most, and none when the kernel has it cached. Not
        // when the answer will likely be 304 or has no body.
        let (fd, metadata, content) = try await FileResponses.opened(
            path, wantContent: wantsContent(head: head, request: request.headers), open: open,
            openCached: openCached
        ).parts
        var closeHere = true
        defer { if closeHere { close(fd) } }
        guard metadata.kind == .file else { throw ShareError(.notFound, notFile) }
        let download = (try? APIRequest.query(request, "download")) ?? nil != nil
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let start: Int64
        let length: Int64
        switch plan(named: name, request: request.headers, download: download, metadata: metadata) {
        case .notModified(let fields):
            return Response(status: .notModified, headers: fields.httpFields)
        case .unsatisfiable(let size):
            var response = Response.json(
                status: .rangeNotSatisfiable, error: "the range is outside the file (\(size) bytes)")
            response.headers[.contentRange] = "bytes */\(size)"
            return response
        case .send(let planned, let fields, let from, let count):
            (status, headers, start, length) = (planned, fields.httpFields, from, count)
        }
        if head || length == 0 { return Response(status: status, headers: headers) }
        if let content {
            let slice = content.getSlice(at: Int(start), length: Int(length)) ?? content
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: slice))
        }
        closeHere = false
        let body = ResponseBody(contentLength: Int(length)) { writer in
            defer { close(fd) }
            // The next chunk is read while the current one is written.
            let chunk = 512 * 1024
            let end = start + length
            func read(at offset: Int64) -> Task<ByteBuffer, any Error> {
                let count = Int(min(Int64(chunk), end - offset))
                return Task {
                    try await core.blocking { () throws -> ByteBuffer in
                        var buffer = ByteBufferAllocator().buffer(capacity: count)
                        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                            max(0, cfs_pread(fd, raw.baseAddress!, count, offset))
                        }
                        if read == 0 { throw ShareError(.internalError, "the file shrank while it was sent") }
                        return buffer
                    }
                }
            }
            var offset = start
            var next: Task<ByteBuffer, any Error>? = read(at: offset)
            do {
                while let pending = next {
                    let buffer = try await pending.value
                    offset += Int64(buffer.readableBytes)
                    next = offset < end ? read(at: offset) : nil
                    try await writer.write(buffer)
                }
            } catch {
                // A read still running must end before the descriptor closes
                // (the client went away, or the file shrank).
                _ = try? await next?.value
                throw error
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// What a GET or HEAD of a file answers, from the request's fields and
    /// the file's metadata alone: validators, conditional requests (RFC
    /// 9110 section 13) and ranges. The one place both the routed answer
    /// (``send(named:path:request:head:core:notFile:open:openCached:)``)
    /// and the event loop's own (`SmallReads`) work it out.
    static func plan(
        named name: String, request: HTTPFields, download: Bool, metadata: SharedFolder.Metadata
    ) -> DownloadPlan {
        plan(
            request: request, metadata: metadata, base: baseFields(named: name, download: download, metadata: metadata))
    }

    /// The fields every answer to the file `name` with `metadata` has (no
    /// length or range yet): its validator, date, type and disposition.
    static func baseFields(named name: String, download: Bool, metadata: SharedFolder.Metadata) -> FileAnswerFields {
        FileAnswerFields(
            entityTag: metadata.entityTag, modified: metadata.modified, mediaType: FileResponses.mediaType(for: name),
            disposition: download ? FileResponses.attachment(name) : nil)
    }

    /// The plan of ``plan(named:request:download:metadata:)`` from the
    /// file's ``baseFields(named:download:metadata:)``, made earlier (`KeptFileHeads`).
    static func plan(request: HTTPFields, metadata: SharedFolder.Metadata, base: FileAnswerFields) -> DownloadPlan {
        let etag = base.entityTag
        var fields = base
        if let match = request.value(of: .ifNoneMatch) {
            if FileResponses.matches(ifNoneMatch: match, entityTag: etag) {
                return .notModified(fields)
            }
        } else if let since = request.value(of: .ifModifiedSince).flatMap(HTTPDate.parse),
            metadata.modified / 1_000_000_000 * 1_000_000_000 <= since
        {
            return .notModified(fields)
        }
        var range: ClosedRange<Int64>? = nil
        if let header = request.value(of: .range), metadata.size > 0 {
            let ifRange = request.value(of: .ifRange)
            if ifRange == nil || ifRange == etag {
                switch FileResponses.parseRange(header, size: metadata.size) {
                case .none: break
                case .some(.none): return .unsatisfiable(size: metadata.size)
                case .some(.some(let value)): range = value
                }
            }
        }
        let start = range?.lowerBound ?? 0
        let length = range.map { $0.upperBound - $0.lowerBound + 1 } ?? metadata.size
        fields.contentLength = length
        if let range { fields.contentRange = (range.lowerBound, range.upperBound, metadata.size) }
        return .send(status: range == nil ? .ok : .partialContent, fields: fields, start: start, length: length)
    }

    /// The policy every file is answered with: nothing in it runs, nothing
    /// is fetched from elsewhere.
    static let contentSecurityPolicy =
        "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'"

    /// What ``plan(named:request:download:metadata:)`` decided.
    enum DownloadPlan {
        /// 304, with these fields.
        case notModified(FileAnswerFields)
        /// 416: the range is outside the file of this size.
        case unsatisfiable(size: Int64)
        /// 200 or 206: these fields, and `length` bytes from `start` (none for HEAD).
        case send(status: HTTPResponse.Status, fields: FileAnswerFields, start: Int64, length: Int64)
    }

    /// `GET /api/thumbnail/P`: a small image for the list. Images, comics
    /// and books are decoded with the image libraries this machine has
    /// (`ImageThumbnailer`), PDFs, videos and audio covers made by programs
    /// (`ExternalThumbnailer`), kept by id and version in the cache
    /// (`ShareCore.thumbnail`); anything else, a kind whose library or
    /// program is missing, a file still being written, and a file that
    /// fails, answer 415 (the page shows an icon).
    static func thumbnail(_ path: SharePath, request: Request, core: ShareCore) async throws -> Response {
        try core.authorize(.read, path)
        let made: MadeThumbnail?
        do {
            made = try await core.thumbnail(of: path, priority: .request)
        } catch let error as ThumbnailError {
            switch error.reason {
            case .failed, .timedOut, .noImage, .tooCostly:
                throw ShareError(.unsupportedMediaType, "no thumbnail: \(error.message)")
            case .tookTooLong:
                throw ShareError(.serviceUnavailable, "no thumbnail yet: \(error.message)")
            default: throw ShareError(.unsupportedMediaType, error.message)
            }
        }
        guard let made else { throw ShareError(.internalError, "the thumbnail was not read") }
        return Response(
            status: .ok,
            headers: [
                .contentType: made.contentType, .contentLength: String(made.bytes.count),
                .cacheControl: "private, max-age=60", .xContentTypeOptions: "nosniff",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: made.bytes)))
    }

    /// A single byte range (`bytes=a-b`, `bytes=a-`, `bytes=-n`): `nil` to
    /// ignore the header (malformed, or several ranges: the whole file is
    /// sent), `.some(nil)` when it cannot be satisfied.
    static func parseRange(_ header: String, size: Int64) -> ClosedRange<Int64>?? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters()
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let suffix = Int64(parts[1]), suffix > 0 else { return nil }
            return .some(max(0, size - suffix)...(size - 1))
        }
        guard let first = Int64(parts[0]), first >= 0 else { return nil }
        guard first < size else { return .some(nil) }
        if parts[1].isEmpty { return .some(first...(size - 1)) }
        guard let last = Int64(parts[1]), last >= first else { return nil }
        return .some(first...min(last, size - 1))
    }

    static func attachment(_ name: String) -> String {
        let ascii = String(
            name.unicodeScalars.map { $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 0x20 ? Character($0) : "_" }
        )
        let encoded = name.utf8.map { byte -> String in
            let allowed =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            return allowed ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
        }.joined()
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }

    /// The media type a file is answered with, by its name's extension.
    static func mediaType(for name: String) -> String {
        mediaTypes[FileResponses.nameExtension(name)] ?? "application/octet-stream"
    }

    /// One look-up per answer, where a `switch` compared the extension with
    /// each case in turn.
    private static let mediaTypes: [String: String] = {
        var types: [String: String] = [:]
        for (extensions, type) in [
            (["txt", "log", "csv", "md", "markdown"], "text/plain; charset=utf-8"),
            (["html", "htm"], "text/html; charset=utf-8"), (["json"], "application/json"),
            (["pdf"], "application/pdf"), (["png"], "image/png"), (["jpg", "jpeg"], "image/jpeg"),
            (["gif"], "image/gif"), (["webp"], "image/webp"), (["svg"], "image/svg+xml"), (["heic"], "image/heic"),
            (["heif"], "image/heif"), (["mp3"], "audio/mpeg"), (["m4a"], "audio/mp4"), (["wav"], "audio/wav"),
            (["ogg", "oga"], "audio/ogg"), (["flac"], "audio/flac"), (["mp4", "m4v"], "video/mp4"),
            (["webm"], "video/webm"), (["mov"], "video/quicktime"), (["mkv"], "video/x-matroska"),
            (["zip"], "application/zip"), (["epub"], "application/epub+zip"),
            (["cbz"], "application/vnd.comicbook+zip"),
        ] {
            for name in extensions { types[name] = type }
        }
        return types
    }()
}

extension HTTPField.Name {
    /// `nosniff`: a browser takes the type given, never one it guesses.
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}

extension FileResponses {
    /// The lowercased text after a name's last dot, when something other
    /// than dots comes before it: `""` for `.bashrc`, `README` and `a.`;
    /// trailing dots are ignored (`a.b.` is `b`).
    static func nameExtension(_ name: String) -> String {
        if let ascii = asciiNameExtension(name) { return ascii }
        var rest = Substring(name)
        while rest.last == "." { rest.removeLast() }
        guard let dot = rest.lastIndex(of: "."), rest[..<dot].contains(where: { $0 != "." }) else { return "" }
        return rest[rest.index(after: dot)...].lowercased()
    }

    /// ``nameExtension(_:)`` of an ASCII name, worked out on its bytes (where
    /// each byte is a Character, so the answer is the same); `nil` for any
    /// other name. Every answered file asks for its type by it.
    static func asciiNameExtension(_ name: String) -> String? {
        name.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard let range = asciiExtensionRange(bytes) else { return nil }
            let found = bytes[range]
            return String(unsafeUninitializedCapacity: found.count) { out in
                for (index, byte) in found.enumerated() {
                    out[index] = byte.lowercasedASCII
                }
                return found.count
            }
        } ?? nil
    }

    /// Where ``nameExtension(_:)``'s answer lies in an ASCII name's bytes
    /// (before it is lowercased): an empty range for a name without one,
    /// `nil` for a name with any other byte.
    static func asciiExtensionRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        let dot = UInt8(ascii: ".")
        guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
        var end = bytes.count
        while end > 0, bytes[end - 1] == dot { end -= 1 }
        guard let at = bytes[..<end].lastIndex(of: dot), bytes[..<at].contains(where: { $0 != dot }) else {
            return 0..<0
        }
        return (at + 1)..<end
    }

    /// A name's extension packed into an integer with its length, as its
    /// bytes are (not lowercased): a key to remember something per extension
    /// (a listing, whether files of a type get thumbnails) without making a
    /// string per name. Names with one key have one ``nameExtension(_:)``.
    /// `nil` for a name that is not ASCII, or an extension longer than 7 bytes.
    static func extensionKey(ofName name: ArraySlice<UInt8>) -> UInt64? {
        name.withContiguousStorageIfAvailable { bytes -> UInt64? in
            guard let range = asciiExtensionRange(bytes), range.count <= 7 else { return nil }
            var key = UInt64(range.count) << 56
            for (offset, byte) in bytes[range].enumerated() { key |= UInt64(byte) << (UInt64(offset) * 8) }
            return key
        } ?? nil
    }
}

extension FileResponses {
    /// Whether an `If-None-Match` value names `entityTag`: `*`, or one of its
    /// comma-separated tags (spaces and tabs around each) is the tag or its
    /// weak form. On the bytes: splitting the value and trimming each part
    /// made strings on every conditional GET.
    static func matches(ifNoneMatch value: String, entityTag: String) -> Bool {
        if value == "*" { return true }
        var value = value
        var entityTag = entityTag
        return value.withUTF8 { list in
            entityTag.withUTF8 { tag in
                var start = 0
                while start <= list.count {
                    var end = start
                    while end < list.count, list[end] != UInt8(ascii: ",") { end += 1 }
                    var first = start
                    var last = end
                    while first < last, list[first] == 0x20 || list[first] == 0x09 { first += 1 }
                    while last > first, list[last - 1] == 0x20 || list[last - 1] == 0x09 { last -= 1 }
                    var element = UnsafeBufferPointer(rebasing: list[first..<last])
                    if element.elementsEqual(tag) { return true }
                    if element.count == tag.count + 2, element[0] == UInt8(ascii: "W"), element[1] == UInt8(ascii: "/")
                    {
                        element = UnsafeBufferPointer(rebasing: element[2...])
                        if element.elementsEqual(tag) { return true }
                    }
                    start = end + 1
                }
                return false
            }
        }
    }
}

extension StringProtocol {
    /// Without the spaces and tabs at either end (HTTP's optional whitespace).
    /// On the UTF-8 bytes, both being ASCII: it runs on header fields of
    /// every request, and walked as Characters (forwards, then reversed into
    /// a new string) it was 11 % of a small GET's time with credentials.
    func trimmingCharacters() -> String {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
        var end = first
        var index = first
        while index != bytes.endIndex {
            if bytes[index] != 0x20 && bytes[index] != 0x09 { end = bytes.index(after: index) }
            bytes.formIndex(after: &index)
        }
        return String(decoding: bytes[first..<end], as: UTF8.self)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
