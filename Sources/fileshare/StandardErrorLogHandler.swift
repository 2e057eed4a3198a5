import Logging

/// swift-log's `StreamLogHandler` on standard error, with its metadata put
/// into words only when a line is written.
///
/// `StreamLogHandler` formats all of its metadata again at every change of
/// it, whether or not a line is ever written. Hummingbird gives each request
/// its logger with the request's id set, so every request the router
/// answered paid for that formatting, about 4 µs of a `404`'s 140 (`perf`),
/// in a server that logs warnings and almost never writes a line. Here the
/// metadata is kept as it is given and handed to a `StreamLogHandler` for
/// the lines written, which are formatted exactly as it formats them.
struct StandardErrorLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String, level: Logger.Level) {
        stream = StreamLogHandler.standardError(label: label)
        stream.logLevel = level
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var stream = self.stream
        stream.metadata = metadata
        stream.log(event: event)
    }
}
