import CoreMetrics
import Prometheus
import Synchronization

/// What operators watch, in the Prometheus text format: requests by face,
/// method and status with latency histograms, bytes on the wire, open
/// connections and event streams, the change log, locks and leadership.
///
/// Each server has its own registry (no process-wide bootstrap), so several
/// servers in one process — tests, or an app embedding two shares — keep their
/// numbers apart. Instruments are made through swift-metrics with the
/// registry's factory; the labels never hold paths or names, so the page
/// leaks nothing of the folder's content.
final class ServerMetrics: Sendable {
    /// Which face of the server answered.
    enum Face: String, Sendable, CaseIterable {
        case page, api, events, tus, webdav, metrics
    }

    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let requests = Mutex<[RequestKey: CoreMetrics.Counter]>([:])
    private let latencies = Mutex<[LatencyKey: CoreMetrics.Timer]>([:])
    let bytesReceived: CoreMetrics.Counter
    let bytesSent: CoreMetrics.Counter
    let connections: CoreMetrics.Meter
    let connectionsTotal: CoreMetrics.Counter
    private let gauges: Mutex<[String: CoreMetrics.Gauge]> = Mutex([:])

    private struct RequestKey: Hashable {
        var face: Face
        var method: String
        var status: Int
    }

    private struct LatencyKey: Hashable {
        var face: Face
        var method: String
    }

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // From a cached small GET (well under a millisecond) to a slow listing.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10),
        ]
        self.factory = factory
        bytesReceived = CoreMetrics.Counter(label: "fileshare_received_bytes_total", factory: factory)
        bytesSent = CoreMetrics.Counter(label: "fileshare_sent_bytes_total", factory: factory)
        connections = CoreMetrics.Meter(label: "fileshare_open_connections", factory: factory)
        connectionsTotal = CoreMetrics.Counter(label: "fileshare_connections_total", factory: factory)
    }

    /// Counts one answered request and its time to the response head.
    func requestAnswered(face: Face, method: String, status: Int, nanoseconds: Int64) {
        series(face: face, method: method, status: status).record(nanoseconds: nanoseconds)
    }

    /// Counts one answered request as ``requestAnswered(face:method:status:nanoseconds:)``
    /// does, with the instruments `kept` from the last such call when they
    /// are the ones it needs (then it takes no lock and hashes nothing), and
    /// keeps this request's instruments there for the next.
    ///
    /// A connection's small reads keep theirs: they mostly answer the same
    /// kind of request again, and the two registry lookups (each a lock and a
    /// hash of the method's name) were 2 % of a small GET.
    func requestAnswered(
        face: Face, method: String, status: Int, nanoseconds: Int64, kept: inout RequestSeries?
    ) {
        if let series = kept, series.face == face, series.status == status, series.method == method {
            series.record(nanoseconds: nanoseconds)
            return
        }
        let series = series(face: face, method: method, status: status)
        series.record(nanoseconds: nanoseconds)
        kept = series
    }

    /// The instruments of one kind of answer: the request counter of its
    /// face, method and status, and the latency timer of its face and method.
    struct RequestSeries: Sendable {
        let face: Face
        /// The method as counted (``ServerMetrics/knownMethods``, or `OTHER`).
        let method: String
        let status: Int
        fileprivate let counter: CoreMetrics.Counter
        fileprivate let timer: CoreMetrics.Timer

        fileprivate func record(nanoseconds: Int64) {
            counter.increment()
            timer.recordNanoseconds(nanoseconds)
        }
    }

    /// The instruments a request of `face`, `method` and `status` is
    /// counted and timed with, made the first time they are wanted.
    private func series(face: Face, method: String, status: Int) -> RequestSeries {
        // Unusual methods are counted together, so a client cannot grow the registry.
        let method = ServerMetrics.knownMethods.contains(method) ? method : "OTHER"
        let counter = requests.withLock { table in
            let key = RequestKey(face: face, method: method, status: status)
            if let existing = table[key] { return existing }
            let made = CoreMetrics.Counter(
                label: "fileshare_http_requests_total",
                dimensions: [("face", face.rawValue), ("method", method), ("status", String(status))], factory: factory)
            table[key] = made
            return made
        }
        let timer = latencies.withLock { table in
            let key = LatencyKey(face: face, method: method)
            if let existing = table[key] { return existing }
            let made = CoreMetrics.Timer(
                label: "fileshare_http_request_duration_seconds",
                dimensions: [("face", face.rawValue), ("method", method)], preferredDisplayUnit: .seconds,
                factory: factory)
            table[key] = made
            return made
        }
        return RequestSeries(face: face, method: method, status: status, counter: counter, timer: timer)
    }

    /// Sets a value read at scrape time (a gauge named `name`).
    func set(_ name: String, to value: Double) {
        let gauge = gauges.withLock { table in
            if let existing = table[name] { return existing }
            let made = CoreMetrics.Gauge(label: name, factory: factory)
            table[name] = made
            return made
        }
        gauge.record(value)
    }

    /// The registry in the Prometheus text format.
    func render() -> [UInt8] { registry.emitToBuffer() }

    static let knownMethods: Set<String> = [
        "GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE",
        "LOCK", "UNLOCK",
    ]

    /// The face a request path belongs to.
    static func face(of path: Substring) -> Face {
        if path == "/metrics" { return .metrics }
        if path.hasPrefix("/dav/") || path == "/dav" { return .webdav }
        if path.hasPrefix("/api/tus") { return .tus }
        if path.hasPrefix("/api/events") { return .events }
        if path.hasPrefix("/api/") || path == "/api" { return .api }
        return .page
    }
}
