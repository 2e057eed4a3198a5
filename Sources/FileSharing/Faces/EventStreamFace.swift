import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /api/events`: the observer's changes as server-sent events, each
/// `data:` one event object of `events.md`. The stream is the core's
/// (``ShareCore/subscribe()``); this face only writes it out.
struct EventStreamFace: Sendable {
    let core: ShareCore

    /// The route, to mount at `/api`.
    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("events") { _, _ in self.events() }
        return routes
    }

    func events() -> Response {
        let (lines, end) = core.subscribe()
        let body = ResponseBody { writer in
            // The stream ends when the server shuts down, so the shutdown
            // does not wait for clients that never hang up.
            try await withGracefulShutdownHandler {
                var buffer = ByteBuffer()
                buffer.writeString("retry: 1000\n\n")
                try await writer.write(buffer)
                for await line in lines {
                    var buffer = ByteBuffer()
                    if line.hasPrefix(":") {
                        buffer.writeString(line + "\n\n")  // a comment: keeps proxies from closing a quiet stream
                    } else {
                        buffer.writeString("data: " + line + "\n\n")
                    }
                    try await writer.write(buffer)
                }
            } onGracefulShutdown: {
                end()
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                      .init("X-Accel-Buffering")!: "no"],
            body: body)
    }
}
