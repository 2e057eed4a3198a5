import CFileshareShim
import ChangeLog
import FileWatching
import Foundation
import Hummingbird
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The WebDAV face at `/dav/` (RFC 4918 class 1 and 2), on the same rules
/// as the rest of the server: authentication, read-only mode, hidden names
/// and path safety are applied before a request gets here or by `SharePath`
/// and `SharedFolder`. It owns what WebDAV remembers between requests (its
/// locks, the empty files it holds back); the core sees the locks through
/// `LockLookup`. Mounted as a middleware: WebDAV's methods (PROPFIND, LOCK,
/// ...) and `OPTIONS /` are answered before the router's routes.
struct WebDAVFace: RouterMiddleware {
    typealias Context = ShareContext
    let core: ShareCore
    /// The locks and the held-back empty files.
    let state: WebDAVState
    let logger: Logger

    var folder: SharedFolder { core.folder }

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws
        -> Response
    {
        let path = request.uri.path
        // Office and Windows ask the server's root whether it speaks WebDAV.
        if path == "/" && request.method == .options { return WebDAV.optionsResponse() }
        guard path == WebDAV.prefixWithoutSlash || path.hasPrefix(WebDAV.prefix) else {
            return try await next(request, context)
        }
        let failure: DAVError
        do {
            return try await webDAV(request, context: context)
        } catch let error as DAVError {
            failure = error
        } catch let error as FolderError {
            failure = DAVError(error)
        } catch let error as UploadRefusal {
            failure = DAVError(status: error.kind == .refused ? 415 : 500, message: error.reason)
        } catch let error as PreconditionFailure {
            failure = DAVError(status: 412, message: error.message)
        } catch let error as DAVLockStoreError {
            failure = DAVError(status: 503, message: error.message)
        } catch let error as AccessDenied {
            let error = ShareError(error)
            failure = DAVError(status: error.kind.rawValue, message: error.message)
        } catch let error as ShareError {
            failure = DAVError(status: error.kind.rawValue, message: error.message)
        } catch let error as HTTPError {
            failure = DAVError(status: Int(error.status.code), message: error.body ?? error.status.reasonPhrase)
        }
        // The client is told nothing of the server's insides (WebDAV.errorResponse); the log has it.
        if failure.status == 500 {
            logger.error("request failed", metadata: ["error": "\(failure.message)", "path": "\(path)"])
        }
        return WebDAV.errorResponse(failure)
    }

    /// The origin of a change made through this face.
    static func origin(_ context: ShareContext, method: String) -> ChangeOrigin {
        ChangeOrigin(face: "dav", client: context.client, user: context.user, method: method)
    }
}

extension WebDAVFace {
    /// Answers one WebDAV request.
    func webDAV(_ request: Request, context: ShareContext) async throws -> Response {
        let raw = Substring(request.uri.path)
        // On the bytes: `contains("#")` with a string is Foundation's search, 2 % of a PROPFIND.
        if raw.hasPrefix(WebDAV.prefix), !raw.utf8.contains(UInt8(ascii: "#")),
            let metadataPath = SharePath.clientMetadata(percentEncoded: raw.dropFirst(WebDAV.prefix.count))
        {
            return try await davClientMetadata(metadataPath, request: request, context: context)
        }
        guard let path = try WebDAV.requestPath(raw, method: request.method.rawValue) else {
            throw ShareError(.notFound, "not a WebDAV path")
        }
        try await davAuthorize(request.method.rawValue, path)
        switch request.method.rawValue {
        case "OPTIONS": return WebDAV.optionsResponse()
        case "GET", "HEAD": return try await davGet(path, request: request, head: request.method == .head)
        case "PUT": return try await davPut(path, request: request, context: context)
        case "DELETE": return try await davDelete(path, request: request, context: context)
        case "MKCOL": return try await davMakeCollection(path, request: request, context: context)
        case "COPY", "MOVE":
            return try await davCopyOrMove(
                path, request: request, context: context, move: request.method.rawValue == "MOVE")
        case "PROPFIND": return try await davPropfind(path, request: request)
        case "PROPPATCH": return try await davProppatch(path, request: request)
        case "LOCK": return try await davLock(path, request: request, context: context)
        case "UNLOCK": return try await davUnlock(path, request: request, context: context)
        default:
            var response = WebDAV.errorResponse(
                DAVError(status: 405, message: "\(request.method.rawValue) is not supported here"))
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
        if let placeholder = state.placeholder(at: path) {
            let metadata = try await core.blocking { try folder.stagingMetadata(named: placeholder.staging) }
            if let metadata { return .placeholder(placeholder, metadata) }
        }
        // Without a trip to the thread pool when the kernel has the names cached.
        if let resource = try cachedResource(path) { return resource }
        return try await core.blocking { () throws -> DAVResource in
            guard let metadata = try folder.metadataIfPresent(path),
                metadata.kind == .file || metadata.kind == .directory
            else {
                return .missing
            }
            return .item(metadata)
        }
    }

    /// What is on disk at `path` (not a placeholder), when finding out
    /// needs no wait on the disk; `nil` when it would wait.
    func cachedResource(_ path: SharePath) throws(FolderError) -> DAVResource? {
        let fd: Int32
        do throws(FolderError) {
            guard let opened = try folder.openCached(path, flags: Int32(CFS_O_PATH)) else { return nil }
            fd = opened
        } catch  where error.code == .notFound {
            return .missing
        }
        defer { close(fd) }
        let metadata = try SharedFolder.metadata(fd: fd, path: path)
        return metadata.kind == .file || metadata.kind == .directory ? .item(metadata) : .missing
    }

    func davGet(_ path: SharePath, request: Request, head: Bool) async throws -> Response {
        switch try await davResource(path) {
        case .missing:
            throw ShareError(.notFound, "'\(path)': no such file or folder")
        case .placeholder(_, let metadata):
            return Response(
                status: .ok,
                headers: [
                    .eTag: metadata.entityTag, .lastModified: HTTPDate.format(nanoseconds: metadata.modified),
                    .contentType: FileResponses.mediaType(for: path.name), .contentLength: "0",
                ])
        case .item(let metadata) where metadata.kind == .directory:
            return try await davIndex(path, head: head)
        case .item:
            return try await FileResponses.download(path, request: request, head: head, core: core)
        }
    }

    /// A folder opened in a browser: a plain list of links.
    private func davIndex(_ path: SharePath, head: Bool) async throws -> Response {
        let names = try await core.blocking { try folder.davChildren(of: path) }
        var writer = XMLWriter(capacity: 256, declaration: false)
        writer.raw("<!DOCTYPE html><meta charset=\"utf-8\"><title>")
        writer.text(path.isRoot ? "/" : path.description)
        writer.raw("</title><ul>")
        for (name, metadata, _) in names.sorted(by: { $0.name < $1.name }) {
            guard let child = try? path.appending(name), davShows(child) else { continue }
            writer.raw("<li><a href=\"")
            writer.href(child, collection: metadata.kind == .directory)
            writer.raw("\">")
            writer.text(name + (metadata.kind == .directory ? "/" : ""))
            writer.raw("</a></li>")
        }
        writer.raw("</ul>\n")
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8", .contentLength: String(writer.bytes.count),
                .contentSecurityPolicy: "default-src 'none'",
            ],
            body: head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }

    // MARK: Conditions and locks

    /// Evaluates `If-Match`, `If-None-Match` and `If-Unmodified-Since` as the
    /// JSON API does (on the resource as WebDAV sees it, a held-back empty
    /// file included), then the `If` header (412 when no list matches), and
    /// returns the lock tokens it submits. The changes on disk check the
    /// first three again as they happen (`davPreconditions`).
    func davConditions(_ request: Request, path: SharePath) async throws -> Set<String> {
        let preconditions = WritePreconditions(request.headers)
        if !preconditions.isEmpty,
            let failure = preconditions.failure(current: try await davResource(path).metadata, path: path)
        {
            throw failure
        }
        guard let header = request.headers.value(of: .davIf) else { return [] }
        let parsed = try DAVIfHeader(parsing: header)
        var entityTags: [SharePath: String?] = [:]
        for list in parsed.lists {
            var resource = path
            if let tag = list.resource {
                guard let (_, urlPath) = WebDAV.split(url: tag), let tagged = try? WebDAV.path(ofURLPath: urlPath)
                else { continue }
                resource = tagged
            }
            var matches = true
            for condition in list.conditions {
                var holds: Bool
                switch condition.kind {
                case .token(let token):
                    holds = try await state.lock(token: token)?.covers(resource) ?? false
                case .entityTag(let tag):
                    if entityTags[resource] == nil {
                        entityTags[resource] = .some(try await davResource(resource).metadata?.entityTag)
                    }
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

    /// The request's `If-Match`, `If-None-Match` and `If-Unmodified-Since`,
    /// for the core to check again with the change (`ShareCore.perform`), on
    /// what is on disk: none for a held-back empty file, which is not.
    func davPreconditions(_ request: Request, _ resource: DAVResource) -> WritePreconditions {
        if case .placeholder = resource { return .none }
        return WritePreconditions(request.headers)
    }

    /// 423 unless every lock on what the request changes had its token
    /// submitted; ``DAVLockStoreError`` when the locks cannot be read.
    func davRequireTokens(
        _ tokens: Set<String>, changing paths: [SharePath], deep: [SharePath] = [], members: [SharePath] = []
    ) async throws {
        let missing = try await state.readingLocks { table, now in
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
        try await davRequireTokens(tokens, changing: [path], members: resource.exists ? [] : [path.parent])
        let declared = try UploadBody.declaredSize(request.headers)
        try UploadBody.checkSize(declared, core: core)
        let file = try await core.blocking { try StagedFile.create(in: folder, prefix: "dav-") }
        let written: Int64
        do {
            written = try await UploadBody.write(
                request.body, to: file, at: 0, limit: core.maxUploadBytes, core: core, checkingTypeFor: path,
                totalSize: declared)
        } catch let error as UploadRefusal where error.kind == .refused {
            discardPlaceholder(of: resource, at: path)
            throw error
        }
        let origin = WebDAVFace.origin(context, method: "PUT")
        if written == 0 {
            switch resource {
            case .placeholder: return Response(status: .noContent)
            case .missing:
                // An empty file is judged by its name.
                try core.uploadTypes.checkEmptyFile(at: path)
                // Held back until its content comes (or its grace ends): one event for one new file.
                let name = try await core.blocking { try folder.createPlaceholder(for: path) }
                state.addPlaceholder(.init(staging: name, created: state.now(), origin: origin), at: path)
                return Response(status: .created, headers: [.contentLength: "0"])
            case .item: break
            }
        }
        let placed: (path: SharePath, replaced: Bool)
        do {
            placed = try await core.commit(
                file, to: path, origin: origin, creatingParents: false,
                conditions: davPreconditions(request, resource)
            ) { fd in
                // The properties stay with the name, as the content changes.
                switch resource {
                case .placeholder(let placeholder, _):
                    folder.copyStagingProperties(from: placeholder.staging, to: fd)
                case .item:
                    if let old = try? folder.open(path, flags: O_RDONLY | O_NONBLOCK) {
                        DeadProperties.copy(from: old, to: fd)
                        close(old)
                    }
                case .missing: break
                }
            }
        } catch let error as UploadRefusal where error.kind == .refused {
            discardPlaceholder(of: resource, at: path)
            throw error
        }
        discardPlaceholder(of: resource, at: path)
        if placed.path != path {
            // Put in place under the corrected name (--fix-extensions): a new
            // file, where Location says; nothing is at the requested name.
            return Response(
                status: .created,
                headers: [.location: WebDAV.href(placed.path, collection: false), .contentLength: "0"])
        }
        return Response(
            status: placed.replaced || resource.exists ? .noContent : .created, headers: [.contentLength: "0"])
    }

    /// The empty file held back at `path` before a PUT's content (Finder's
    /// empty PUT, Windows' LOCK): the content replaced it, or was refused,
    /// and then nothing of the refused upload appears either.
    private func discardPlaceholder(of resource: DAVResource, at path: SharePath) {
        if case .placeholder(let placeholder, _) = resource,
            state.removePlaceholder(at: path, staging: placeholder.staging)
        {
            folder.discardStaged(named: placeholder.staging)
        }
    }

    /// 409 when the folder that would hold `path` does not exist.
    func davRequireParent(_ path: SharePath) async throws {
        let parent = path.parent
        let kind = try await core.blocking { try folder.existingKind(parent) }
        if kind == .symlink { throw DAVError(FolderError(errno: ELOOP, operation: .open, path: parent)) }
        guard kind == .directory else {
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
        try await davRequireTokens(tokens, changing: [path], deep: [path], members: [path.parent])
        if case .placeholder(let placeholder, _) = resource {
            if state.removePlaceholder(at: path, staging: placeholder.staging) {
                folder.discardStaged(named: placeholder.staging)
            }
        } else {
            try await core.perform(
                [path], origin: WebDAVFace.origin(context, method: "DELETE"),
                conditions: [path: davPreconditions(request, resource)]
            ) {
                try folder.remove(path)
            }
        }
        discardPlaceholders(under: path)
        await removeLocks(under: path)
        // Finder's metadata for it (and, for a folder, for everything in it) goes too.
        try? await core.blocking {
            folder.removeClientMetadata(path)
            if let appleDouble = path.appleDouble { folder.removeClientMetadata(appleDouble) }
        }
        return Response(status: .noContent)
    }

    private func discardPlaceholders(under path: SharePath) {
        for (_, placeholder) in state.removePlaceholders(under: path) {
            folder.discardStaged(named: placeholder.staging)
        }
    }

    func davMakeCollection(_ path: SharePath, request: Request, context: ShareContext) async throws -> Response {
        let body = try await WebDAV.body(request)
        guard body.isEmpty else { throw ShareError(.unsupportedMediaType, "MKCOL takes no body") }
        let tokens = try await davConditions(request, path: path)
        if try await davResource(path).exists {
            throw DAVError(status: 405, message: "'\(path.isRoot ? "/" : path.description)' already exists")
        }
        try await davRequireParent(path)
        try await davRequireTokens(tokens, changing: [path], members: [path.parent])
        try await core.perform([path], origin: WebDAVFace.origin(context, method: "MKCOL")) {
            let parent = try folder.existingParent(of: path)
            defer { close(parent) }
            let result = cfs_mkdirat(parent, path.name, 0o755)
            try SharedFolder.check(result, path, doing: .makeFolder)
        }
        return Response(status: .created, headers: [.contentLength: "0"])
    }

    func davCopyOrMove(_ source: SharePath, request: Request, context: ShareContext, move: Bool) async throws
        -> Response
    {
        let method = move ? "MOVE" : "COPY"
        guard let header = request.headers.value(of: .destination) else {
            throw ShareError(.badRequest, "\(method) needs a Destination header")
        }
        guard let (authority, urlPath) = WebDAV.split(url: header) else {
            throw ShareError(.badRequest, "the Destination '\(header)' is not a URL")
        }
        if let authority, let host = request.head.authority, authority.lowercased() != host.lowercased() {
            throw DAVError(
                status: 502,
                message:
                    "the Destination is on another server (\(authority)); this server copies and moves within itself only"
            )
        }
        guard let destination = try WebDAV.path(ofURLPath: urlPath) else {
            throw ShareError(.forbidden, "the Destination must be under \(WebDAV.prefix)")
        }
        try core.authorize(.change, destination)
        let overwrite = try WebDAV.overwrite(request)
        let depth = try WebDAV.depth(request) ?? Int.max
        guard depth == 0 || depth == Int.max else {
            throw ShareError(.badRequest, "\(method) takes Depth 0 or infinity")
        }
        guard !source.isRoot else {
            throw ShareError(.forbidden, "the shared folder itself cannot be \(move ? "moved" : "copied")")
        }
        guard source != destination else { throw ShareError(.forbidden, "the source and the destination are the same") }
        if destination.isSame(asOrUnder: source) {
            throw ShareError(.forbidden, "a folder cannot be \(move ? "moved" : "copied") into itself")
        }
        var sourceResource = try await davResource(source)
        guard sourceResource.exists else { throw ShareError(.notFound, "'\(source)': no such file or folder") }
        if move && depth == 0 && sourceResource.isCollection {
            throw ShareError(.badRequest, "a folder is moved with Depth: infinity")
        }
        let tokens = try await davConditions(request, path: source)
        let destinationResource = try await davResource(destination)
        try await davRequireParent(destination)
        if destinationResource.exists && !overwrite {
            throw DAVError(status: 412, message: "'\(destination)' exists and Overwrite is F")
        }
        if move {
            try await davRequireTokens(
                tokens, changing: [source, destination], deep: [source, destination],
                members: [source.parent, destination.parent])
        } else {
            try await davRequireTokens(
                tokens, changing: [destination], deep: [destination], members: [destination.parent])
        }
        if case .placeholder(let placeholder, _) = sourceResource {
            try await materialize(source, placeholder)
            sourceResource = try await davResource(source)
        }
        if case .placeholder(let placeholder, _) = destinationResource,
            state.removePlaceholder(at: destination, staging: placeholder.staging)
        {
            folder.discardStaged(named: placeholder.staging)
        }
        let destinationOnDisk: Bool = if case .item = destinationResource { true } else { false }
        try await core.perform(
            [source, destination], origin: WebDAVFace.origin(context, method: method),
            conditions: [source: davPreconditions(request, sourceResource)],
            access: [source: move ? .change : .read, destination: .change]
        ) {
            if move {
                try folder.move(from: source, to: destination, overwrite: overwrite)
            } else {
                _ = try folder.copy(
                    from: source, to: destination, shallow: depth == 0, overwrite: overwrite && destinationOnDisk)
            }
        }
        if move {
            await removeLocks(under: source)
            discardPlaceholders(under: source)
            if sourceResource.isCollection {
                try? await core.blocking { folder.moveClientMetadata(from: source, to: destination) }
            }
        }
        if destinationResource.exists { await removeLocks(under: destination) }
        return Response(status: destinationResource.exists ? .noContent : .created, headers: [.contentLength: "0"])
    }

    /// Forgets the locks on and under `path`, which is gone: the change is
    /// made, so a store that cannot be reached now is no reason to fail the
    /// request; the locks then end with their timeout.
    func removeLocks(under path: SharePath) async {
        do {
            try await state.removeLocks(under: path)
        } catch {
            logger.warning(
                "the locks of an item gone cannot be removed", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// Puts a held-back empty file in place now: the end of a PUT whose
    /// rights were checked when it was held back, so done as the server
    /// (``Requester/everyone``), whichever request or task it ends in.
    func materialize(_ path: SharePath, _ placeholder: WebDAVState.Placeholder) async throws {
        guard state.removePlaceholder(at: path, staging: placeholder.staging) else { return }
        try await Requester.$current.withValue(.everyone) {
            try await core.perform([path], origin: placeholder.origin) {
                try folder.materializePlaceholder(named: placeholder.staging, at: path)
            }
        }
    }

    /// Every second: locks whose time is over are dropped, and empty files
    /// no lock holds any more are put in place.
    func maintain() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            await maintainWebDAVOnce()
        }
    }

    /// One round of `maintain`.
    func maintainWebDAVOnce() async {
        let due: [(SharePath, WebDAVState.Placeholder)]
        do {
            try await state.expireLocks()
            due = try await state.duePlaceholders()
        } catch {
            // The database is away: no lock is taken for gone, and nothing held back is put in place.
            logger.debug("the WebDAV locks cannot be read", metadata: ["error": "\(error)"])
            return
        }
        for (path, placeholder) in due {
            do {
                try await materialize(path, placeholder)
            } catch {
                logger.warning(
                    "an empty file created over WebDAV could not be put in place",
                    metadata: [
                        "path": "\(path)", "error": "\(error)",
                    ])
            }
        }
    }

    /// At shutdown: the empty files held back are put in place.
    func materializeAllPlaceholders() {
        for (path, placeholder) in state.allPlaceholders
        where state.removePlaceholder(at: path, staging: placeholder.staging) {
            try? folder.materializePlaceholder(named: placeholder.staging, at: path)
        }
    }
}
