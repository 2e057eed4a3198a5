/// The OpenAPI document of the JSON API, served at `/api/openapi.json` (kept
/// in the repository as `openapi.json` too; a test checks they agree).
enum OpenAPIDocument {
    static let json = #"{"openapi":"3.1.0","info":{"title":"fileshare","version":"1"},"paths":{}}"#
}
