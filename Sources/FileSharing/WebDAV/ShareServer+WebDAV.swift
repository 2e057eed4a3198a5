import ChangeLog
import CFileshareShim
import FileWatching
import Foundation
import Hummingbird
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// A WebDAV failure: a status, a message for a person, and where RFC 4918
/// names one, the precondition that failed (sent as a `DAV:error` body).
struct DAVError: Error, Sendable {
    var status: Int
    var message: String
    var condition: String? = nil
    var hrefs: [String] = []

    static func locked(_ lock: DAVLock, condition: String = "lock-token-submitted") -> DAVError {
        DAVError(
            status: 423, message: "'\(lock.root)' is locked; send its lock token in an If header",
            condition: condition, hrefs: [WebDAV.href(lock.root, collection: false)])
    }
}

/// The WebDAV face at `/dav/` (RFC 4918 class 1 and 2), on the same rules
/// as the rest of the server: authentication, read-only mode, hidden names
/// and path safety are applied before a request gets here or by `SharePath`
/// and `SharedFolder`.
struct WebDAVMiddleware: RouterMiddleware {
    typealias Context = ShareContext
    let server: ShareServer

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response) async throws
        -> Response
    {
        let path = request.uri.path
        // Office and Windows ask the server's root whether it speaks WebDAV.
        if path == "/" && request.method == .options { return WebDAV.optionsResponse() }
        guard path == WebDAV.prefixWithoutSlash || path.hasPrefix(WebDAV.prefix) else { return try await next(request, context) }
        do {
            return try await server.webDAV(request, context: context)
        } catch let error as DAVError {
            return WebDAV.errorResponse(error)
        } catch let error as ShareError {
            return WebDAV.errorResponse(DAVError(status: error.kind.rawValue, message: error.message))
        } catch let error as HTTPError {
            return WebDAV.errorResponse(DAVError(status: Int(error.status.code), message: error.body ?? error.status.reasonPhrase))
        }
    }
}

/// Names and helpers of the WebDAV face.
enum WebDAV {
    static let prefix = "/dav/"
    static let prefixWithoutSlash = "/dav"
    static let methods = "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, COPY, MOVE, PROPFIND, PROPPATCH, LOCK, UNLOCK"
    /// The largest XML body read (PROPFIND, PROPPATCH, LOCK): 413 above it.
    static let maximumBodyBytes = 1 << 20

    /// The shared path of a URL path under `/dav` (400 with a fragment); `nil` when it is not under `/dav`.
    static func path(ofURLPath raw: Substring) throws(ShareError) -> SharePath? {
        var raw = raw
        if raw.contains("#") {
            throw ShareError(.badRequest, "a URL with a fragment ('#'): clients never send one; a '#' in a name is written %23")
        }
        if let query = raw.firstIndex(of: "?") { raw = raw[..<query] }
        if raw == Substring(prefixWithoutSlash) { return .root }
        guard raw.hasPrefix(prefix) else { return nil }
        return try SharePath(percentEncoded: raw.dropFirst(prefix.count))
    }

    /// The shared path of a request: hidden names are not shared, so to a
    /// reader they do not exist (404; Finder probes many), to a writer they are 403.
    static func requestPath(_ raw: Substring, method: String) throws(ShareError) -> SharePath? {
        do {
            return try path(ofURLPath: raw)
        } catch {
            if error.kind == .forbidden && (method == "GET" || method == "HEAD" || method == "PROPFIND") {
                throw ShareError(.notFound, error.message)
            }
            throw error
        }
    }

    /// Splits an absolute URL (`http://host/dav/x`) into its authority and
    /// path; an absolute path has no authority.
    static func split(url: String) -> (authority: String?, path: Substring)? {
        if url.hasPrefix("/") { return (nil, Substring(url)) }
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return (String(rest), "/") }
        return (String(rest[..<slash]), rest[slash...])
    }

    /// The percent-encoded URL path of a shared path (folders end with `/`).
    static func href(_ path: SharePath, collection: Bool) -> String {
        var writer = XMLWriter(capacity: 256, declaration: false)
        writer.href(path, collection: collection)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func optionsResponse() -> Response {
        Response(status: .ok, headers: [
            .init("DAV")!: "1, 2", .allow: methods, .init("MS-Author-Via")!: "DAV", .contentLength: "0",
        ])
    }

    static func errorResponse(_ error: DAVError) -> Response {
        let status = HTTPResponse.Status(code: error.status)
        guard let condition = error.condition else {
            var buffer = ByteBuffer()
            buffer.writeString(error.message + "\n")
            return Response(
                status: status,
                headers: [.contentType: "text/plain; charset=utf-8", .contentLength: String(buffer.readableBytes)],
                body: ResponseBody(byteBuffer: buffer))
        }
        var writer = XMLWriter()
        writer.raw("<D:error xmlns:D=\"DAV:\"><D:" + condition + ">")
        for href in error.hrefs { writer.dav("href", href) }
        writer.raw("</D:" + condition + "><D:responsedescription>")
        writer.text(error.message)
        writer.raw("</D:responsedescription></D:error>\n")
        return xmlResponse(status: status, writer.bytes)
    }

    static func xmlResponse(status: HTTPResponse.Status, _ bytes: [UInt8]) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/xml; charset=utf-8", .contentLength: String(bytes.count)],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `Depth`: 0, 1 or infinity (`nil` when absent); 400 otherwise.
    static func depth(_ request: Request) throws(ShareError) -> Int? {
        guard let value = request.headers[.init("Depth")!] else { return nil }
        switch value.trimmingCharacters().lowercased() {
        case "0": return 0
        case "1": return 1
        case "infinity": return Int.max
        default: throw ShareError(.badRequest, "Depth must be 0, 1 or infinity, not '\(value)'")
        }
    }

    /// `Overwrite`: T (the default) or F.
    static func overwrite(_ request: Request) throws(ShareError) -> Bool {
        guard let value = request.headers[.init("Overwrite")!] else { return true }
        switch value.trimmingCharacters().uppercased() {
        case "T": return true
        case "F": return false
        default: throw ShareError(.badRequest, "Overwrite must be T or F, not '\(value)'")
        }
    }

    /// `Timeout`: the first acceptable `Second-N` or `Infinite`, capped.
    static func timeout(_ request: Request) -> Int64 {
        guard let value = request.headers[.init("Timeout")!] else { return DAVLockTable.defaultTimeout }
        for part in value.split(separator: ",") {
            let text = part.trimmingCharacters()
            if text.lowercased() == "infinite" { return DAVLockTable.maximumTimeout }
            if text.lowercased().hasPrefix("second-"), let seconds = Int64(text.dropFirst(7)), seconds > 0 {
                return min(seconds, DAVLockTable.maximumTimeout)
            }
        }
        return DAVLockTable.defaultTimeout
    }
}

extension ShareServer {
    /// Answers one WebDAV request.
    func webDAV(_ request: Request, context: ShareContext) async throws -> Response {
        let raw = Substring(request.uri.path)
        if raw.hasPrefix(WebDAV.prefix), !raw.contains("#"),
            let metadataPath = SharePath.clientMetadata(percentEncoded: raw.dropFirst(WebDAV.prefix.count))
        {
            return try await davClientMetadata(metadataPath, request: request, context: context)
        }
        guard let path = try WebDAV.requestPath(raw, method: request.method.rawValue) else {
            throw ShareError(.notFound, "not a WebDAV path")
        }
        switch request.method.rawValue {
        case "OPTIONS": return WebDAV.optionsResponse()
        case "GET", "HEAD": return try await davGet(path, request: request, head: request.method == .head)
        case "PUT": return try await davPut(path, request: request, context: context)
        case "DELETE": return try await davDelete(path, request: request, context: context)
        case "MKCOL": return try await davMakeCollection(path, request: request, context: context)
        case "COPY", "MOVE": return try await davCopyOrMove(path, request: request, context: context, move: request.method.rawValue == "MOVE")
        case "PROPFIND": return try await davPropfind(path, request: request)
        case "PROPPATCH": return try await davProppatch(path, request: request)
        case "LOCK": return try await davLock(path, request: request, context: context)
        case "UNLOCK": return try await davUnlock(path, request: request, context: context)
        default:
            var response = WebDAV.errorResponse(DAVError(status: 405, message: "\(request.method.rawValue) is not supported here"))
            response.headers[.allow] = WebDAV.methods
            return response
        }
    }

    // MARK: Reading

    /// What is at `path`: a file or folder on disk, a held-back empty file, or nothing.
    enum DAVResource {
        case item(SharedFolder.Metadata)
        case placeholder(WebDAVState.Placeholder, SharedFolder.Metadata)
        case missing

        var exists: Bool { if case .missing = self { false } else { true } }
        var isCollection: Bool { if case .item(let metadata) = self { metadata.kind == .directory } else { false } }
        var metadata: SharedFolder.Metadata? {
            switch self {
            case .item(let metadata), .placeholder(_, let metadata): metadata
            case .missing: nil
            }
        }
    }

    func davResource(_ path: SharePath) async throws -> DAVResource {
        if let placeholder = dav.placeholder(at: path) {
            let metadata = try await blocking { () throws(ShareError) in try self.folder.stagingMetadata(named: placeholder.staging) }
            if let metadata { return .placeholder(placeholder, metadata) }
        }
        return try await blocking { () throws(ShareError) -> DAVResource in
            do throws(ShareError) {
                let metadata = try self.folder.metadata(path)
                guard metadata.kind == .file || metadata.kind == .directory else { return .missing }
                return .item(metadata)
            } catch where error.kind == .notFound {
                return .missing
            }
        }
    }

    func davGet(_ path: SharePath, request: Request, head: Bool) async throws -> Response {
        switch try await davResource(path) {
        case .missing:
            throw ShareError(.notFound, "'\(path)': no such file or folder")
        case .placeholder(_, let metadata):
            return Response(status: .ok, headers: [
                .eTag: metadata.entityTag, .lastModified: HTTPDate.format(nanoseconds: metadata.modified),
                .contentType: ShareServer.mediaType(for: path.name), .contentLength: "0",
            ])
        case .item(let metadata) where metadata.kind == .directory:
            return try await davIndex(path, head: head)
        case .item:
            return try await download(path, request: request, head: head)
        }
    }

    /// A folder opened in a browser: a plain list of links.
    private func davIndex(_ path: SharePath, head: Bool) async throws -> Response {
        let names = try await blocking { () throws(ShareError) in try self.folder.davChildren(of: path) }
        var writer = XMLWriter(capacity: 256, declaration: false)
        writer.raw("<!DOCTYPE html><meta charset=\"utf-8\"><title>")
        writer.text(path.isRoot ? "/" : path.description)
        writer.raw("</title><ul>")
        for (name, metadata, _) in names.sorted(by: { $0.name < $1.name }) {
            guard let child = try? path.appending(name) else { continue }
            writer.raw("<li><a href=\"")
            writer.href(child, collection: metadata.kind == .directory)
            writer.raw("\">")
            writer.text(name + (metadata.kind == .directory ? "/" : ""))
            writer.raw("</a></li>")
        }
        writer.raw("</ul>\n")
        return Response(
            status: .ok,
            headers: [.contentType: "text/html; charset=utf-8", .contentLength: String(writer.bytes.count),
                      .contentSecurityPolicy: "default-src 'none'"],
            body: head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    // MARK: Conditions and locks

    /// Evaluates the `If` header (412 when no list matches) and returns the lock tokens it submits.
    func davConditions(_ request: Request, path: SharePath) async throws -> Set<String> {
        guard let header = request.headers[.init("If")!] else { return [] }
        let parsed = try DAVIfHeader(parsing: header)
        var entityTags: [SharePath: String?] = [:]
        for list in parsed.lists {
            var resource = path
            if let tag = list.resource {
                guard let (_, urlPath) = WebDAV.split(url: tag), let tagged = try? WebDAV.path(ofURLPath: urlPath) else { continue }
                resource = tagged
            }
            var matches = true
            for condition in list.conditions {
                var holds: Bool
                switch condition.kind {
                case .token(let token):
                    holds = dav.lock(token: token)?.covers(resource) ?? false
                case .entityTag(let tag):
                    if entityTags[resource] == nil { entityTags[resource] = .some(try await davResource(resource).metadata?.entityTag) }
                    let current = entityTags[resource] ?? nil
                    holds = current != nil && (tag == current || tag == "W/" + current!)
                }
                if condition.negated { holds.toggle() }
                if !holds {
                    matches = false
                    break
                }
            }
            if matches { return parsed.submittedTokens }
        }
        throw DAVError(status: 412, message: "the If header's conditions do not hold for '\(path)'")
    }

    /// 423 unless every lock on what the request changes had its token submitted.
    func davRequireTokens(
        _ tokens: Set<String>, changing paths: [SharePath], deep: [SharePath] = [], members: [SharePath] = []
    ) throws(DAVError) {
        let missing = dav.readingLocks { table, now in
            table.missingTokens(changing: paths, deep: deep, members: members, tokens: tokens, now: now)
        }
        if let missing { throw DAVError.locked(missing) }
    }

    // MARK: Changes

    func davPut(_ path: SharePath, request: Request, context: ShareContext) async throws -> Response {
        guard !path.isRoot else { throw DAVError(status: 405, message: "the shared folder is a folder") }
        let tokens = try await davConditions(request, path: path)
        let resource = try await davResource(path)
        if resource.isCollection { throw DAVError(status: 405, message: "'\(path)' is a folder") }
        try await davRequireParent(path)
        try davRequireTokens(tokens, changing: [path], members: resource.exists ? [] : [path.parent])
        try checkSize(request.headers[.contentLength].flatMap { Int64($0) })
        let staging = "dav-" + UUID().uuidString
        let fd = try await blocking { () throws(ShareError) in try self.folder.createStagingFile(named: staging) }
        var committed = false
        defer {
            close(fd)
            if !committed { folder.discardStagingFile(named: staging) }
        }
        let written: Int64
        do {
            written = try await write(
                request.body, to: fd, at: 0, limit: configuration.maxUploadBytes,
                checkingTypeFor: path, totalSize: request.headers[.contentLength].flatMap { Int64($0) })
        } catch let error as ShareError where error.kind == .unsupportedMediaType {
            discardPlaceholder(of: resource, at: path)
            throw error
        }
        let origin = ChangeOrigin(face: "dav", client: context.client, user: context.user, method: "PUT")
        if written == 0 {
            switch resource {
            case .placeholder: return Response(status: .noContent)
            case .missing:
                // An empty file is judged by its name.
                try uploadTypes?.checkEmptyFile(at: path)
                // Held back until its content comes (or its grace ends): one event for one new file.
                let name = try await blocking { () throws(ShareError) in try self.folder.createPlaceholder(for: path) }
                dav.addPlaceholder(.init(staging: name, created: dav.now(), origin: origin), at: path)
                return Response(status: .created, headers: [.contentLength: "0"])
            case .item: break
            }
        }
        let replaced: Bool
        do {
            replaced = try await change([path], origin: origin) { () throws(ShareError) -> Bool in
                // Judged by its content under the name it will have, before anything is in place.
                try self.uploadTypes?.check(stagedFile: fd, for: path)
                // The properties stay with the name, as the content changes.
                switch resource {
                case .placeholder(let placeholder, _):
                    self.folder.copyStagingProperties(from: placeholder.staging, to: fd)
                case .item:
                    if let old = try? self.folder.open(path, flags: O_RDONLY | O_NONBLOCK) {
                        DeadProperties.copy(from: old, to: fd)
                        close(old)
                    }
                case .missing: break
                }
                if cfs_fsync(fd) < 0 { throw SharedFolder.error(errno, path) }
                return try self.folder.commitStagingFile(named: staging, to: path)
            }
        } catch let error as ShareError where error.kind == .unsupportedMediaType {
            discardPlaceholder(of: resource, at: path)
            throw error
        }
        committed = true
        discardPlaceholder(of: resource, at: path)
        return Response(status: replaced || resource.exists ? .noContent : .created, headers: [.contentLength: "0"])
    }

    /// The empty file held back at `path` before a PUT's content (Finder's
    /// empty PUT, Windows' LOCK): the content replaced it, or was refused,
    /// and then nothing of the refused upload appears either.
    private func discardPlaceholder(of resource: DAVResource, at path: SharePath) {
        if case .placeholder(let placeholder, _) = resource, dav.removePlaceholder(at: path, staging: placeholder.staging) {
            folder.discardStagingFile(named: placeholder.staging)
        }
    }

    /// 409 when the folder that would hold `path` does not exist.
    func davRequireParent(_ path: SharePath) async throws {
        let parent = path.parent
        let kind = try await blocking { () throws(ShareError) in try self.folder.existingKind(parent) }
        var isFolder = kind == .directory
        if kind == .symlink { isFolder = (try? await davResource(parent))?.isCollection == true }
        guard isFolder else {
            throw ShareError(.conflict, "the folder '\(parent)' does not exist; create it first")
        }
    }

    func davDelete(_ path: SharePath, request: Request, context: ShareContext) async throws -> Response {
        guard !path.isRoot else { throw ShareError(.forbidden, "the shared folder itself cannot be deleted") }
        if let depth = try WebDAV.depth(request), depth != Int.max {
            throw ShareError(.badRequest, "DELETE takes Depth: infinity (or none)")
        }
        let tokens = try await davConditions(request, path: path)
        let resource = try await davResource(path)
        guard resource.exists else { throw ShareError(.notFound, "'\(path)': no such file or folder") }
        try davRequireTokens(tokens, changing: [path], deep: [path], members: [path.parent])
        if case .placeholder(let placeholder, _) = resource {
            if dav.removePlaceholder(at: path, staging: placeholder.staging) { folder.discardStagingFile(named: placeholder.staging) }
        } else {
            let origin = ChangeOrigin(face: "dav", client: context.client, user: context.user, method: "DELETE")
            try await change([path], origin: origin) { () throws(ShareError) in try self.folder.remove(path) }
        }
        discardPlaceholders(under: path)
        dav.removeLocks(under: path)
        // Finder's metadata for it (and, for a folder, for everything in it) goes too.
        let folder = self.folder
        try? await blocking { () throws(ShareError) in
            folder.removeClientMetadata(path)
            if let appleDouble = path.appleDouble { folder.removeClientMetadata(appleDouble) }
        }
        return Response(status: .noContent)
    }

    private func discardPlaceholders(under path: SharePath) {
        for (_, placeholder) in dav.removePlaceholders(under: path) { folder.discardStagingFile(named: placeholder.staging) }
    }

    func davMakeCollection(_ path: SharePath, request: Request, context: ShareContext) async throws -> Response {
        let body = try await WebDAV.body(request)
        guard body.isEmpty else { throw ShareError(.unsupportedMediaType, "MKCOL takes no body") }
        let tokens = try await davConditions(request, path: path)
        if try await davResource(path).exists {
            throw DAVError(status: 405, message: "'\(path.isRoot ? "/" : path.description)' already exists")
        }
        try await davRequireParent(path)
        try davRequireTokens(tokens, changing: [path], members: [path.parent])
        let origin = ChangeOrigin(face: "dav", client: context.client, user: context.user, method: "MKCOL")
        try await change([path], origin: origin) { () throws(ShareError) in
            let parent = try self.folder.existingParent(of: path)
            defer { close(parent) }
            let result = cfs_mkdirat(parent, path.name, 0o755)
            if result < 0 { throw SharedFolder.error(-result, path) }
        }
        return Response(status: .created, headers: [.contentLength: "0"])
    }

    func davCopyOrMove(_ source: SharePath, request: Request, context: ShareContext, move: Bool) async throws -> Response {
        let method = move ? "MOVE" : "COPY"
        guard let header = request.headers[.init("Destination")!] else {
            throw ShareError(.badRequest, "\(method) needs a Destination header")
        }
        guard let (authority, urlPath) = WebDAV.split(url: header) else {
            throw ShareError(.badRequest, "the Destination '\(header)' is not a URL")
        }
        if let authority, let host = request.head.authority, authority.lowercased() != host.lowercased() {
            throw DAVError(status: 502, message: "the Destination is on another server (\(authority)); this server copies and moves within itself only")
        }
        guard let destination = try WebDAV.path(ofURLPath: urlPath) else {
            throw ShareError(.forbidden, "the Destination must be under \(WebDAV.prefix)")
        }
        let overwrite = try WebDAV.overwrite(request)
        let depth = try WebDAV.depth(request) ?? Int.max
        guard depth == 0 || depth == Int.max else { throw ShareError(.badRequest, "\(method) takes Depth 0 or infinity") }
        guard !source.isRoot else { throw ShareError(.forbidden, "the shared folder itself cannot be \(move ? "moved" : "copied")") }
        guard source != destination else { throw ShareError(.forbidden, "the source and the destination are the same") }
        if destination.isSame(asOrUnder: source) {
            throw ShareError(.forbidden, "a folder cannot be \(move ? "moved" : "copied") into itself")
        }
        var sourceResource = try await davResource(source)
        guard sourceResource.exists else { throw ShareError(.notFound, "'\(source)': no such file or folder") }
        if move && depth == 0 && sourceResource.isCollection { throw ShareError(.badRequest, "a folder is moved with Depth: infinity") }
        let tokens = try await davConditions(request, path: source)
        let destinationResource = try await davResource(destination)
        try await davRequireParent(destination)
        if destinationResource.exists && !overwrite {
            throw DAVError(status: 412, message: "'\(destination)' exists and Overwrite is F")
        }
        if move {
            try davRequireTokens(
                tokens, changing: [source, destination], deep: [source, destination], members: [source.parent, destination.parent])
        } else {
            try davRequireTokens(tokens, changing: [destination], deep: [destination], members: [destination.parent])
        }
        if case .placeholder(let placeholder, _) = sourceResource {
            try await materialize(source, placeholder)
            sourceResource = try await davResource(source)
        }
        if case .placeholder(let placeholder, _) = destinationResource,
            dav.removePlaceholder(at: destination, staging: placeholder.staging)
        {
            folder.discardStagingFile(named: placeholder.staging)
        }
        let origin = ChangeOrigin(face: "dav", client: context.client, user: context.user, method: method)
        let destinationOnDisk: Bool = if case .item = destinationResource { true } else { false }
        try await change([source, destination], origin: origin) { () throws(ShareError) in
            if move {
                try self.folder.move(from: source, to: destination, overwrite: overwrite)
            } else {
                _ = try self.folder.copy(from: source, to: destination, shallow: depth == 0, overwrite: overwrite && destinationOnDisk)
            }
        }
        if move {
            dav.removeLocks(under: source)
            discardPlaceholders(under: source)
            if sourceResource.isCollection {
                let folder = self.folder
                try? await blocking { () throws(ShareError) in folder.moveClientMetadata(from: source, to: destination) }
            }
        }
        if destinationResource.exists { dav.removeLocks(under: destination) }
        return Response(status: destinationResource.exists ? .noContent : .created, headers: [.contentLength: "0"])
    }

    /// Puts a held-back empty file in place now.
    func materialize(_ path: SharePath, _ placeholder: WebDAVState.Placeholder) async throws {
        guard dav.removePlaceholder(at: path, staging: placeholder.staging) else { return }
        try await change([path], origin: placeholder.origin) { () throws(ShareError) in
            try self.folder.materializePlaceholder(named: placeholder.staging, at: path)
        }
    }

    /// Every second: locks whose time is over are dropped, and empty files
    /// no lock holds any more are put in place.
    func maintainWebDAV() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            await maintainWebDAVOnce()
        }
    }

    /// One round of `maintainWebDAV`.
    func maintainWebDAVOnce() async {
        _ = dav.expireLocks()
        for (path, placeholder) in dav.duePlaceholders() {
            do {
                try await materialize(path, placeholder)
            } catch {
                logger.warning("an empty file created over WebDAV could not be put in place", metadata: [
                    "path": "\(path)", "error": "\(error)",
                ])
            }
        }
    }

    /// At shutdown: the empty files held back are put in place.
    func materializeAllPlaceholders() {
        for (path, placeholder) in dav.allPlaceholders where dav.removePlaceholder(at: path, staging: placeholder.staging) {
            try? folder.materializePlaceholder(named: placeholder.staging, at: path)
        }
    }
}

extension WebDAV {
    /// The request body, up to `maximumBodyBytes` (413 above).
    static func body(_ request: Request) async throws -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBodyBytes {
            throw ShareError(.contentTooLarge, "the request body is larger than \(maximumBodyBytes) bytes")
        }
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= maximumBodyBytes else {
                throw ShareError(.contentTooLarge, "the request body is larger than \(maximumBodyBytes) bytes")
            }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        return bytes
    }

    /// The request body as XML (`nil` when empty); 400 when malformed.
    static func xmlBody(_ request: Request) async throws -> XMLElement? {
        let bytes = try await body(request)
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return nil }
        do {
            return try XMLDocumentParser.parse(bytes)
        } catch {
            throw ShareError(.badRequest, "the XML body is malformed: \(error.message) (at byte \(error.offset))")
        }
    }
}
