import HTTPTypes

extension WritePreconditions {
    /// The conditions of a request's `If-Match`, `If-None-Match` and
    /// `If-Unmodified-Since` headers (an `If-Unmodified-Since` that is not
    /// an HTTP date is ignored, as RFC 9110 says).
    init(_ headers: HTTPFields) {
        self.init(
            ifMatch: headers[.ifMatch].map(EntityTag.List.init(parsing:)),
            ifNoneMatch: headers[.ifNoneMatch].map(EntityTag.List.init(parsing:)),
            ifUnmodifiedSince: headers[.ifUnmodifiedSince].flatMap(HTTPDate.parse))
    }
}
