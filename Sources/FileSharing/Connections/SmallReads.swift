import Accounts
import CFileshareShim
import Dispatch
import FileWatching
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Answers the commonest small requests — a GET or HEAD of a small file
/// the kernel has cached, through `/api/files/` or `/dav/`, and a WebDAV
/// `PROPFIND` of one item (``WebDAVFace/propfindAlone(_:asked:)``) — on
/// the connection's event loop, without the router's tasks.
///
/// The profile of such a GET (README, "Small requests") put most of its
/// time in what surrounds the answer, not in it: a task per request, the
/// async streams of its parts, the middleware chain's task-local values.
/// Here the same answer is worked out synchronously, by the same code the
/// routed answer uses for every step that decides something:
/// - who it is: the share's one user (``AuthMiddleware/check(_:)``), a
///   session kept in this server's memory, or a password verified a moment ago
///   (``SignIn/signInCached(authorization:address:now:remembered:)``);
/// - whether they may read the path (`ShareCore.authorize`, the core's one
///   policy) and the path rules (`SharePath`, `openat2` in ``SharedFolder/openCached(_:described:flags:)``);
/// - validators, conditional requests and ranges
///   (``FileResponses/plan(named:request:download:metadata:)``);
/// - the audit (``AuditMiddleware/recordDownload(who:address:path:url:status:validator:ranged:detail:)``)
///   and the request metrics.
///
/// Anything else is left to the router, which answers it as before: a
/// query, a body, a request that ends its connection, a sign-in that needs
/// a password hashed, a refusal or an error of any kind (so every error
/// keeps its one wording and status), a WebDAV placeholder or client
/// metadata, a file that is large, not cached or changed while read.
/// ``answer(_:client:)`` returns `nil` for those, having answered nothing
/// and recorded nothing (a session or a password looked up on the way is
/// looked up again by the router, as for any request).
struct SmallReads: Sendable {
    /// How requests are authenticated, as the router's middleware does.
    enum Authentication: Sendable {
        /// No credentials (`--no-auth`): everyone may do everything.
        case none
        /// The share's one user and password (HTTP Basic).
        case basic(AuthMiddleware)
        /// A users file: sessions, or Basic with a password verified a moment ago.
        case users(SignIn)
    }

    let folder: SharedFolder
    let authentication: Authentication
    /// The WebDAV face: its held-back empty files, and the answers to a
    /// `PROPFIND` of one item (``WebDAVFace/propfindAlone(_:asked:)``).
    let webDAV: WebDAVFace
    let audit: AuditMiddleware
    let metrics: ServerMetrics
    let serverName: String
    /// Requests answered here so far.
    let tally: Tally
    /// Of those, the ones a ``SmallReadLane`` answered ahead of the decoder.
    let answeredAhead: Tally
    /// The `Date` of the answers.
    let clock = HTTPDate.Clock()
    /// The fields of answers to files, kept by each event loop's thread.
    let keptHeads = KeptFileHeads.PerThread()
    /// The room kept before a file's content for its answer's head (about
    /// 500 bytes): written there, the answer is made without copying the
    /// content (``SmallReadLane/bytes(of:scratch:allocator:)``).
    static let headroom = 1024

    /// The largest `PROPFIND` body answered here (clients send a few hundred bytes).
    static let maximumBody = 16 * 1024

    /// A count shared by every connection's handler.
    final class Tally: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// An answer: its status, its fields and body, and the `Date` and
    /// `Server` fields that follow the file's.
    struct Answer {
        var status: HTTPResponse.Status
        var fields: Fields
        var body: ByteBuffer?
        var date: String
        var server: String

        /// The fields before `Date` and `Server`, as the router writes them.
        enum Fields {
            /// A file's (GET and HEAD).
            case file(FileAnswerFields)
            /// A file's whole answer (200) or a 304, with the bytes they
            /// are written as, kept (``KeptFileHeads``).
            case keptFile(KeptFileHeads.Head, notModified: Bool)
            /// A multistatus answer's (PROPFIND): its type and length.
            case multistatus(contentLength: Int)

            var httpFields: HTTPFields {
                switch self {
                case .file(let fields): return fields.httpFields
                case .keptFile(let head, let notModified): return (notModified ? head.base : head.whole).httpFields
                case .multistatus(let length):
                    var fields = HTTPFields()
                    fields.append(HTTPField(name: .contentType, value: WebDAV.xmlContentType))
                    fields.append(HTTPField(name: .contentLength, value: String(length)))
                    return fields
                }
            }

            /// Appends the fields as an HTTP/1.1 head has them, in the order of ``httpFields``.
            func write(into bytes: inout [UInt8]) {
                switch self {
                case .file(let fields): fields.write(into: &bytes)
                case .keptFile(let head, let notModified):
                    bytes.append(contentsOf: notModified ? head.baseBytes : head.wholeBytes)
                case .multistatus(let length):
                    bytes.append(contentsOf: "Content-Type: \(WebDAV.xmlContentType)\r\nContent-Length: ".utf8)
                    bytes.appendDecimal(Int64(length))
                    bytes.append(contentsOf: "\r\n".utf8)
                }
            }
        }

        /// A file's `ETag`.
        var entityTag: String? {
            switch fields {
            case .file(let fields): fields.entityTag
            case .keptFile(let head, _): head.base.entityTag
            case .multistatus: nil
            }
        }

        /// The head as `HTTPTypes` has it, for the handler after the decoder.
        var head: HTTPResponse {
            var headerFields = fields.httpFields
            // Appended: the file's fields never have them, and setting one looks for it first.
            headerFields.append(HTTPField(name: .date, value: date))
            headerFields.append(HTTPField(name: .server, value: server))
            return HTTPResponse(status: status, headerFields: headerFields)
        }
    }

    /// A request as the small reads consult it: its method, its target as
    /// sent, its `Host` and its other fields, as `HTTPTypes` has them.
    ///
    /// Not an `HTTPRequest`: making one checks each of its pseudo-fields
    /// again (method, scheme, authority, path), which the lane's strict scan
    /// of the head has checked (``RequestHeadScan``); that was 1.4 % of a
    /// small read's user time on the lane (`perf`), for nothing consulted.
    struct Request {
        var method: HTTPRequest.Method
        /// The origin-form target: the path and any query, as sent.
        var target: String
        /// The `Host` field's value.
        var authority: String?
        /// The fields but `Host`.
        var fields: HTTPFields
    }

    /// What a connection's handler keeps for the requests it gives here.
    struct Client {
        /// The client's address.
        var address: String
        /// The Basic credentials it last signed in with (a users file).
        var signedIn: SignIn.Remembered? = nil
        /// The instruments its last answer was counted with.
        var series: ServerMetrics.RequestSeries? = nil
    }

    /// The answer to `request` from `client`, or `nil` when the router
    /// must answer it (nothing was changed or recorded then). `body` is the
    /// request's whole body when the caller has it (a `PROPFIND`'s), `nil`
    /// when it does not: then only a request without one is answered.
    func answer(_ request: Request, body: UnsafeRawBufferPointer? = nil, client: inout Client) -> Answer? {
        let address = client.address
        let started = DispatchTime.now().uptimeNanoseconds
        let head: Bool
        switch request.method {
        case .get: head = false
        case .head: head = true
        case .propfind: return propfind(request, body: body, client: &client, started: started)
        default: return nil
        }
        let fields = request.fields
        guard let target = Self.plainTarget(request), fields.value(of: .contentLength).map({ $0 == "0" }) ?? true
        else { return nil }
        let path: SharePath
        let face: ServerMetrics.Face
        /// The names after the face's prefix, as the URL has them.
        let encoded: Substring
        let raw = Substring(target)
        // Prefixes compared on the bytes, as the router splits a path; a
        // Substring's `hasPrefix` compares Characters, a few percent here.
        // The names after the prefix, dropped as bytes (dropping Characters walks grapheme breaks).
        if raw.utf8.starts(with: "/api/files/".utf8) {
            encoded = Substring(raw.utf8.dropFirst("/api/files/".utf8.count))
            guard let parsed = try? SharePath(percentEncoded: encoded) else { return nil }
            (path, face) = (parsed, .api)
        } else if raw.utf8.starts(with: WebDAV.prefix.utf8), raw.utf8.last != UInt8(ascii: "/") {
            encoded = Substring(raw.utf8.dropFirst(WebDAV.prefix.utf8.count))
            guard
                SharePath.clientMetadata(percentEncoded: encoded) == nil,
                let parsed = try? WebDAV.requestPath(raw, method: request.method.rawValue),
                webDAV.state.placeholder(at: parsed) == nil
            else { return nil }
            (path, face) = (parsed, .webdav)
        } else {
            return nil
        }
        guard !path.isRoot, let (requester, who) = authenticate(fields, host: request.authority, client: &client),
            (try? ShareCore.authorize(.read, path, for: requester)) != nil
        else { return nil }
        // The path's text, once for the open and the audit (the URL's own
        // names when nothing in them was decoded).
        let described = path.description(parsedFrom: encoded)
        guard let answer = read(path, described: described, request: fields, head: head) else { return nil }
        let status = Int(answer.status.code)
        // The audit keeps downloads; a HEAD is not one (`AuditMiddleware.action`).
        if !head {
            audit.recordDownload(
                who: who, address: address, path: described, url: target, status: status,
                validator: answer.entityTag,
                ranged: fields.contains(.range))
        }
        tally.add()
        metrics.requestAnswered(
            face: face, method: request.method.rawValue, status: status,
            nanoseconds: Int64(clamping: DispatchTime.now().uptimeNanoseconds &- started), kept: &client.series)
        return answer
    }

    /// The request's target when the router would answer it as it stands:
    /// no query or fragment, no chunked body, the connection kept.
    private static func plainTarget(_ request: Request) -> String? {
        let fields = request.fields
        let target = request.target
        // On the bytes: `contains("?")` would walk the target as Characters.
        guard !target.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }),
            // `contains` and `value(of:)`: the subscript joins through a lazy
            // map whose metadata is looked up at run time (`HTTPFields.value(of:)`).
            !fields.contains(.transferEncoding),
            // Closing the connection after the answer is the router's work
            // (`OriginFormCodec` says `close` plainly when a request asks for it).
            fields.value(of: .connection).map({ $0.lowercased() == "keep-alive" }) ?? true
        else { return nil }
        return target
    }

    /// The answer's fields as kept when they are the whole file's or a
    /// 304's (the plan gives the same values), else as planned (a range).
    private static func fields(_ planned: FileAnswerFields, status: HTTPResponse.Status, kept: KeptFileHeads.Head)
        -> Answer.Fields
    {
        if status == .notModified { return .keptFile(kept, notModified: true) }
        if status == .ok && planned.contentRange == nil && planned.contentLength == kept.size {
            return .keptFile(kept, notModified: false)
        }
        return .file(planned)
    }

    /// A `PROPFIND` of one item (`Depth: 0`) through `/dav/`, which WebDAV
    /// clients send before nearly everything they do: answered when the
    /// item, its properties and the locks are at hand
    /// (``WebDAVFace/propfindAlone(_:asked:)``); the rights are those of a
    /// read, as for a GET (the router also shows a way in to a shared
    /// folder, which it is left to). Not audited, as the router does not.
    private func propfind(
        _ request: Request, body: UnsafeRawBufferPointer?, client: inout Client, started: UInt64
    ) -> Answer? {
        let fields = request.fields
        let length = fields.value(of: .contentLength).map { Int($0) } ?? 0
        guard let target = Self.plainTarget(request), let length, length == (body?.count ?? 0),
            // Depth 1 and infinity are the router's (shared answers, refusals).
            (try? WebDAV.depth(fields)) == 0
        else { return nil }
        let raw = Substring(target)
        guard raw.utf8.starts(with: WebDAV.prefix.utf8),
            SharePath.clientMetadata(percentEncoded: Substring(raw.utf8.dropFirst(WebDAV.prefix.utf8.count))) == nil,
            let path = try? WebDAV.requestPath(raw, method: request.method.rawValue), !path.isRoot,
            let (requester, _) = authenticate(fields, host: request.authority, client: &client),
            (try? ShareCore.authorize(.read, path, for: requester)) != nil,
            // No body asks for all; a malformed one is the router's to refuse, in its words.
            let asked = try? PropfindRequest(WebDAV.xmlBody(bytes: body.map { Array($0) } ?? [])),
            let xml = webDAV.propfindAlone(path, asked: asked)
        else { return nil }
        let status = HTTPResponse.Status(code: 207, reasonPhrase: "Multi-Status")
        tally.add()
        metrics.requestAnswered(
            face: .webdav, method: request.method.rawValue, status: 207,
            nanoseconds: Int64(clamping: DispatchTime.now().uptimeNanoseconds &- started), kept: &client.series)
        return Answer(
            status: status, fields: .multistatus(contentLength: xml.readableBytes), body: xml, date: clock.now(),
            server: serverName)
    }

    /// Who the request is from and the name the audit gives them; `nil`
    /// when only the router can tell (or refuse).
    func authenticate(_ fields: HTTPFields, host: String?, client: inout Client) -> (Requester, String)? {
        switch authentication {
        case .none:
            // Without credentials, only loopback names (RequestGuardMiddleware refuses the others).
            return HostCheck.isLoopback(host) ? (.everyone, "-") : nil
        case .basic(let middleware):
            guard middleware.check(fields.value(of: .authorization)) == .accepted else { return nil }
            return (.everyone, middleware.user)
        case .users(let signIn):
            if let id = SessionFace.sessionID(fields) {
                // A session in the database, or one that ended, is for the router.
                guard let requester = signIn.sessionWithoutWaiting(id) else { return nil }
                return (requester, requester.name)
            }
            guard
                let requester = signIn.signInCached(
                    authorization: fields.value(of: .authorization), address: client.address,
                    remembered: &client.signedIn)
            else { return nil }
            return (requester, requester.name)
        }
    }

    /// The file's answer when it is at hand without waiting: opened,
    /// stat'ed and (for a GET) read from the kernel's caches.
    /// `described`: `path.description` (the caller needs it for the audit too).
    func read(_ path: SharePath, described: String, request: HTTPFields, head: Bool) -> Answer? {
        let wantContent = FileResponses.wantsContent(head: head, request: request)
        guard
            let (file, contentWaits) = try? FileResponses.openedWithoutWaiting(
                path, wantContent: wantContent, headroom: Self.headroom,
                openCached: { try folder.openCached(path, described: described, flags: O_RDONLY | O_NONBLOCK) })
        else { return nil }
        defer { close(file.fd) }
        guard !contentWaits, file.metadata.kind == .file else { return nil }
        // The file's fields hold while its status has not moved; the
        // request's conditions and range are judged on them every time.
        let kept = keptHeads.current
        let keptHead =
            kept.head(named: path.name, status: file.metadata)
            ?? kept.keep(
                FileResponses.baseFields(named: path.name, download: false, metadata: file.metadata),
                named: path.name, status: file.metadata)
        let plan = FileResponses.plan(request: request, metadata: file.metadata, base: keptHead.base)
        var fields: FileAnswerFields
        var status = HTTPResponse.Status.notModified
        var body: ByteBuffer? = nil
        switch plan {
        case .unsatisfiable: return nil
        case .notModified(let planned): fields = planned
        case .send(let planned, let plannedFields, let start, let length):
            (status, fields) = (planned, plannedFields)
            if !head && length > 0 {
                // Large, grown since its stat, or a condition that did not hold: the router streams it.
                guard let content = file.content else { return nil }
                if start == 0 && Int(length) == content.readableBytes {
                    // The whole file, with the room before it for the head.
                    body = content
                } else {
                    guard let slice = content.getSlice(at: content.readerIndex + Int(start), length: Int(length))
                    else { return nil }
                    body = slice
                }
            }
        }
        return Answer(
            status: status, fields: Self.fields(fields, status: status, kept: keptHead), body: body,
            date: clock.now(), server: serverName)
    }
}

/// Gives each request that ``SmallReads`` can answer its answer, right on
/// the event loop, and passes every other one on to the router unchanged.
///
/// It sits just before the router's handler, after Hummingbird's
/// connection-state handler, so keep-alive, `Connection: close` and the
/// idle timeout see every request and answer as before. Answers leave in
/// the order requests came: while a request passed on is not yet answered
/// (its response's end has not come by on its way out), every request
/// after it is passed on too.
final class SmallReadHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let reads: SmallReads
    private var client = SmallReads.Client(address: "unknown")
    /// Requests passed on whose response has not ended yet.
    private var passedOn = 0
    /// The request under way is passed on (its parts follow its head).
    private var passing = false
    /// The answer to the request under way, written once its end is read.
    private var answer: SmallReads.Answer?
    /// Answers written and not yet flushed: they go out together when the
    /// read that brought their requests is complete, so requests pipelined
    /// in one read are answered in one write, as nginx does.
    private var unflushed = false

    init(reads: SmallReads) { self.reads = reads }

    func handlerAdded(context: ChannelHandlerContext) {
        if let remote = context.channel.remoteAddress { client.address = remote.ipAddress ?? "?" }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if passedOn == 0, let asked = SmallReads.Request(request), let answer = reads.answer(asked, client: &client)
            {
                self.answer = answer
                passing = false
                return
            }
            passedOn += 1
            passing = true
            context.fireChannelRead(data)
        case .body:
            // A request answered here has no body (it was checked); only passed-on ones have.
            if passing { context.fireChannelRead(data) }
        case .end:
            if passing {
                passing = false
                context.fireChannelRead(data)
            } else if let answer {
                self.answer = nil
                context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
                if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.write(wrapOutboundOut(.end(nil)), promise: nil)
                unflushed = true
            }
        }
    }

    // Every read is followed by a read-complete: the socket's, and the one
    // NIO's pipelining handler sends after the requests it held back.
    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), passedOn > 0 { passedOn -= 1 }
        context.write(data, promise: promise)
    }
}

extension SmallReads.Request {
    /// `request` as the small reads consult it; `nil` without a path (`CONNECT`).
    init?(_ request: HTTPRequest) {
        guard let path = request.path else { return nil }
        self.init(method: request.method, target: path, authority: request.authority, fields: request.headerFields)
    }
}
