import FileWatching
import HTTPTypes

/// The fields of a file's answer to a `GET` or `HEAD` (200, 206 or 304), in
/// the order they are sent: one description, written two ways — as
/// `HTTPFields` for the router (``httpFields``), and as bytes for the
/// answers ``SmallReadLane`` writes itself (``write(into:)``).
///
/// The bytes are written here rather than through `HTTPFields` because
/// every small read paid for it twice: each field checked and inserted
/// into `HTTPFields`, then each one read back and copied out (about 7 % of
/// the server's samples for a 4 KiB GET, `perf`; README, "Small requests").
/// Every value here is legal as it stands (hexadecimal, digits, dates, the
/// media types of ``FileResponses/mediaType(for:)``, the ASCII of
/// ``FileResponses/attachment(_:)``), so the bytes are what `HTTPFields`
/// would hold; `FileAnswerFieldsTests` holds the two writings to that.
struct FileAnswerFields: Sendable {
    /// `ETag`: the strong validator (``SharedFolder/Metadata/entityTag``).
    var entityTag: String
    /// `Last-Modified`, in nanoseconds since the epoch.
    var modified: Int64
    /// `Content-Type`.
    var mediaType: String
    /// `Content-Disposition` (an attachment, for `?download`).
    var disposition: String? = nil
    /// `Content-Length`: what is sent, or what a `GET` would send for a
    /// `HEAD`; `nil` on a 304, which has no length.
    var contentLength: Int64? = nil
    /// `Content-Range` of a 206: its first and last byte, of a file of `size` bytes.
    var contentRange: (first: Int64, last: Int64, size: Int64)? = nil

    /// The fields as the router sends them.
    var httpFields: HTTPFields {
        // Appended rather than written as a dictionary literal, which checks
        // each name against the others on every answer.
        var fields = HTTPFields()
        fields.reserveCapacity(10)
        fields.append(HTTPField(name: .eTag, value: entityTag))
        fields.append(HTTPField(name: .lastModified, value: HTTPDate.format(nanoseconds: modified)))
        fields.append(HTTPField(name: .acceptRanges, value: "bytes"))
        fields.append(HTTPField(name: .contentType, value: mediaType))
        fields.append(HTTPField(name: .cacheControl, value: "no-cache"))
        fields.append(HTTPField(name: .xContentTypeOptions, value: "nosniff"))
        // A user's HTML or SVG must not run as the share's own page.
        fields.append(HTTPField(name: .contentSecurityPolicy, value: FileResponses.contentSecurityPolicy))
        if let disposition { fields.append(HTTPField(name: .contentDisposition, value: disposition)) }
        if let contentLength { fields.append(HTTPField(name: .contentLength, value: String(contentLength))) }
        if let contentRange { fields.append(HTTPField(name: .contentRange, value: Self.rangeValue(contentRange))) }
        return fields
    }

    /// Appends the fields to `bytes` as an HTTP/1.1 head has them (each
    /// `Name: value` and CR LF), in the order and spelling of ``httpFields``.
    func write(into bytes: inout [UInt8]) {
        Self.line(.eTag, entityTag, into: &bytes)
        bytes.append(contentsOf: Self.names.lastModified)
        CivilTime(nanoseconds: modified).writeHTTPDate(into: &bytes)
        bytes.append(contentsOf: Self.names.acceptRangesAndContentType)
        bytes.append(contentsOf: mediaType.utf8)
        bytes.append(contentsOf: Self.names.afterContentType)
        if let disposition { Self.line(.contentDisposition, disposition, into: &bytes) }
        if let contentLength {
            bytes.append(contentsOf: Self.names.contentLength)
            bytes.appendDecimal(contentLength)
            bytes.append(contentsOf: Self.crlf)
        }
        if let contentRange { Self.line(.contentRange, Self.rangeValue(contentRange), into: &bytes) }
    }

    static func rangeValue(_ range: (first: Int64, last: Int64, size: Int64)) -> String {
        "bytes \(range.first)-\(range.last)/\(range.size)"
    }

    private static let crlf: [UInt8] = Array("\r\n".utf8)

    private static func line(_ name: HTTPField.Name, _ value: String, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: name.rawName.utf8)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: value.utf8)
        bytes.append(contentsOf: crlf)
    }

    /// The runs of bytes between the values, made once from the same names
    /// and fixed values as ``httpFields``.
    private static let names:
        (
            lastModified: [UInt8], acceptRangesAndContentType: [UInt8], afterContentType: [UInt8],
            contentLength: [UInt8]
        ) = {
            func start(_ name: HTTPField.Name) -> [UInt8] { Array("\(name.rawName): ".utf8) }
            func whole(_ name: HTTPField.Name, _ value: String) -> [UInt8] {
                Array("\(name.rawName): \(value)\r\n".utf8)
            }
            return (
                start(.lastModified),
                crlf + whole(.acceptRanges, "bytes") + start(.contentType),
                crlf + whole(.cacheControl, "no-cache") + whole(.xContentTypeOptions, "nosniff")
                    + whole(.contentSecurityPolicy, FileResponses.contentSecurityPolicy),
                start(.contentLength)
            )
        }()
}
