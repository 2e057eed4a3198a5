/// The OpenAPI document of the JSON API, served at `/api/openapi.json`: the
/// file `Resources/openapi.json`, embedded in the binary by SwiftPM.
enum OpenAPIDocument {
    static let json = String(decoding: PackageResources.openapi_json, as: UTF8.self)
}
