import CFileshareShim
import FileWatching
import Hummingbird
import NIOCore

import struct Accounts.AccessPolicy

#if canImport(Glibc)
    import Glibc
#endif

/// What a PROPFIND asks for.
extension PropfindRequest {
    /// Whether the answer shows dead properties (an item's own, kept in
    /// extended attributes): all of them, their names, or one asked by name.
    var needsDeadProperties: Bool {
        switch self {
        case .all, .names: true
        case .some(let names): names.contains { $0.namespace != "DAV:" || LiveProperty(rawValue: $0.name) == nil }
        }
    }

    /// Whether the answer shows the locks (`DAV:lockdiscovery`).
    var needsLocks: Bool {
        switch self {
        case .all: true
        case .names: false
        case .some(let names): names.contains(.dav(LiveProperty.lockdiscovery.rawValue))
        }
    }
}

enum PropfindRequest: Sendable, Equatable {
    /// Every dead property and the live ones of RFC 4918 (plus those named in `include`).
    case all(include: [PropertyName])
    /// The names only.
    case names
    /// These properties.
    case some([PropertyName])

    init(_ body: XMLElement?) throws(ShareError) {
        guard let body else {
            self = .all(include: [])
            return
        }
        guard body.isDAV("propfind") else {
            throw ShareError(.badRequest, "a PROPFIND body must be a DAV:propfind element")
        }
        if let prop = body.child("prop") {
            self = .some(try PropfindRequest.names(prop))
        } else if body.child("allprop") != nil {
            self = .all(include: try body.child("include").map(PropfindRequest.names) ?? [])
        } else if body.child("propname") != nil {
            self = .names
        } else {
            throw ShareError(.badRequest, "a DAV:propfind must hold DAV:prop, DAV:allprop or DAV:propname")
        }
    }

    /// The most properties one PROPFIND may name, and the bytes of their
    /// names together: every item of the answer repeats each name (those
    /// not found in a list of their own), so the answer to a folder of
    /// 10,000 items grows by 10,000 times what is asked.
    static let maximumNames = 100
    static let maximumNameBytes = 8 * 1024

    /// The property names in `element`; 400 past the limits.
    private static func names(_ element: XMLElement) throws(ShareError) -> [PropertyName] {
        let names = element.elements.map { PropertyName(namespace: $0.namespace, name: $0.name) }
        let bytes = names.reduce(0) { $0 + $1.namespace.utf8.count + $1.name.utf8.count }
        guard names.count <= maximumNames, bytes <= maximumNameBytes else {
            throw ShareError(
                .badRequest,
                "a PROPFIND may name at most \(maximumNames) properties, of \(maximumNameBytes) bytes of names together"
            )
        }
        return names
    }
}

/// The live properties this server computes (all protected).
enum LiveProperty: String, CaseIterable {
    case creationdate, displayname, getcontentlength, getcontenttype, getetag, getlastmodified
    case lockdiscovery, resourcetype, supportedlock
    case quotaAvailable = "quota-available-bytes"
    case quotaUsed = "quota-used-bytes"

    /// Those an `allprop` answers (RFC 4331 keeps quotas out of it).
    static let inAllprop: [LiveProperty] = [
        .creationdate, .displayname, .getcontentlength, .getcontenttype, .getetag, .getlastmodified, .lockdiscovery,
        .resourcetype, .supportedlock,
    ]

    var name: PropertyName { .dav(rawValue) }
}

extension WebDAVFace {
    /// One resource of a multistatus answer.
    struct DAVEntry: Sendable {
        var path: SharePath
        var metadata: SharedFolder.Metadata
        var properties: DeadProperties.Entries
        /// The locks that apply to it (for `DAV:lockdiscovery`).
        var locks: [DAVLock] = []
    }

    /// What a PROPFIND's answer depends on: requests with the same key
    /// share the making of their answer (``CoalescedWork``).
    struct PropfindKey: Sendable, Equatable {
        var path: SharePath
        var depth: Int
        var asked: PropfindRequest
        /// The requester's rights: they decide which items are shown.
        var policy: AccessPolicy
    }

    func davPropfind(_ path: SharePath, request: Request) async throws -> Response {
        let depth = try WebDAV.depth(request) ?? Int.max
        guard depth <= 1 else {
            throw DAVError(
                status: 403, message: "PROPFIND with Depth: infinity is refused; ask for Depth: 0 or 1",
                condition: "propfind-finite-depth")
        }
        let asked = try PropfindRequest(try await WebDAV.xmlBody(request))
        // Clients browsing a folder at once share the making of its answer
        // (for 10,000 items: 10,000 `statx` and 7 MiB of XML).
        let parts =
            depth == 0
            ? try await propfindParts(path, depth: depth, asked: asked)
            : try await state.propfinds.value(
                for: PropfindKey(path: path, depth: depth, asked: asked, policy: Requester.current.policy)
            ) { try await self.propfindParts(path, depth: depth, asked: asked) }
        return Response(
            status: HTTPResponse.Status(code: 207, reasonPhrase: "Multi-Status"),
            headers: [
                .contentType: WebDAV.xmlContentType,
                .contentLength: String(parts.reduce(0) { $0 + $1.readableBytes }),
            ],
            body: parts.count == 1 ? ResponseBody(byteBuffer: parts[0]) : ResponseBody(contentsOf: parts))
    }

    /// The multistatus answer of a PROPFIND of `path`, in parts of
    /// ``propfindBatch`` items: written as it is sent, a part at a time
    /// would hold one client's answer back for the others sharing it.
    func propfindParts(_ path: SharePath, depth: Int, asked: PropfindRequest) async throws -> [ByteBuffer] {
        let needsDead = asked.needsDeadProperties
        let resource = try await davResource(path)
        var entries: [DAVEntry] = []
        switch resource {
        case .missing:
            throw ShareError(.notFound, "'\(path)': no such file or folder")
        case .placeholder(let placeholder, let metadata):
            let properties = needsDead ? folder.stagingProperties(named: placeholder.staging) : []
            entries.append(DAVEntry(path: path, metadata: metadata, properties: properties))
        case .item(let metadata):
            let listsChildren = depth == 1 && metadata.kind == .directory
            // An item alone (what clients ask before nearly anything) whose
            // properties are kept is answered without the thread pool.
            let children: (DeadProperties.Entries, [SharedFolder.DAVChild])
            if !needsDead {
                children = ([], listsChildren ? try await core.blocking { try folder.davChildren(of: path) } : [])
            } else if !listsChildren, let kept = folder.keptProperties(of: metadata) {
                children = (kept, [])
            } else {
                children = try await core.blocking {
                    (
                        folder.propertiesKeeping(of: path),
                        listsChildren ? try folder.davChildren(of: path, properties: true) : []
                    )
                }
            }
            entries.append(DAVEntry(path: path, metadata: metadata, properties: children.0))
            for child in children.1 {
                guard let childPath = try? path.appending(child.name), davShows(childPath) else { continue }
                entries.append(DAVEntry(path: childPath, metadata: child.metadata, properties: child.properties))
            }
            if depth == 1 && metadata.kind == .directory {
                for (childPath, placeholder) in state.placeholders(in: path)
                where !children.1.contains(where: { $0.name == childPath.name }) && davShows(childPath) {
                    guard let metadata = try? folder.stagingMetadata(named: placeholder.staging) else { continue }
                    let properties = needsDead ? folder.stagingProperties(named: placeholder.staging) : []
                    entries.append(DAVEntry(path: childPath, metadata: metadata, properties: properties))
                }
                // A file manager showing the folder asks for its thumbnails next.
                if let items = core.observer.children(of: path.itemPath) {
                    let shown = Set(entries.dropFirst().map(\.path.name))
                    core.makeThumbnailsAhead(of: items.lazy.filter { shown.contains($0.name) })
                }
            }
        }
        // The locks are read once for the whole answer (one round trip to a
        // database), and only when asked for.
        if asked.needsLocks {
            let held = try await state.locks(coveringOrUnder: path)
            if !held.isEmpty {
                for index in entries.indices { entries[index].locks = held.filter { $0.covers(entries[index].path) } }
            }
        }
        return multistatus(entries, asked: asked)
    }

    /// The answer to a `PROPFIND` of `path` with `Depth: 0` when all it
    /// needs is at hand without waiting: the item's status from the
    /// kernel's caches, its dead properties kept (``DeadPropertyCache``),
    /// the locks in this process and free; `nil` when anything would wait,
    /// or for a held-back empty file, a missing item or an error (then the
    /// router answers, with its own words). The same bytes as
    /// ``propfindParts(_:depth:asked:)``; for ``SmallReads``, on an event loop.
    func propfindAlone(_ path: SharePath, asked: PropfindRequest) -> ByteBuffer? {
        guard state.placeholder(at: path) == nil, case .item(let metadata)? = try? cachedResource(path) else {
            return nil
        }
        var entry = DAVEntry(path: path, metadata: metadata, properties: [])
        if asked.needsDeadProperties {
            guard let kept = folder.keptProperties(of: metadata) else { return nil }
            entry.properties = kept
        }
        if asked.needsLocks {
            guard let held = state.locksWithoutWaiting(coveringOrUnder: path) else { return nil }
            entry.locks = held.filter { $0.covers(path) }
        }
        let parts = multistatus([entry], asked: asked)
        return parts.count == 1 ? parts[0] : nil
    }

    /// The multistatus answer listing `entries`, in parts of ``propfindBatch`` items.
    func multistatus(_ entries: [DAVEntry], asked: PropfindRequest) -> [ByteBuffer] {
        let quota = (available: folder.availableBytes, used: folder.usedBytes)
        let batch = WebDAVFace.propfindBatch
        var parts: [ByteBuffer] = []
        parts.reserveCapacity(entries.count / batch + 1)
        var start = 0
        repeat {
            let end = min(start + batch, entries.count)
            var xml =
                start == 0
                ? XMLWriter(capacity: 256 + (end - start) * 900)
                : XMLWriter(capacity: (end - start) * 900 + 32, declaration: false)
            if start == 0 { xml.raw("<D:multistatus xmlns:D=\"DAV:\">") }
            for entry in entries[start..<end] { writeResponse(entry, asked: asked, quota: quota, into: &xml) }
            if end == entries.count { xml.raw("</D:multistatus>\n") }
            parts.append(ByteBuffer(bytes: xml.bytes))
            start = end
        } while start < entries.count
        return parts
    }

    /// How many items of a PROPFIND answer are written at a time.
    static let propfindBatch = 512

    func writeResponse(
        _ entry: DAVEntry, asked: PropfindRequest, quota: (available: Int64, used: Int64), into writer: inout XMLWriter
    ) {
        let collection = entry.metadata.kind == .directory
        writer.raw("<D:response><D:href>")
        writer.href(entry.path, collection: collection)
        writer.raw("</D:href>")
        var missing: [PropertyName] = []
        writer.raw("<D:propstat><D:prop>")
        switch asked {
        case .names:
            for live in LiveProperty.allCases where applies(live, collection: collection) {
                writer.emptyElement(namespace: "DAV:", name: live.rawValue)
            }
            for property in entry.properties
            where !(property.name.namespace == "DAV:" && LiveProperty(rawValue: property.name.name) != nil) {
                writer.emptyElement(namespace: property.name.namespace, name: property.name.name)
            }
        case .all(let include):
            let deadDisplayName = entry.properties.contains { $0.name == .dav("displayname") }
            for live in LiveProperty.inAllprop
            where applies(live, collection: collection) && !(live == .displayname && deadDisplayName) {
                writeLive(live, entry, quota: quota, into: &writer)
            }
            for property in entry.properties { writer.raw(property.xml) }
            for name in include where name.namespace == "DAV:" {
                if let live = LiveProperty(rawValue: name.name), !LiveProperty.inAllprop.contains(live),
                    applies(live, collection: collection)
                {
                    writeLive(live, entry, quota: quota, into: &writer)
                }
            }
        case .some(let names):
            for name in names {
                if let stored = entry.properties.first(where: { $0.name == name }) {
                    writer.raw(stored.xml)
                } else if name.namespace == "DAV:", let live = LiveProperty(rawValue: name.name),
                    applies(live, collection: collection)
                {
                    writeLive(live, entry, quota: quota, into: &writer)
                } else {
                    missing.append(name)
                }
            }
        }
        writer.raw("</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>")
        if !missing.isEmpty {
            writer.raw("<D:propstat><D:prop>")
            for name in missing { writer.emptyElement(namespace: name.namespace, name: name.name) }
            writer.raw("</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>")
        }
        writer.raw("</D:response>")
    }

    private func applies(_ live: LiveProperty, collection: Bool) -> Bool {
        switch live {
        case .getcontentlength, .getcontenttype: !collection
        default: true
        }
    }

    private func writeLive(
        _ live: LiveProperty, _ entry: DAVEntry, quota: (available: Int64, used: Int64), into writer: inout XMLWriter
    ) {
        let metadata = entry.metadata
        switch live {
        case .creationdate:
            writer.raw("<D:creationdate>")
            writer.rfc3339(nanoseconds: metadata.created)
            writer.raw("</D:creationdate>")
        case .displayname:
            writer.raw("<D:displayname>")
            writer.text(entry.path.isRoot ? "" : entry.path.name)
            writer.raw("</D:displayname>")
        case .getcontentlength:
            writer.raw("<D:getcontentlength>")
            writer.number(metadata.size)
            writer.raw("</D:getcontentlength>")
        case .getcontenttype:
            writer.dav("getcontenttype", FileResponses.mediaType(for: entry.path.name))
        case .getetag:
            // The same as `SharedFolder.Metadata.entityTag`, written in place.
            writer.raw("<D:getetag>&quot;")
            writer.entityTagBody(inode: metadata.inode, size: metadata.size, modified: metadata.modified)
            writer.raw("&quot;</D:getetag>")
        case .getlastmodified:
            writer.raw("<D:getlastmodified>")
            writer.httpDate(nanoseconds: metadata.modified)
            writer.raw("</D:getlastmodified>")
        case .resourcetype:
            writer.raw(
                metadata.kind == .directory ? "<D:resourcetype><D:collection/></D:resourcetype>" : "<D:resourcetype/>")
        case .supportedlock:
            // Two static pieces, not one literal joined with `+` (that makes a String per item).
            writer.raw(
                "<D:supportedlock><D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
            )
            writer.raw(
                "<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry></D:supportedlock>"
            )
        case .lockdiscovery:
            writeLockDiscovery(entry.locks, into: &writer)
        case .quotaAvailable:
            writer.dav("quota-available-bytes", String(quota.available))
        case .quotaUsed:
            writer.dav("quota-used-bytes", String(metadata.kind == .directory ? quota.used : metadata.size))
        }
    }

    /// `DAV:lockdiscovery` with one `DAV:activelock` per lock.
    func writeLockDiscovery(_ locks: [DAVLock], into writer: inout XMLWriter) {
        guard !locks.isEmpty else {
            writer.raw("<D:lockdiscovery/>")
            return
        }
        let now = state.now()
        writer.raw("<D:lockdiscovery>")
        for lock in locks {
            writer.raw("<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope>")
            writer.raw(lock.isExclusive ? "<D:exclusive/>" : "<D:shared/>")
            writer.raw("</D:lockscope>")
            writer.dav("depth", lock.isDeep ? "infinity" : "0")
            if let owner = lock.owner { writer.raw(owner) }
            writer.dav("timeout", "Second-\(max(0, (lock.expires - now) / 1_000_000_000))")
            writer.raw("<D:locktoken>")
            writer.dav("href", lock.token)
            writer.raw("</D:locktoken><D:lockroot>")
            writer.raw("<D:href>")
            writer.href(lock.root, collection: false)
            writer.raw("</D:href>")
            writer.raw("</D:lockroot></D:activelock>")
        }
        writer.raw("</D:lockdiscovery>")
    }

    // MARK: PROPPATCH

    func davProppatch(_ path: SharePath, request: Request) async throws -> Response {
        let tokens = try await davConditions(request, path: path)
        let resource = try await davResource(path)
        guard resource.exists else { throw ShareError(.notFound, "'\(path)': no such file or folder") }
        try await davRequireTokens(tokens, changing: [path])
        guard let body = try await WebDAV.xmlBody(request), body.isDAV("propertyupdate") else {
            throw ShareError(.badRequest, "a PROPPATCH body must be a DAV:propertyupdate element")
        }
        // The instructions in document order: set (with the element) or remove.
        var instructions: [(name: PropertyName, element: XMLElement?)] = []
        for instruction in body.elements {
            let isSet = instruction.isDAV("set")
            guard isSet || instruction.isDAV("remove") else { continue }
            guard let prop = instruction.child("prop") else {
                throw ShareError(.badRequest, "DAV:\(instruction.name) without DAV:prop")
            }
            for element in prop.elements {
                instructions.append(
                    (PropertyName(namespace: element.namespace, name: element.name), isSet ? element : nil))
            }
        }
        let protected = instructions.filter {
            $0.name.namespace == "DAV:" && LiveProperty(rawValue: $0.name.name) != nil && $0.name.name != "displayname"
        }
        var failure: (status: String, names: [PropertyName])? = nil
        if !protected.isEmpty {
            failure = ("403 Forbidden", protected.map(\.name))
        } else {
            let placeholder: String? =
                if case .placeholder(let placeholder, _) = resource { placeholder.staging } else { nil }
            let changes = instructions
            do {
                try await core.blocking {
                    let fd: Int32
                    if let placeholder {
                        guard let opened = folder.openStagingForProperties(named: placeholder) else {
                            throw ShareError(.notFound, "'\(path)': no such file or folder")
                        }
                        fd = opened
                    } else {
                        fd = try folder.open(path, flags: O_RDONLY | O_NONBLOCK)
                    }
                    defer { close(fd) }
                    var entries = DeadProperties.read(fd: fd)
                    for (name, element) in changes {
                        entries.removeAll { $0.name == name }
                        if let element { entries.append((name, element.serialized)) }
                    }
                    try DeadProperties.write(entries, fd: fd, path: path)
                }
            } catch let error as FolderError {
                let status = DAVError(error).status
                failure = ("\(status) \(HTTPResponse.Status(code: status).reasonPhrase)", instructions.map(\.name))
            } catch let error as ShareError {
                failure = (
                    "\(error.kind.rawValue) \(HTTPResponse.Status(code: error.kind.rawValue).reasonPhrase)",
                    instructions.map(\.name)
                )
            }
        }
        var writer = XMLWriter()
        writer.raw("<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>")
        writer.href(path, collection: resource.isCollection)
        writer.raw("</D:href>")
        func propstat(_ names: [PropertyName], _ status: String) {
            guard !names.isEmpty else { return }
            writer.raw("<D:propstat><D:prop>")
            for name in names { writer.emptyElement(namespace: name.namespace, name: name.name) }
            writer.raw("</D:prop><D:status>HTTP/1.1 " + status + "</D:status>")
            if status.hasPrefix("403") { writer.raw("<D:error><D:cannot-modify-protected-property/></D:error>") }
            writer.raw("</D:propstat>")
        }
        if let failure {
            propstat(failure.names, failure.status)
            propstat(instructions.map(\.name).filter { !failure.names.contains($0) }, "424 Failed Dependency")
        } else {
            propstat(instructions.map(\.name), "200 OK")
        }
        writer.raw("</D:response></D:multistatus>\n")
        return WebDAV.xmlResponse(status: HTTPResponse.Status(code: 207, reasonPhrase: "Multi-Status"), writer.bytes)
    }
}

extension SharedFolder {
    /// The WebDAV properties of a shared item (none when it cannot be
    /// opened), kept for the next ask when the item has settled
    /// (``DeadPropertyCache``): its status is read first, from the same
    /// descriptor, so what is kept is never newer than the time it is kept under.
    func propertiesKeeping(of path: SharePath) -> DeadProperties.Entries {
        guard let fd = try? open(path, flags: O_RDONLY | O_NONBLOCK) else { return [] }
        defer { close(fd) }
        let status = try? FileStatus(descriptor: fd)
        let properties = DeadProperties.read(fd: fd)
        if let status { deadPropertyCache.keep([(status, properties)]) }
        return properties
    }

    /// The WebDAV properties of the item whose status is `status`, when
    /// they are kept and it has not changed since; `nil`: read them
    /// (``propertiesKeeping(of:)``). Needs no disk.
    func keptProperties(of status: FileStatus) -> DeadProperties.Entries? {
        deadPropertyCache.properties(of: status)
    }

    /// The WebDAV properties of a held-back empty file.
    func stagingProperties(named name: String) -> DeadProperties.Entries {
        guard let fd = openStagingForProperties(named: name) else { return [] }
        defer { close(fd) }
        return DeadProperties.read(fd: fd)
    }

    /// Bytes in use on the shared folder's file system.
    var usedBytes: Int64 { max(0, cfs_used_bytes(rootFD)) }
}
