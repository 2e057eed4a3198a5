import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

/// The JSON API holds requests to the shape its OpenAPI document gives them.
@Suite("JSON API, request shape")
struct RouteShapeTests {
    @Test(
        "a method a path does not take is 405 with Allow, not 404",
        arguments: [
            ("TRACE", "/api/info", "GET"), ("POST", "/api/list", "GET"),
            ("PATCH", "/api/files/a.txt", "GET, HEAD, PUT, DELETE"), ("GET", "/api/mkdir", "POST"),
            ("PUT", "/api/uploads/0123456789abcdef0123456789abcdef", "PATCH, HEAD, DELETE"),
            ("DELETE", "/api/changes", "GET"), ("OPTIONS", "/api/events", "GET"),
        ])
    func methodNotAllowed(method: String, uri: String, allow: String) async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("a.txt", "a")
            try await share.test { (client: any TestClientProtocol) async throws in
                let response = try await client.request(uri, HTTPRequest.Method(method)!)
                #expect(response.status == .methodNotAllowed, "\(response.text)")
                #expect(response.headers[.allow] == allow)
                #expect(response.json["error"] is String)
                // Credentials come first.
                #expect(
                    try await client.request(uri, HTTPRequest.Method(method)!, authorized: false).status
                        == .unauthorized)
            }
            #expect(share.read("a.txt") == "a")
        }
    }

    @Test(
        "a query parameter the operation does not take is 400; those it takes pass",
        arguments: [
            ("/api/list?pth=docs", 400), ("/api/list?path=docs&x=1", 400), ("/api/info?verbose", 400),
            ("/api/files/docs/a.txt?path=x", 400), ("/api/changes?since=0&limit=5&page=2", 400),
            ("/api/list?path=docs", 200), ("/api/files/docs/a.txt?download", 200),
            ("/api/files/docs/a.txt?download=1", 200), ("/api/changes?since=0&limit=5", 200),
            ("/api/thumbnail/docs/a.txt?v=17", 415), ("/api/zip?path=docs", 200), ("/api/list?", 200),
            ("/api/list?%70ath=docs", 200), ("/api/list?%ff=1", 400),
        ])
    func queryParameters(uri: String, status: Int) async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try share.write("docs/a.txt", "a")
            try await share.test { (client: any TestClientProtocol) async throws in
                _ = try await eventuallyItems(client, "docs", count: 1)
                let response = try await client.request(uri)
                #expect(Int(response.status.code) == status, "\(uri): \(response.text.prefix(200))")
            }
        }
    }

    @Test("/api/events: a malformed since is 400 even beside a Last-Event-ID")
    func eventsSince() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                let response = try await client.request(
                    "/api/events?since=-1", headers: [HTTPField.Name("Last-Event-ID")!: "0"])
                #expect(response.status == .badRequest)
            }
        }
    }

    @Test("POST /api/uploads without its required Upload-Length is 400, whatever the path")
    func missingUploadLength() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test { (client: any TestClientProtocol) async throws in
                #expect(try await client.request("/api/uploads?path=", .post).status == .badRequest)
                #expect(try await client.request("/api/uploads?path=a.bin", .post).status == .badRequest)
            }
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("the OpenAPI document describes exactly the operations the server takes")
    func documentMatchesRoutes() throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var documented: Set<String> = []
        var documentedQueries: [String: Set<String>] = [:]
        for (path, item) in paths {
            for (method, operation) in item where method != "parameters" {
                let key = method.uppercased() + " " + path
                documented.insert(key)
                let parameters = (operation as? [String: Any])?["parameters"] as? [[String: Any]] ?? []
                documentedQueries[key] = Set(
                    parameters.filter { $0["in"] as? String == "query" }.compactMap { $0["name"] as? String })
            }
        }
        // The table's patterns, written as the document's templates.
        func template(_ pattern: RouteShapeMiddleware.Pattern) -> String {
            switch pattern {
            case .exact(let path): path
            case .below(let prefix): prefix + "{path}"
            case .segment(let prefix): prefix + "{token}"
            }
        }
        let served = RouteShapeMiddleware.operations.filter {
            if case .exact("/api/openapi.json") = $0.pattern { false } else { true }
        }
        #expect(Set(served.map { $0.method.rawValue + " " + template($0.pattern) }) == documented)
        for operation in served {
            let key = operation.method.rawValue + " " + template(operation.pattern)
            #expect(documentedQueries[key] == operation.query, "\(key)")
        }
    }
}
