import Logging
import ChangeLog
import FileWatching
import Hummingbird
import ServiceLifecycle
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

extension ShareServer {
    /// The routes of the page and the JSON API.
    func makeRouter() -> Router<ShareContext> {
        let router = Router(context: ShareContext.self)
        router.add(middleware: ErrorMiddleware())
        if let credentials = configuration.credentials {
            router.add(middleware: AuthMiddleware(user: credentials.user, password: credentials.password))
        }
        if configuration.readOnly { router.add(middleware: ReadOnlyMiddleware()) }
        router.add(middleware: WebDAVMiddleware(server: self))

        router.get("/") { _, _ in ShareServer.asset(WebAssets.html, type: "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in ShareServer.asset(WebAssets.javaScript, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in ShareServer.asset(WebAssets.css, type: "text/css; charset=utf-8") }

        router.get("/api/info") { _, _ in self.info() }
        router.get("/api/list") { request, _ in try await self.list(request) }
        router.get("/api/files/**") { request, context in try await self.download(request, context: context, head: false) }
        router.head("/api/files/**") { request, context in try await self.download(request, context: context, head: true) }
        router.put("/api/files/**") { request, context in try await self.upload(request, context: context) }
        router.delete("/api/files/**") { request, context in try await self.delete(request, context: context) }
        router.post("/api/mkdir") { request, context in try await self.makeDirectory(request, context: context) }
        router.post("/api/move") { request, context in try await self.move(request, context: context) }
        router.get("/api/thumbnail/**") { request, context in try await self.thumbnail(request, context: context) }
        router.get("/api/events") { request, _ in
            let cursor = try self.changeStream.startCursor(
                lastEventID: request.headers[.init("Last-Event-ID")!], since: try ShareServer.query(request, "since"))
            return self.changeStream.events(after: cursor)
        }
        router.get("/api/changes") { request, _ in
            try await self.changeStream.changes(
                since: try ShareServer.query(request, "since"), limit: try ShareServer.query(request, "limit"))
        }
        router.get("/api/zip") { request, context in try await self.zip(request, context: context) }
        router.post("/api/uploads") { request, context in try await self.startUpload(request, context: context) }
        router.patch("/api/uploads/:token") { request, context in try await self.continueUpload(request, context: context) }
        router.head("/api/uploads/:token") { _, context in try await self.uploadStatus(context: context) }
        router.delete("/api/uploads/:token") { _, context in try await self.cancelUpload(context: context) }
        router.get("/api/openapi.json") { _, _ in ShareServer.asset(OpenAPIDocument.json, type: "application/json") }
        return router
    }

    static func asset(_ text: String, type: String) -> Response {
        var buffer = ByteBuffer()
        buffer.writeString(text)
        return Response(
            status: .ok,
            headers: [.contentType: type, .contentLength: String(buffer.readableBytes), .cacheControl: "no-cache",
                      .init("X-Content-Type-Options")!: "nosniff"],
            body: ResponseBody(byteBuffer: buffer))
    }

    // MARK: Paths

    /// The shared path after `/api/files/` (or another prefix) in the raw URL path.
    static func path(of request: Request, after prefix: String) throws(ShareError) -> SharePath {
        let raw = request.uri.path
        guard raw.hasPrefix(prefix) else { return .root }
        return try SharePath(percentEncoded: raw.dropFirst(prefix.count))
    }

    /// A query parameter, percent-decoded (`+` is kept as it is).
    static func query(_ request: Request, _ name: String) throws(ShareError) -> String? {
        guard let query = request.uri.query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first == Substring(name) else { continue }
            let value = parts.count > 1 ? parts[1] : ""
            let bytes = try SharePath.percentDecode(value)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ShareError(.badRequest, "the \(name) parameter is not valid UTF-8")
            }
            return text
        }
        return nil
    }

    /// Runs blocking file-system work off the event loops.
    func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(ShareError) -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive {
            do { return try work() } catch let error as ShareError { throw error }
        }
    }

    /// Runs a change with its origin registered, and waits until the observer
    /// has delivered what it caused (so the events carry the origin, and a
    /// listing right after shows it).
    func change<T: Sendable>(
        _ paths: [SharePath], method: String, context: ShareContext,
        _ work: @escaping @Sendable () throws(ShareError) -> T
    ) async throws -> T {
        try refuseIfLocked(paths)
        return try await change(paths, origin: ChangeOrigin(face: "api", client: context.client, user: context.user, method: method), work)
    }

    /// Runs a change made on behalf of `origin` (see the other `change`).
    func change<T: Sendable>(
        _ paths: [SharePath], origin: ChangeOrigin, _ work: @escaping @Sendable () throws(ShareError) -> T
    ) async throws -> T {
        let key = origins.begin(paths.map(\.itemPath), origin)
        defer { origins.finish(key) }
        let result = try await blocking(work)
        await observer.sync()
        // Durable in the log before the answer: a client that asks
        // /api/changes next finds its own change.
        do {
            try await changeLog.flush()
        } catch {
            logger.error("the change log is behind", metadata: ["error": "\(error.message)"])
        }
        return result
    }

    /// 423 when a WebDAV client holds a lock on one of `paths` (or under
    /// one): the page and the JSON API respect WebDAV locks too.
    func refuseIfLocked(_ paths: [SharePath]) throws(ShareError) {
        for path in paths {
            if let lock = dav.locks(coveringOrUnder: path).first {
                throw ShareError(.locked, "'\(lock.root)' is locked by a WebDAV client for \(lock.timeout) seconds at most; try again later")
            }
        }
    }

    // MARK: Info and listing

    func info() -> Response {
        let name = folder.rootPath.split(separator: "/").last.map(String.init) ?? "/"
        var body = "{\"name\":\(JSONText.quoted(name)),\"readOnly\":\(configuration.readOnly),"
            + "\"maxUploadBytes\":\(configuration.maxUploadBytes ?? 0),\"resumableChunkBytes\":\(ResumableUploads.chunkBytes)"
        // Only when uploads are limited: no "acceptedTypes" means every type.
        if let uploadTypes {
            body += ",\"acceptedTypes\":[" + uploadTypes.identifiers.map(JSONText.quoted).joined(separator: ",") + "]"
        }
        return .json(status: .ok, body: body + "}")
    }

    func list(_ request: Request) async throws -> Response {
        let path = try SharePath(plain: try ShareServer.query(request, "path") ?? "")
        // Through the disk first: a link that leads out, or a missing folder, answers as it should.
        let metadata = try await blocking { () throws(ShareError) in try self.folder.metadata(path) }
        guard metadata.kind == .directory else { throw ShareError(.notFound, "'\(path)' is a file, not a folder") }
        guard let items = observer.children(of: path.itemPath) else {
            throw ShareError(.notFound, "'\(path)': no such folder")
        }
        var json = JSONBytes(capacity: 64 + items.count * 180)
        json.raw("{\"path\":")
        json.string(path.description)
        json.raw(",\"items\":[")
        for (index, item) in items.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"name\":")
            json.string(item.name)
            json.raw(",\"path\":")
            json.string(item.path.description)
            switch item.kind {
            case .file: json.raw(",\"kind\":\"file\"")
            case .directory: json.raw(",\"kind\":\"directory\"")
            case .symlink: json.raw(",\"kind\":\"symlink\"")
            case .other: json.raw(",\"kind\":\"other\"")
            }
            json.raw(",\"size\":")
            json.integer(item.kind == .directory ? 0 : item.size)
            json.raw(",\"modified\":")
            json.time(nanoseconds: item.modificationTime)
            json.raw(",\"id\":")
            json.string(item.id.description)
            if let count = item.childCount {
                json.raw(",\"childCount\":")
                json.integer(Int64(count))
            }
            if item.kind == .file {
                json.raw(",\"writing\":")
                json.bool(item.isWriting)
            }
            json.raw("}")
        }
        json.raw("]}")
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(json.bytes.count),
                      .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.bytes)))
    }

    // MARK: Changes

    func delete(_ request: Request, context: ShareContext) async throws -> Response {
        let path = try ShareServer.path(of: request, after: "/api/files/")
        try await change([path], method: "DELETE", context: context) { () throws(ShareError) in try self.folder.remove(path) }
        return Response(status: .noContent)
    }

    struct PathBody: Decodable { var path: String }
    struct MoveBody: Decodable {
        var from: String
        var to: String
        var overwrite: Bool?
    }

    func makeDirectory(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: PathBody.self, context: context)
        let path = try SharePath(plain: body.path)
        try await change([path], method: "POST", context: context) { () throws(ShareError) in try self.folder.makeDirectory(path) }
        return .json(status: .created, body: "{\"path\":\(JSONText.quoted(path.description))}")
    }

    func move(_ request: Request, context: ShareContext) async throws -> Response {
        let body = try await request.decode(as: MoveBody.self, context: context)
        let from = try SharePath(plain: body.from)
        let to = try SharePath(plain: body.to)
        try await change([from, to], method: "POST", context: context) { () throws(ShareError) in
            try self.folder.move(from: from, to: to, overwrite: body.overwrite ?? false)
        }
        return .json(status: .ok, body: "{\"from\":\(JSONText.quoted(from.description)),\"to\":\(JSONText.quoted(to.description))}")
    }
}

/// HTTP dates (RFC 9110, IMF-fixdate), formatted and parsed.
enum HTTPDate {
    /// A time as an HTTP date.
    static func format(nanoseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        CivilTime(nanoseconds: nanoseconds).writeHTTPDate(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); `nil` when it is not one.
    static func parse(_ text: String) -> Int64? {
        let fields = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard fields.count == 6, fields[5] == "GMT", let day = Int32(fields[1]),
            let month = months.firstIndex(of: String(fields[2])), let year = Int32(fields[3])
        else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3 else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = clock[0]
        parts.tm_min = clock[1]
        parts.tm_sec = clock[2]
        return Int64(timegm(&parts)) * 1_000_000_000
    }
}
