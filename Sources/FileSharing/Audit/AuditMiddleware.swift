import Foundation
import Hummingbird
import Synchronization

/// What the faces tell the audit about the request being handled: who it
/// is (the authentication middleware, the link face), and where the path
/// is not in the URL (a move's two ends, a link's item). A task-local
/// reference, so what is set deep in the handling reaches the middleware
/// that records the request once it is answered.
final class AuditNote: Sendable {
    struct Fields: Sendable {
        var who: String?
        var path: String?
        var detail: String?
        var action: String?
        /// Set when the request is not to be recorded by the middleware (the face recorded it, or it is noise).
        var skip = false
    }

    let fields = Mutex(Fields())

    @TaskLocal static var current: AuditNote?

    /// Notes who the request is from.
    static func who(_ name: String) { current?.fields.withLock { $0.who = name } }

    /// Notes what the request is about, where its URL does not say it.
    static func about(path: String?, detail: String? = nil, action: String? = nil) {
        current?.fields.withLock { fields in
            if let path { fields.path = path }
            if let detail { fields.detail = detail }
            if let action { fields.action = action }
        }
    }

    /// The request is not recorded by the middleware.
    static func skip() { current?.fields.withLock { $0.skip = true } }
}

/// Records each access (`AuditLog`) once it is answered: downloads,
/// uploads, deletes, moves, copies, folders made, locks, properties
/// changed, through any face, with who, from where, and the status.
/// Listings, events and the page's own files are not recorded. Ranges
/// of one file by one client are one download (``DownloadDedup``).
struct AuditMiddleware: RouterMiddleware {
    typealias Context = ShareContext
    let audit: AuditLog
    let downloads = DownloadCounter()

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        let note = AuditNote()
        let response: Response
        do {
            response = try await AuditNote.$current.withValue(note) { try await next(request, context) }
        } catch {
            // The status the client sees (the error middleware, outside this one, answers it).
            let status = ErrorMiddleware.answer(to: error)?.status.code ?? 500
            record(request, context: context, note: note, status: Int(status), validator: nil)
            throw error
        }
        record(
            request, context: context, note: note, status: Int(response.status.code), validator: response.headers[.eTag]
        )
        return response
    }

    private func record(_ request: Request, context: ShareContext, note: AuditNote, status: Int, validator: String?) {
        let fields = note.fields.withLock { $0 }
        guard !fields.skip else { return }
        let method = request.method.rawValue
        let url = request.uri.path
        guard let action = fields.action ?? AuditMiddleware.action(method: method, path: url) else { return }
        let path =
            fields.path ?? AuditMiddleware.sharedPath(url) ?? ((try? APIRequest.query(request, "path")) ?? nil)
        var detail = fields.detail
        if detail == nil, method == "MOVE" || method == "COPY",
            let destination = request.headers.value(of: .destination),
            let range = destination.range(of: "/dav/")
        {
            let raw = destination[range.upperBound...]
            detail = "to " + ((try? SharePath(percentEncoded: raw))?.description ?? String(raw))
        }
        if action == "download" {
            recordDownload(
                who: fields.who ?? context.user ?? "-", address: context.address, path: path, url: url, status: status,
                validator: validator, ranged: request.headers[.range] != nil, detail: detail)
            return
        }
        audit.record(
            AuditEvent(
                action: action, who: fields.who ?? context.user ?? "-", address: context.address, path: path,
                outcome: (200..<400).contains(status) ? "ok" : String(status), detail: detail))
    }

    /// Records a download answered with `status` (the routed one, and the
    /// event loop's own in `SmallReads`, alike).
    func recordDownload(
        who: String, address: String, path: String?, url: String, status: Int, validator: String?, ranged: Bool,
        detail: String? = nil
    ) {
        if (200..<300).contains(status) {
            // Ranges of the file this client already fetches are that same download.
            let key = DownloadDedup.Key(client: address, file: path ?? url, validator: validator ?? "")
            let isNew = downloads.isNew(key)
            if !isNew && ranged { return }
        }
        audit.record(
            action: "download", who: who, address: address, path: path,
            outcome: (200..<400).contains(status) ? "ok" : String(status), detail: detail)
    }

    /// The action a request is, by method and URL; `nil`: not recorded.
    static func action(method: String, path: String) -> String? {
        if path.hasPrefix("/s/") {
            // A link's requests say what they are themselves (never with the token in them).
            return nil
        }
        let api = path.hasPrefix("/api/")
        let dav = path == "/dav" || path.hasPrefix("/dav/")
        switch method {
        case "GET":
            if path.hasPrefix("/api/files/") || path == "/api/zip" || (dav && !path.hasSuffix("/")) {
                return "download"
            }
            return nil
        case "PUT": return api || dav ? "upload" : nil
        case "DELETE":
            if path.hasPrefix("/api/uploads/") || path.hasPrefix("/api/tus/") { return "upload-cancel" }
            if path.hasPrefix("/api/session") || path.hasPrefix("/api/shares/") { return nil }
            return api || dav ? "delete" : nil
        case "MOVE": return dav ? "move" : nil
        case "COPY": return dav ? "copy" : nil
        case "MKCOL": return dav ? "mkdir" : nil
        case "LOCK": return dav ? "lock" : nil
        case "UNLOCK": return dav ? "unlock" : nil
        case "PROPPATCH": return dav ? "properties" : nil
        case "POST":
            switch path {
            case "/api/move": return "move"
            case "/api/mkdir": return "mkdir"
            case "/api/uploads", "/api/tus", "/api/tus/": return "upload-start"
            case "/api/session", "/api/shares", "/signin", "/signout": return nil
            default: return api ? "change" : nil
            }
        case "PATCH": return api ? "upload-part" : nil
        default: return nil
        }
    }

    /// The shared path a URL names, when it names one in its path.
    static func sharedPath(_ url: String) -> String? {
        for prefix in ["/api/files/", "/dav/", "/api/thumbnail/"] where url.hasPrefix(prefix) {
            let raw = url.dropFirst(prefix.count)
            return (try? SharePath(percentEncoded: raw))?.description ?? String(raw)
        }
        return nil
    }
}
