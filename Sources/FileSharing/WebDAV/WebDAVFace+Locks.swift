import ChangeLog
import Foundation
import Hummingbird
import NIOCore

extension WebDAVFace {
    /// `LOCK`: a new lock (a body with `DAV:lockinfo`), or a refresh (no
    /// body, the lock's token in the `If` header). A lock on a name where
    /// nothing is yet creates an empty file there, held back until its content
    /// comes or the lock ends (unless the accepted types refuse an empty file
    /// of that name: then it holds the name only).
    func davLock(_ path: SharePath, request: Request, context: ShareContext, clientMetadata: Bool = false) async throws
        -> Response
    {
        let body = try await WebDAV.xmlBody(request)
        let timeout = WebDAV.timeout(request)
        guard let body else { return try await davRefresh(path, request: request, timeout: timeout) }
        guard body.isDAV("lockinfo") else {
            throw ShareError(.badRequest, "a LOCK body must be a DAV:lockinfo element")
        }
        guard let scope = body.child("lockscope")?.elements.first, scope.isDAV("exclusive") || scope.isDAV("shared")
        else {
            throw ShareError(.badRequest, "DAV:lockinfo needs a DAV:lockscope of DAV:exclusive or DAV:shared")
        }
        guard body.child("locktype")?.elements.first?.isDAV("write") == true else {
            throw ShareError(.badRequest, "DAV:lockinfo needs a DAV:locktype of DAV:write (the only kind of lock)")
        }
        let depth = try WebDAV.depth(request) ?? Int.max
        guard depth == 0 || depth == Int.max else { throw ShareError(.badRequest, "LOCK takes Depth 0 or infinity") }
        let tokens = try await davConditions(request, path: path)
        let exists: Bool
        if clientMetadata {
            exists = try await core.blocking { () throws -> Bool in
                guard let fd = try folder.openClientMetadata(path) else { return false }
                close(fd)
                return true
            }
        } else {
            exists = try await davResource(path).exists
        }
        if !exists {
            guard !path.isRoot else { throw ShareError(.notFound, "the shared folder is missing") }
            try await davRequireParent(path)
            try await davRequireTokens(tokens, changing: [], members: [path.parent])
        }
        let token = "opaquelocktoken:" + UUID().uuidString.lowercased()
        let owner = body.child("owner")?.serialized
        // Kept with the lock, in memory and in the journal, for as long as it lasts.
        if let owner, owner.utf8.count > DAVLock.maximumOwnerBytes {
            throw ShareError(
                .badRequest, "the lock's DAV:owner is longer than \(DAVLock.maximumOwnerBytes) bytes, the most kept")
        }
        let user = context.user
        let exclusive = scope.isDAV("exclusive")
        // It ends on the store's clock (the database's, for several servers).
        let lock: DAVLock
        switch try await state.changingLocks({ table, now in
            table.add(
                DAVLock(
                    token: token, root: path, isDeep: depth != 0, isExclusive: exclusive, owner: owner, user: user,
                    timeout: timeout, expires: now + timeout * 1_000_000_000), now: now)
        }) {
        case .conflict(let other):
            throw DAVError.locked(other, condition: "no-conflicting-lock")
        case .full:
            throw ShareError(
                .serviceUnavailable, "too many locks are held (\(DAVLockTable.defaultCapacity)); try again later")
        case .fullForUser:
            // 507 as RFC 4918 (section 11.5) has it: the server cannot keep
            // what the request needs, and the state is temporary (an UNLOCK,
            // or a lock's end, makes room); RFC 4331 answers a user's quota so.
            throw DAVError(
                status: 507,
                message:
                    "you hold \(DAVLockTable.perUserLimitText) locks, the most one user may; unlock some (or let them end) and try again"
            )
        case .locked(let granted):
            lock = granted
        }
        // A new name whose empty file would be refused (the name says a type
        // not accepted, or none): the lock is granted, for the PUT that
        // follows to be judged by its content, but no empty file is held back.
        let holdsEmptyFile = !exists && (clientMetadata || core.uploadTypes.acceptsEmptyFile(at: path))
        if holdsEmptyFile {
            let origin = WebDAVFace.origin(context, method: "LOCK")
            do {
                if clientMetadata {
                    // Kept apart at once: nobody sees these files, so nothing is held back.
                    try await core.blocking {
                        _ = try StagedFile.create(in: folder, prefix: "dav-metadata-").commitAsClientMetadata(for: path)
                    }
                } else {
                    let name = try await core.blocking { try folder.createPlaceholder(for: path) }
                    state.addPlaceholder(.init(staging: name, created: state.now(), origin: origin), at: path)
                }
            } catch {
                _ = try? await state.changingLocks { table, now in
                    table.unlock(token: lock.token, path: path, now: now)
                }
                throw error
            }
        }
        var response = lockResponse(lock, status: holdsEmptyFile ? .created : .ok)
        response.headers[.lockToken] = "<\(lock.token)>"
        return response
    }

    private func davRefresh(_ path: SharePath, request: Request, timeout: Int64) async throws -> Response {
        guard request.headers.value(of: .davIf) != nil else {
            throw ShareError(.badRequest, "a LOCK without a body refreshes a lock: send its token in an If header")
        }
        let tokens = try await davConditions(request, path: path)
        for token in tokens.sorted() {
            if let lock = try await state.changingLocks({ table, now in
                table.refresh(token: token, path: path, timeout: timeout, now: now)
            }) {
                return lockResponse(lock, status: .ok)
            }
        }
        throw DAVError(
            status: 412, message: "no lock of those in the If header applies to '\(path)'",
            condition: "lock-token-matches-request-uri")
    }

    private func lockResponse(_ lock: DAVLock, status: HTTPResponse.Status) -> Response {
        var writer = XMLWriter()
        writer.raw("<D:prop xmlns:D=\"DAV:\">")
        writeLockDiscovery([lock], into: &writer)
        writer.raw("</D:prop>\n")
        return WebDAV.xmlResponse(status: status, writer.bytes)
    }

    /// `UNLOCK` with `Lock-Token: <token>`.
    func davUnlock(_ path: SharePath, request: Request, context: ShareContext) async throws -> Response {
        guard let header = request.headers.value(of: .lockToken)?.trimmingCharacters(), header.hasPrefix("<"),
            header.hasSuffix(">")
        else {
            throw ShareError(.badRequest, "UNLOCK needs a Lock-Token header: <opaquelocktoken:...>")
        }
        let token = String(header.dropFirst().dropLast())
        guard
            let lock = try await state.changingLocks({ table, now in table.unlock(token: token, path: path, now: now) })
        else {
            throw DAVError(
                status: 409, message: "no lock with that token applies to '\(path)'",
                condition: "lock-token-matches-request-uri",
                hrefs: [WebDAV.href(path, collection: false)])
        }
        // An empty file the lock held back becomes a file now that no lock holds it.
        for (placeholderPath, placeholder) in state.placeholders(under: lock.root)
        where try await state.locks(covering: placeholderPath).isEmpty {
            try await materialize(placeholderPath, placeholder)
        }
        return Response(status: .noContent)
    }
}
