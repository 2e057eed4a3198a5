import Hummingbird
import NIOCore

/// The web page at `/`: its HTML, script and style, and the API's OpenAPI
/// document. No external CDN: everything comes from here.
struct PageFace: Sendable {
    /// The routes, to mount at the root.
    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("/") { _, _ in PageFace.asset(WebAssets.html, type: "text/html; charset=utf-8") }
        routes.get("app.js") { _, _ in PageFace.asset(WebAssets.javaScript, type: "text/javascript; charset=utf-8") }
        routes.get("shares.js") { _, _ in PageFace.asset(WebAssets.shares, type: "text/javascript; charset=utf-8") }
        routes.get("gallery.js") { _, _ in PageFace.asset(WebAssets.gallery, type: "text/javascript; charset=utf-8") }
        routes.get("viewer.js") { _, _ in PageFace.asset(WebAssets.viewer, type: "text/javascript; charset=utf-8") }
        routes.get("gallery.css") { _, _ in PageFace.asset(WebAssets.galleryStyle, type: "text/css; charset=utf-8") }
        routes.get("app.css") { _, _ in PageFace.asset(WebAssets.css, type: "text/css; charset=utf-8") }
        routes.get("api/openapi.json") { _, _ in PageFace.asset(OpenAPIDocument.json, type: "application/json") }
        return routes
    }

    static func asset(_ text: String, type: String) -> Response {
        var buffer = ByteBuffer()
        buffer.writeString(text)
        return Response(
            status: .ok,
            headers: [
                .contentType: type, .contentLength: String(buffer.readableBytes), .cacheControl: "no-cache",
                .xContentTypeOptions: "nosniff",
            ],
            body: ResponseBody(byteBuffer: buffer))
    }
}
