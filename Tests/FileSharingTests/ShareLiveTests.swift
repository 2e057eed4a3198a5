import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

#if canImport(Glibc)
    import Glibc
#endif

/// The server on a real socket: what real clients (and broken ones) do.
@Suite("Server, live", .serialized)
struct ShareLiveTests {
    static let credentials = ShareFixture.authorization

    @Test("an interrupted upload leaves nothing visible and nothing in staging")
    func interruptedUpload() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test(.live) { client in
                let port = try #require(client.port)
                let connection = try RawConnection(port: port)
                await connection.send(
                    "PUT /api/files/partial.bin HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareLiveTests.credentials)\r\nContent-Length: 1000000\r\n\r\n"
                )
                await connection.send([UInt8](repeating: 65, count: 300_000))
                // The staging file exists while the body arrives; nothing is visible.
                #expect(await eventually { share.stagingContent().count == 1 })
                #expect(share.visibleTree().isEmpty)
                connection.disconnect()
                #expect(await eventually { share.stagingContent().isEmpty })
                #expect(share.visibleTree().isEmpty)
                // The server goes on serving.
                #expect(try await client.request("/api/info").status == .ok)
            }
        }
    }

    @Test("two uploads to one name at once: both complete, the file is one of them whole")
    func concurrentUploads() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let first = String(repeating: "A", count: 3_000_000)
            let second = String(repeating: "B", count: 3_000_000)
            try await share.test(.live) { client in
                async let a = client.request("/api/files/same.bin", .put, body: first)
                async let b = client.request("/api/files/same.bin", .put, body: second)
                let statuses = try await [a.status, b.status]
                #expect(statuses.allSatisfy { $0 == .created || $0 == .ok }, "\(statuses)")
            }
            let content = share.read("same.bin")
            #expect(content == first || content == second)
            #expect(share.stagingContent().isEmpty)
        }
    }

    @Test("huge headers are refused and the server goes on; idle and slow clients do not block others")
    func badClients() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test(.live) { client in
                let port = try #require(client.port)
                let huge = try RawConnection(port: port)
                await huge.send(
                    "GET /api/info HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "h", count: 200_000))\r\n\r\n")
                let answer = await huge.receive(until: "\r\n\r\n")
                #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 4"), "\(answer.prefix(40))")
                // Fifty connections that send nothing, and one that sends a byte at a time.
                let idle = try (0..<50).map { _ in try RawConnection(port: port) }
                let slow = try RawConnection(port: port)
                await slow.send("GET /api/inf")
                let start = ContinuousClock.now
                #expect(try await client.request("/api/info").status == .ok)
                #expect(ContinuousClock.now - start < .seconds(2))
                _ = idle
            }
        }
    }

    @Test(
        "server-sent events: a file made on disk arrives within a second; the server's own changes carry their origin")
    func events() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test(.live) { client in
                let port = try #require(client.port)
                // curl, a real client, holds the stream for four seconds.
                let curl = Process()
                curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
                curl.arguments = [
                    "-sN", "-i", "--max-time", "6", "-u", "alice:secret", "http://127.0.0.1:\(port)/api/events",
                ]
                let output = Pipe()
                curl.standardOutput = output
                try curl.run()
                // Once curl is subscribed (however long it takes to start), make the changes.
                #expect(await eventually { share.server.changeStream.openStreams == 1 })
                try share.write("from-disk.txt", "d")
                await share.server.observer.sync()
                _ = try await client.request("/api/files/from-api.txt", .put, body: "a")
                // Read on a thread of its own: the stream is written by this process's server.
                let reader = output.fileHandleForReading
                let text = await onOwnThread { String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) }
                curl.waitUntilExit()
                #expect(text.contains("text/event-stream"))
                #expect(text.contains("retry: 1000"))
                let lines = text.split(separator: "\n").filter { $0.hasPrefix("data: ") }
                let disk = lines.first { $0.contains(#""type":"added","path":"from-disk.txt""#) }
                #expect(disk != nil && disk?.contains("origin") == false, "\(lines)")
                let api = lines.first { $0.contains(#""type":"added","path":"from-api.txt""#) }
                #expect(
                    api?.contains(#""origin":{"by":"server","face":"api","client":"127.0.0.1:"#) == true, "\(lines)")
                #expect(api?.contains(#""user":"alice""#) == true)
            }
        }
    }

    @Test("a full disk: 507, nothing left behind")
    func fullDisk() async throws {
        try Requirement.requireRoot(for: "mounting a small disk")
        try await MachineSettings.shared {
            let done: Void? = try await SmallDisk.with(size: "1m") { mountPoint in
                let share = try ShareFixture(root: mountPoint + "/share")
                try await share.test(.live) { client in
                    let port = try #require(client.port)
                    // Announced too large: refused before a byte is written.
                    let announced = try await client.request(
                        "/api/files/big.bin", .put, body: String(repeating: "x", count: 2_000_000))
                    #expect(announced.status.code == 507)
                    // Chunked, so the size is not known: the disk fills up while writing.
                    let connection = try RawConnection(port: port)
                    var request =
                        "PUT /api/files/chunked.bin HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareLiveTests.credentials)\r\nTransfer-Encoding: chunked\r\n\r\n"
                    let chunk = String(repeating: "y", count: 65536)
                    for _ in 0..<32 { request += String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n" }
                    request += "0\r\n\r\n"
                    await connection.send(request)
                    let answer = await connection.receive(until: "}")
                    #expect(answer.hasPrefix("HTTP/1.1 507"), "\(answer.prefix(60))")
                    #expect(answer.contains("disk is full"))
                }
                #expect(share.visibleTree().isEmpty)
                #expect(share.stagingContent().isEmpty)
            }
            if done == nil { Issue.record("cannot mount a small tmpfs here: \(String(cString: strerror(errno)))") }
        }
    }

    @Test("Expect: 100-continue is answered at once, then the upload completes")
    func expectContinue() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try await share.test(.live) { client in
                let connection = try RawConnection(port: try #require(client.port))
                await connection.send(
                    "PUT /api/files/e.bin HTTP/1.1\r\nHost: x\r\nAuthorization: \(ShareLiveTests.credentials)\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
                )
                #expect(await connection.receive(until: "\r\n\r\n").hasPrefix("HTTP/1.1 100 Continue"))
                await connection.send("hello")
                #expect(await connection.receive(until: "}").contains("HTTP/1.1 201"))
            }
            #expect(share.read("e.bin") == "hello")
        }
    }
}

/// Waits (up to ten seconds) for a condition.
func eventually(_ condition: () -> Bool) async -> Bool {
    // Bounded by the clock, not by a count of sleeps: on a CI machine busy
    // with the rest of the suite, files took more than the ten seconds a
    // thousand sleeps came to before they settled as finished.
    let end = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
