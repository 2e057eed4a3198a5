import FileshareTestSupport
import Foundation

/// What curl got back for one request.
struct CurlResponse: Sendable {
    /// The status of the final response (0 when there was none).
    var status: Int
    /// The final response's header fields, in order.
    var headers: [(name: String, value: String)]
    var body: String

    /// The value of the last header field with this name (case-insensitive).
    func header(_ name: String) -> String? {
        headers.last { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Runs curl (silent, 10 seconds at most) and returns (status, body).
func curl(_ arguments: [String]) async throws -> (Int, String) {
    let response = try await curlResponse(arguments)
    return (response.status, response.body)
}

/// Runs curl (silent, 10 seconds at most) and returns the status, the header
/// fields and the body of the final response (after any `100 Continue`).
///
/// Waited for on a thread of its own: a test that blocked the cooperative
/// pool on curl for up to ten seconds would hold one of its two threads from
/// every other test, and from the servers that run in the test process.
func curlResponse(_ arguments: [String]) async throws -> CurlResponse {
    try await onOwnThread { try blockingCurlResponse(arguments) }
}

/// ``curlResponse(_:)`` for code already on a thread of its own.
func blockingCurlResponse(_ arguments: [String]) throws -> CurlResponse {
    // The header block goes to standard error, the body and the status to standard output.
    let run = try ProgramRun.blocking(
        "/usr/bin/curl",
        ["-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "10", "-D", "/dev/stderr"] + arguments)
    let text = run.output
    let headerText = run.errorOutput
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    var headers: [(name: String, value: String)] = []
    for line in headerText.split(separator: "\r\n") {
        if line.hasPrefix("HTTP/") {
            headers = []
        } else if let colon = line.firstIndex(of: ":") {
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
    }
    return CurlResponse(
        status: Int(lines.last ?? "") ?? 0, headers: headers, body: lines.dropLast().joined(separator: "\n"))
}
