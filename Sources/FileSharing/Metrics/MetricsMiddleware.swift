import Dispatch
import Hummingbird
import NIOCore

/// Counts every request by face, method and status, with its time to the
/// response head (a download's body streams after), and answers
/// `GET /metrics` for clients on the loopback interface without credentials;
/// from elsewhere `/metrics` goes on through the authentication like every
/// other path, and ``MetricsFace`` answers it for the signed-in.
///
/// Outermost, so errors mapped by the error middleware and refusals of the
/// authentication are counted with the status the client saw.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = ShareContext
    let metrics: ServerMetrics
    /// Reads the values that are not counted as they happen (the log's length, locks…).
    let snapshot: @Sendable () -> [(String, Double)]

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws -> Response
    {
        let start = DispatchTime.now().uptimeNanoseconds
        let face = ServerMetrics.face(of: request.uri.path[...])
        let response: Response
        do {
            if face == .metrics && request.method == .get && context.isLoopback {
                response = MetricsFace.answer(metrics: metrics, snapshot: snapshot)
            } else {
                response = try await next(request, context)
            }
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            count(request, face: face, status: status, since: start)
            throw error
        }
        count(request, face: face, status: response.status.code, since: start)
        return response
    }

    private func count(_ request: Request, face: ServerMetrics.Face, status: Int, since start: UInt64) {
        let elapsed = DispatchTime.now().uptimeNanoseconds &- start
        metrics.requestAnswered(
            face: face, method: request.method.rawValue, status: status, nanoseconds: Int64(clamping: elapsed))
    }
}

/// `GET /metrics` for signed-in admins (every signed-in client without a
/// users file; loopback clients are answered by ``MetricsMiddleware``).
struct MetricsFace {
    let metrics: ServerMetrics
    let snapshot: @Sendable () -> [(String, Double)]

    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("/metrics") { _, _ in
            // With a users file, for admins only (others: as if it were not there).
            guard Requester.current.seesEverything else { throw ShareError(.notFound, "there is no such page") }
            return MetricsFace.answer(metrics: metrics, snapshot: snapshot)
        }
        return routes
    }

    static func answer(metrics: ServerMetrics, snapshot: @Sendable () -> [(String, Double)]) -> Response {
        for (name, value) in snapshot() { metrics.set(name, to: value) }
        var response = Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.render())))
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
