import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Names and helpers of the WebDAV face.
enum WebDAV {
    static let prefix = "/dav/"
    /// The type of every XML answer.
    static let xmlContentType = "application/xml; charset=utf-8"
    static let prefixWithoutSlash = "/dav"
    static let methods = "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, COPY, MOVE, PROPFIND, PROPPATCH, LOCK, UNLOCK"
    /// The largest XML body read (PROPFIND, PROPPATCH, LOCK): 413 above it.
    static let maximumBodyBytes = 1 << 20

    /// The shared path of a URL path under `/dav` (400 with a fragment); `nil` when it is not under `/dav`.
    static func path(ofURLPath raw: Substring) throws(ShareError) -> SharePath? {
        // On the contiguous bytes, as the router splits a path: every WebDAV
        // request comes by here, and walking a Substring's UTF-8 view index
        // by index (or its Characters) cost a small GET more than the rest
        // of its path's parse.
        let marks =
            raw.utf8.withContiguousStorageIfAvailable(URLPathMarks.init)
            ?? Array(raw.utf8).withUnsafeBufferPointer(URLPathMarks.init)
        if marks.fragment {
            throw ShareError(
                .badRequest, "a URL with a fragment ('#'): clients never send one; a '#' in a name is written %23")
        }
        if marks.isRoot { return .root }
        guard marks.isUnderPrefix else { return nil }
        let names = raw.utf8.prefix(marks.pathLength).dropFirst(prefix.utf8.count)
        do {
            return try SharePath(percentEncoded: Substring(names))
        } catch {
            throw ShareError(error)
        }
    }

    /// What ``path(ofURLPath:)`` reads of a URL path, found on its contiguous bytes.
    struct URLPathMarks {
        /// A `#` anywhere.
        var fragment: Bool
        /// The bytes before the query (`?`), or all of them.
        var pathLength: Int
        /// The path (before the query) is `/dav`.
        var isRoot: Bool
        /// The path starts with `/dav/`.
        var isUnderPrefix: Bool

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            fragment = bytes.contains(UInt8(ascii: "#"))
            pathLength = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
            let path = UnsafeBufferPointer(rebasing: bytes[..<pathLength])
            isRoot = path.elementsEqual(WebDAV.prefixWithoutSlash.utf8)
            isUnderPrefix = path.starts(with: WebDAV.prefix.utf8)
        }
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
        Response(
            status: .ok,
            headers: [
                .dav: "1, 2", .allow: methods, .msAuthorVia: "DAV", .contentLength: "0",
            ])
    }

    static func errorResponse(_ error: DAVError) -> Response {
        let status = HTTPResponse.Status(code: error.status)
        // A failure of the server's own tells nothing of its insides (ErrorMiddleware logs it).
        var error = error
        if error.status == 500 { error.message = ErrorMiddleware.internalFailure }
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
            headers: [.contentType: xmlContentType, .contentLength: String(bytes.count)],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `Depth`: 0, 1 or infinity (`nil` when absent); 400 otherwise.
    static func depth(_ request: Request) throws(ShareError) -> Int? {
        try depth(request.headers)
    }

    /// ``depth(_:)`` of these fields.
    static func depth(_ fields: HTTPFields) throws(ShareError) -> Int? {
        guard let value = fields.value(of: .depth) else { return nil }
        switch value.trimmingCharacters().lowercased() {
        case "0": return 0
        case "1": return 1
        case "infinity": return Int.max
        default: throw ShareError(.badRequest, "Depth must be 0, 1 or infinity, not '\(value)'")
        }
    }

    /// `Overwrite`: T (the default) or F.
    static func overwrite(_ request: Request) throws(ShareError) -> Bool {
        guard let value = request.headers.value(of: .overwrite) else { return true }
        switch value.trimmingCharacters().uppercased() {
        case "T": return true
        case "F": return false
        default: throw ShareError(.badRequest, "Overwrite must be T or F, not '\(value)'")
        }
    }

    /// `Timeout`: the first acceptable `Second-N` or `Infinite`, capped.
    static func timeout(_ request: Request) -> Int64 {
        guard let value = request.headers.value(of: .timeout) else { return DAVLockTable.defaultTimeout }
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
        try xmlBody(bytes: try await body(request))
    }

    /// A request body's XML document: `nil` for none (only white space).
    static func xmlBody(bytes: [UInt8]) throws -> XMLElement? {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return nil }
        do {
            return try XMLDocumentParser.parse(bytes)
        } catch {
            throw ShareError(.badRequest, "the XML body is malformed: \(error.message) (at byte \(error.offset))")
        }
    }
}

extension HTTPField.Name {
    // WebDAV's fields (RFC 4918 section 10), made once: a name made from
    // text is checked and lowercased each time, about a microsecond a request.
    static let depth = HTTPField.Name("Depth")!
    static let davIf = HTTPField.Name("If")!
    static let destination = HTTPField.Name("Destination")!
    static let overwrite = HTTPField.Name("Overwrite")!
    static let timeout = HTTPField.Name("Timeout")!
    static let lockToken = HTTPField.Name("Lock-Token")!
    static let dav = HTTPField.Name("DAV")!
    static let msAuthorVia = HTTPField.Name("MS-Author-Via")!
}

extension HTTPRequest.Method {
    static let propfind = HTTPRequest.Method("PROPFIND")!
}
