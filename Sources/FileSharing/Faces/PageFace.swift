import HTTPTypes
import Hummingbird
import NIOCore

/// The web page at `/`: its HTML, script and style, and the API's OpenAPI
/// document. No external CDN: everything comes from here.
struct PageFace: Sendable {
    /// The routes, to mount at the root.
    func routes() -> RouteCollection<ShareContext> {
        let routes = RouteCollection(context: ShareContext.self)
        routes.get("/") { _, _ in PageFace.page(WebAssets.html) }
        routes.get("app.js") { _, _ in PageFace.asset(WebAssets.javaScript, type: "text/javascript; charset=utf-8") }
        routes.get("shares.js") { _, _ in PageFace.asset(WebAssets.shares, type: "text/javascript; charset=utf-8") }
        routes.get("gallery.js") { _, _ in PageFace.asset(WebAssets.gallery, type: "text/javascript; charset=utf-8") }
        routes.get("viewer.js") { _, _ in PageFace.asset(WebAssets.viewer, type: "text/javascript; charset=utf-8") }
        routes.get("gallery.css") { _, _ in PageFace.asset(WebAssets.galleryStyle, type: "text/css; charset=utf-8") }
        routes.get("app.css") { _, _ in PageFace.asset(WebAssets.css, type: "text/css; charset=utf-8") }
        routes.get("api/openapi.json") { _, _ in PageFace.asset(OpenAPIDocument.json, type: "application/json") }
        return routes
    }

    /// What the page may load and do: its own scripts, styles and the
    /// share's files (previews of images, video, audio and PDFs, pages of
    /// comics made in the browser), nothing from elsewhere, and no other
    /// site may frame it (a framed page can be made to click for its visitor).
    static let contentSecurityPolicy =
        "default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; frame-src 'self'; "
        + "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// An HTML page of the share's own, with ``contentSecurityPolicy``.
    static func page(_ html: String, policy: String = contentSecurityPolicy) -> Response {
        var response = asset(html, type: "text/html; charset=utf-8")
        response.headers[.contentSecurityPolicy] = policy
        response.headers[.xFrameOptions] = "DENY"
        return response
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

extension HTTPField.Name {
    /// For browsers older than `frame-ancestors`.
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
}
