/// How long the server waits for a client, at each stage of a connection.
///
/// The defaults follow nginx's: a whole request header within 60 seconds of
/// its first byte (nginx's `client_header_timeout`), a kept-alive connection
/// with no request under way closed after 75 seconds (`keepalive_timeout`).
/// Bodies are bounded by silence, not by a deadline, so a slow but live upload
/// of any size goes on.
public struct ConnectionLimits: Sendable, Hashable {
    /// The most time from the first byte of a request (or from the end of the
    /// previous response, for a request sent before it ended) to the end of
    /// its header block. Past it the server answers `408 Request Timeout` and
    /// closes the connection. A deadline, not an idle timer: a client that
    /// sends a byte every few seconds does not extend it.
    public var requestHeaderTimeout: Duration
    /// The most time a connection may stay open with no request under way:
    /// after it was accepted, or after a response, until the first byte of
    /// the next request. Past it the connection is closed without an answer.
    public var keepAliveTimeout: Duration
    /// The most time a request's body may go without a byte once its header
    /// has arrived (each byte starts it again). Past it the connection is
    /// closed.
    public var bodyIdleTimeout: Duration
    /// How long accepting connections pauses when the process has no
    /// descriptor left (`EMFILE`, `ENFILE`), instead of retrying at once.
    public var acceptPause: Duration

    /// Creates limits; the defaults are those of `fileshare serve`.
    public init(
        requestHeaderTimeout: Duration = .seconds(60), keepAliveTimeout: Duration = .seconds(75),
        bodyIdleTimeout: Duration = .seconds(300), acceptPause: Duration = .milliseconds(100)
    ) {
        self.requestHeaderTimeout = requestHeaderTimeout
        self.keepAliveTimeout = keepAliveTimeout
        self.bodyIdleTimeout = bodyIdleTimeout
        self.acceptPause = acceptPause
    }
}
