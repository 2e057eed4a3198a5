import Accounts
import FileWatching
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Share links, opened at `/s/TOKEN` with no account (`http-api.md`):
///
/// - `GET /s/TOKEN`: the link's page: a file (preview, download), a folder
///   (its listing, downloads, ZIP), or a drop zone (an upload link); a
///   password form first when the link has one.
/// - `GET /s/TOKEN/page/P`: a folder link's page of `P` inside it.
/// - `GET|HEAD /s/TOKEN/download[/P]`: the file (ranges, validators), counted.
/// - `GET|HEAD /s/TOKEN/view[/P]`: the file for the page to show, never
///   counted, on a link without `maxDownloads` only (404 on the others).
/// - `GET /s/TOKEN/thumbnail[/P]`: its scaled image, never counted.
/// - `GET /s/TOKEN/zip[/P]`: a folder as a ZIP.
/// - `PUT|POST /s/TOKEN/files/NAME`: a new file into an upload link's
///   folder; a name taken keeps both (`NAME 2.ext`).
/// - `POST /s/TOKEN/password` (form field `password`).
///
/// The link's item is the root of everything it opens: the path after the
/// token is read with the rules of ``SharePath`` (no `..`, no encoded
/// slash, no hidden name) and no symbolic link on the way is followed; any
/// of it answers 404. Each request runs as a ``Requester`` of the link's
/// own (`link ID`, a policy of one rule: its item, read or upload), so the
/// core decides for a link as for anyone. An unknown token is a 404, and
/// guesses from one address are slowed like sign-ins (429); an expired,
/// revoked, used-up link, or one whose item is gone, is a 410 that says which.
struct LinkFace: RouterMiddleware {
    typealias Context = ShareContext
    let core: ShareCore
    let links: LinkStore
    let api: APIFace
    /// With a users file: a link stops opening when its maker may no longer share its item.
    let signIn: SignIn?
    let secure: Bool
    /// Ranges of one file by one client are one download (for `maxDownloads`).
    let pieces = DownloadCounter()

    static let cookieName = "fileshare-link"

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        let url = request.uri.path
        guard url.hasPrefix("/s/") else { return try await next(request, context) }
        let afterPrefix = url.dropFirst(3)
        let token = afterPrefix.prefix { $0 != "/" }
        let rest = afterPrefix.dropFirst(token.count)
        if token == "assets" { return LinkFace.asset(rest) }
        // A public drop box takes files from anyone, but not from another
        // site's page behind its visitor's back: refused before (RequestGuardMiddleware).
        let now = ContinuousClock.now
        let guessKey = "guess " + context.address
        if let wait = links.throttle.withLock({ $0.wait(address: context.address, name: guessKey, now: now) }) {
            AuditNote.about(path: nil, action: "link-open")
            return LinkPages.tooMany(wait)
        }
        var lookup = ShareLinks.Lookup.unknown
        if LinkToken.isWellFormed(token) { lookup = try await links.records.lookup(tokenHash: LinkToken.hash(token)) }
        let link: ShareLink
        switch lookup {
        case .unknown:
            links.throttle.withLock { $0.failed(address: context.address, name: guessKey, now: now) }
            AuditNote.about(path: nil, action: "link-open")
            return LinkPages.notFound()
        case .ended(let ended, let why):
            AuditNote.who("link " + ended.id)
            AuditNote.about(path: ended.path, action: "link-open")
            return LinkPages.gone(why)
        case .open(let open): link = open
        }
        AuditNote.who("link " + link.id)
        let base = "/s/" + token
        if link.passwordHash != nil {
            if rest == "/password" && request.method == .post {
                return try await password(request, context: context, link: link, base: base)
            }
            guard try await admitted(request, context: context, link: link) else {
                AuditNote.about(path: link.path, action: "link-open")
                return LinkPages.password(base: base, message: nil, status: .unauthorized)
            }
        }
        // Where the item is now (by id: renamed and moved, the link follows).
        guard let id = ItemID(link.item), let item = core.observer.item(id: id),
            let root = try? SharePath(plain: item.path.description)
        else {
            guard core.observer.scanProgress.isComplete else {
                return .json(status: .serviceUnavailable, error: "the folder is still being read; try again soon")
            }
            // A follower's observer may not have seen an item made a moment
            // ago: only the leader's says an item is gone, for every server.
            guard core.sharedDatabase == nil || core.isLeader else {
                return .json(
                    status: .serviceUnavailable, error: "this server has not seen the link's item yet; try again soon")
            }
            try await links.records.itemDeleted(id: link.id)
            AuditNote.about(path: link.path, action: "link-open")
            return LinkPages.gone(.deleted)
        }
        // Written only when the item moved: opening a link is no write to the store.
        if link.path != root.description { try await links.records.follow(id: link.id, to: root.description) }
        // The link sees what its maker may see now, and no more: a share without
        // users has no maker to narrow it; with users, one who may no longer
        // share the item ends the link, and their narrower rules under it hold for it too.
        var maker = Requester.everyone
        if let signIn, let creator = link.creator {
            let right: AccessOperation = link.access == .read ? .read : .change
            guard let current = signIn.requester(for: creator),
                (try? ShareCore.authorize(right, root, for: current)) != nil
            else {
                AuditNote.about(path: root.description, detail: "its maker may no longer share it", action: "link-open")
                return LinkPages.notFound()
            }
            maker = current
        }
        let requester = Requester(
            user: nil,
            policy: AccessPolicy.link(
                to: root.components, right: link.access == .read ? .read : .upload, maker: maker.policy),
            link: link.id)
        var context = context
        context.user = requester.name
        let visit = LinkVisit(link: link, root: root, base: base, isFolder: item.kind == .directory)
        return try await Requester.$current.withValue(requester) {
            try await self.answer(request, context: context, visit: visit, rest: rest)
        }
    }

    /// What one request through an open link is about.
    struct LinkVisit: Sendable {
        var link: ShareLink
        /// The item's path in the share now.
        var root: SharePath
        /// `/s/TOKEN`.
        var base: String
        var isFolder: Bool
    }

    private func answer(_ request: Request, context: ShareContext, visit: LinkVisit, rest: Substring) async throws
        -> Response
    {
        let (verb, sub) = LinkFace.route(rest)
        let method = request.method
        switch (verb, visit.link.access) {
        case ("", _) where method == .get || method == .head:
            AuditNote.about(path: visit.root.description, action: "link-open")
            if visit.link.access == .upload { return LinkPages.dropZone(base: visit.base, name: visit.root.name) }
            return try await page(visit, sub: "")
        case ("page", .read) where method == .get:
            AuditNote.about(path: visit.root.description, action: "link-open")
            return try await page(visit, sub: sub)
        case ("download", .read) where method == .get || method == .head:
            let path = try inside(visit, sub, kind: .file)
            AuditNote.about(
                path: path.description, detail: linkDetail(visit), action: method == .get ? "download" : nil)
            if method == .head { AuditNote.skip() }
            let response = try await FileResponses.download(path, request: request, head: method == .head, core: core)
            return counted(response, visit: visit, path: path, context: context, head: method == .head)
        case ("view", .read) where (method == .get || method == .head) && visit.link.maxDownloads == nil:
            // What the page shows is no download. A link that counts its
            // downloads has no such way round the count: its page shows the thumbnail.
            let path = try inside(visit, sub, kind: .file)
            AuditNote.skip()
            return try await FileResponses.download(path, request: request, head: method == .head, core: core)
        case ("thumbnail", .read) where method == .get:
            let path = try inside(visit, sub, kind: .file)
            AuditNote.skip()
            return try await FileResponses.thumbnail(path, request: request, core: core)
        case ("zip", .read) where method == .get:
            let path = try inside(visit, sub, kind: .directory)
            AuditNote.about(path: path.description, detail: linkDetail(visit) + ", ZIP", action: "download")
            let response = try await api.zip(at: path)
            return counted(response, visit: visit, path: path, context: context, head: false)
        case ("files", .upload) where method == .put || method == .post:
            guard !api.readOnly else { throw ShareError(.forbidden, "this folder is shared read-only") }
            guard !sub.isEmpty else { throw ShareError(.notFound, "name the file: \(visit.base)/files/NAME") }
            let relative = try LinkFace.relative(sub)
            let path = try relative.components.reduce(visit.root) { try $0.appending($1) }
            try refuseLinksOnTheWay(visit, relative, last: false)
            AuditNote.about(path: path.description, detail: linkDetail(visit), action: "upload")
            // Two phones sending IMG_0001.jpg is the usual case: both are kept, as the Inbox does.
            return try await api.upload(at: path, request: request, context: context, keepingBoth: true)
        default:
            AuditNote.skip()
            throw ShareError(.notFound, "no such page of this link")
        }
    }

    private func linkDetail(_ visit: LinkVisit) -> String { "through link \(visit.link.id)" }

    /// `("download", "a/b.txt")` for `/download/a/b.txt`; `("", "")` for the link itself.
    static func route(_ rest: Substring) -> (verb: Substring, sub: Substring) {
        let trimmed = rest.drop { $0 == "/" }
        guard !trimmed.isEmpty else { return ("", "") }
        let verb = trimmed.prefix { $0 != "/" }
        return (verb, trimmed.dropFirst(verb.count).dropFirst())
    }

    /// A path inside the link, as sent (percent-encoded): any trick is a 404.
    static func relative(_ sub: Substring) throws(ShareError) -> SharePath {
        do {
            return try SharePath(percentEncoded: sub)
        } catch {
            throw ShareError(.notFound, "no such file or folder in this link")
        }
    }

    /// The shared path of `sub` inside the link, which must be there, of
    /// `kind`, and reached through folders only (no symbolic link).
    private func inside(_ visit: LinkVisit, _ sub: Substring, kind: ItemKind) throws(ShareError) -> SharePath {
        let relative = try LinkFace.relative(sub)
        guard visit.isFolder || relative.isRoot else { throw ShareError(.notFound, "no such file in this link") }
        var path = visit.root
        for name in relative.components {
            do { path = try path.appending(name) } catch { throw ShareError(.notFound, "no such file or folder") }
        }
        try refuseLinksOnTheWay(visit, relative, last: true)
        guard core.observer.item(at: path.itemPath)?.kind == kind else {
            throw ShareError(.notFound, kind == .file ? "no such file in this link" : "no such folder in this link")
        }
        return path
    }

    /// 404 when a name on the way below the link's root (and the last one, if `last`) is not a folder or file
    /// the observer knows as such: a symbolic link is never followed out of a link.
    private func refuseLinksOnTheWay(_ visit: LinkVisit, _ relative: SharePath, last: Bool) throws(ShareError) {
        var path = visit.root
        let names = relative.components
        for (index, name) in names.enumerated() {
            path = path.child(name)
            let isLast = index == names.count - 1
            if isLast && !last { break }
            guard let item = core.observer.item(at: path.itemPath) else {
                // A folder not there yet for an upload (made on the way), or a missing file.
                if !last { continue }
                throw ShareError(.notFound, "no such file or folder in this link")
            }
            guard item.kind == .directory || (isLast && item.kind == .file) else {
                throw ShareError(.notFound, "no such file or folder in this link")
            }
        }
    }

    /// The page of the link's item, or of folder `sub` inside it.
    private func page(_ visit: LinkVisit, sub: Substring) async throws -> Response {
        if !visit.isFolder {
            guard sub.isEmpty, let item = core.observer.item(at: visit.root.itemPath) else {
                throw ShareError(.notFound, "no such file in this link")
            }
            return LinkPages.file(
                base: visit.base, name: visit.root.name, size: item.size, link: visit.link,
                thumbnail: (try? core.thumbnailMaker(for: visit.root.name)) != nil)
        }
        let relative = try LinkFace.relative(sub)
        let path = try inside(visit, sub, kind: .directory)
        _ = try core.listingScope(path)
        let policy = Requester.current.policy
        let items = (core.observer.children(of: path.itemPath) ?? [])
            .filter { ($0.kind == .file || $0.kind == .directory) && !$0.name.hasPrefix(".") }
            .filter { item in policy.shows(path.child(item.name)) }
            .map { item in
                LinkPages.Entry(
                    name: item.name, isFolder: item.kind == .directory, size: item.size,
                    hasThumbnail: item.kind == .file && (try? core.thumbnailMaker(for: item.name)) != nil)
            }
            .sorted { $0.precedes($1) }
        return LinkPages.folder(
            base: visit.base, title: visit.root.name, relative: relative.components, items: items, link: visit.link)
    }

    /// The response, counting the download (for `maxDownloads`) once its
    /// body is all sent: a whole file, or the range that ends it, once per
    /// client and content.
    private func counted(_ response: Response, visit: LinkVisit, path: SharePath, context: ShareContext, head: Bool)
        -> Response
    {
        guard !head, visit.link.maxDownloads != nil else { return response }
        let status = response.status
        guard status == .ok || status == .partialContent else { return response }
        if status == .partialContent {
            // "bytes A-B/SIZE": only the piece that reaches the end completes a download.
            guard let range = response.headers[.contentRange], let slash = range.lastIndex(of: "/"),
                let size = Int64(range[range.index(after: slash)...]),
                let dash = range.lastIndex(of: "-"), let last = Int64(range[range.index(after: dash)..<slash]),
                last == size - 1
            else { return response }
        }
        let key = DownloadDedup.Key(
            client: context.address, file: path.description, validator: response.headers[.eTag] ?? "")
        let links = self.links
        let pieces = self.pieces
        let id = visit.link.id
        let logger = core.logger
        var response = response
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            let whole = body
            try await whole.write(writer)
            // A repeated final range from the same client is the same download.
            if status == .ok || pieces.isNew(key) {
                do {
                    _ = try await links.records.countDownload(id: id)
                } catch {
                    // Sent, but not counted: the store is cut off (the link opens once more than it allows).
                    logger.error(
                        "a link's download could not be counted", metadata: ["link": "\(id)", "error": "\(error)"])
                }
            }
        }
        return response
    }

    /// A visitor who gave the link's password: its cookie, or Basic credentials (any name) for scripts.
    private func admitted(_ request: Request, context: ShareContext, link: ShareLink) async throws -> Bool {
        if let session = LinkFace.sessionID(request), try await links.hasSession(session, for: link.id) { return true }
        guard let basic = BasicCredentials.parse(request.headers[.authorization]) else { return false }
        return await links.check(basic.password, for: link, address: context.address) == .admitted
    }

    /// `POST /s/TOKEN/password`: the password form's answer.
    private func password(_ request: Request, context: ShareContext, link: ShareLink, base: String) async throws
        -> Response
    {
        AuditNote.about(path: link.path, action: "link-password")
        let body = try await request.body.collect(upTo: 16 * 1024)
        let given = SessionFace.formFields(String(buffer: body))["password"] ?? ""
        switch await links.check(given, for: link, address: context.address) {
        case .throttled(let wait): return LinkPages.tooMany(wait)
        case .wrong: return LinkPages.password(base: base, message: "The password is wrong.", status: .unauthorized)
        case .admitted: break
        }
        let session = try await links.startSession(for: link.id)
        var response = Response(status: .seeOther, headers: [.location: base])
        response.headers[.setCookie] =
            "\(LinkFace.cookieName)=\(session); Path=\(base); Max-Age=86400; HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
        response.headers[.cacheControl] = "no-store"
        return response
    }

    static func sessionID(_ request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters() == cookieName {
                    return parts[1].trimmingCharacters()
                }
            }
        }
        return nil
    }

    /// The link pages' own files.
    static func asset(_ rest: Substring) -> Response {
        switch rest {
        case "/shares.js": PageFace.asset(WebAssets.shares, type: "text/javascript; charset=utf-8")
        case "/app.css": PageFace.asset(WebAssets.css, type: "text/css; charset=utf-8")
        default: LinkPages.notFound()
        }
    }
}
