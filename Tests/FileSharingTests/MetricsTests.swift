import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

/// `/metrics`: what operators watch, in the Prometheus text format.
@Suite("Metrics")
struct MetricsTests {
    /// The value of one sample line (`name{labels} value`), if the text has it.
    static func value(of sample: String, in text: String) -> Double? {
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1))
        }
        return nil
    }

    @Test("requests are counted by face, method and status, with bytes, connections and the log; no names leak")
    func counted() async throws {
        let share = try ShareFixture()
        try share.write("secret-plans.txt", "hello")
        await share.server.observer.sync()
        try await share.test(.live) { client in
            _ = try await client.request("/api/files/secret-plans.txt")
            _ = try await client.request("/api/files/secret-plans.txt")
            _ = try await client.request("/api/files/missing-name.txt")
            _ = try await client.request("/api/list", authorized: false)
            _ = try await client.request("/api/files/new-name.txt", .put, body: "abc")
            _ = try await client.request("/dav/secret-plans.txt", .init("PROPFIND")!, headers: [.init("Depth")!: "0"])
            await share.server.observer.sync()
            // From the loopback interface: no credentials needed.
            let response = try await client.request("/metrics", authorized: false)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = response.text
            #expect(
                Self.value(of: #"fileshare_http_requests_total{face="api",method="GET",status="200"}"#, in: text) == 2)
            #expect(
                Self.value(of: #"fileshare_http_requests_total{face="api",method="GET",status="404"}"#, in: text) == 1)
            #expect(
                Self.value(of: #"fileshare_http_requests_total{face="api",method="GET",status="401"}"#, in: text) == 1)
            #expect(
                Self.value(of: #"fileshare_http_requests_total{face="api",method="PUT",status="201"}"#, in: text) == 1)
            #expect(
                Self.value(
                    of: #"fileshare_http_requests_total{face="webdav",method="PROPFIND",status="207"}"#, in: text)
                    == 1)
            #expect(
                Self.value(of: #"fileshare_http_request_duration_seconds_count{face="api",method="GET"}"#, in: text)
                    == 4)
            #expect((Self.value(of: "fileshare_received_bytes_total", in: text) ?? 0) > 100)
            #expect((Self.value(of: "fileshare_sent_bytes_total", in: text) ?? 0) > 100)
            #expect((Self.value(of: "fileshare_open_connections", in: text) ?? 0) >= 1)
            // Numbered by now: the two files' added (and finished), at least.
            #expect((Self.value(of: "fileshare_change_log_latest_seq", in: text) ?? 0) >= 1)
            #expect((Self.value(of: "fileshare_change_log_records", in: text) ?? 0) >= 1)
            #expect(Self.value(of: "fileshare_observer_items", in: text) == 2)
            #expect(Self.value(of: "fileshare_leader", in: text) == 1)
            #expect(!text.contains("secret-plans") && !text.contains("missing-name") && !text.contains("new-name"))
        }
    }

    @Test("unusual methods are counted together, so clients cannot grow the registry")
    func unusualMethods() async throws {
        let share = try ShareFixture()
        try await share.test(.live) { client in
            for name in ["REPORT", "SEARCH", "PURGE"] { _ = try await client.request("/dav/", .init(name)!) }
            let text = try await client.request("/metrics", authorized: false).text
            #expect(!text.contains(#"method="REPORT""#) && !text.contains(#"method="PURGE""#))
            #expect(text.contains(#"method="OTHER""#))
        }
    }

    @Test("instruments kept between answers count each answer under its own face, method and status")
    func keptSeries() throws {
        let metrics = ServerMetrics()
        var kept: ServerMetrics.RequestSeries? = nil
        // Each answer, with the kind of the one before it kept: the same kind, then others.
        let answers: [(ServerMetrics.Face, String, Int)] = [
            (.api, "GET", 200), (.api, "GET", 200), (.api, "GET", 304), (.webdav, "GET", 304),
            (.webdav, "HEAD", 304), (.api, "GET", 200), (.api, "PURGE", 200), (.api, "SEARCH", 200),
        ]
        for (face, method, status) in answers {
            metrics.requestAnswered(face: face, method: method, status: status, nanoseconds: 1_000, kept: &kept)
            #expect(kept?.face == face && kept?.status == status)
        }
        let text = String(decoding: metrics.render(), as: UTF8.self)
        let expected: [(String, Double)] = [
            (#"{face="api",method="GET",status="200"}"#, 3), (#"{face="api",method="GET",status="304"}"#, 1),
            (#"{face="webdav",method="GET",status="304"}"#, 1), (#"{face="webdav",method="HEAD",status="304"}"#, 1),
            (#"{face="api",method="OTHER",status="200"}"#, 2),
        ]
        for (labels, count) in expected {
            #expect(Self.value(of: "fileshare_http_requests_total" + labels, in: text) == count, "\(labels)")
        }
        #expect(
            Self.value(of: #"fileshare_http_request_duration_seconds_count{face="api",method="GET"}"#, in: text) == 4)
        #expect(!text.contains(#"method="PURGE""#) && !text.contains(#"method="SEARCH""#))
    }

    @Test("from elsewhere than loopback, /metrics needs credentials")
    func needsCredentialsFromElsewhere() async throws {
        let share = try ShareFixture()
        // Through the router there is no socket, so no loopback address.
        try await share.test(.router) { client in
            #expect(try await client.request("/metrics", authorized: false).status == .unauthorized)
            let response = try await client.request("/metrics")
            #expect(response.status == .ok)
            #expect(response.text.contains("fileshare_leader 1"))
        }
    }

    @Test("addresses on this machine are loopback; others are not")
    func loopback() throws {
        for (address, expected) in [("127.0.0.1", true), ("127.3.4.5", true), ("::1", true), ("10.0.0.1", false)] {
            let socket = try SocketAddress(ipAddress: address, port: 80)
            #expect(ShareContext.isLoopback(socket) == expected, "\(address)")
        }
    }
}
