import FileshareTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fileshare serve` against slow clients and with few descriptors: the real
/// binary, real sockets, the process's own CPU time from `/proc`.
@Suite("fileshare serve: slow clients and descriptor limits")
struct ServeLimitsTests {
    /// The port of `Serving DIR at http://127.0.0.1:PORT/`.
    static func port(of serve: CommandProcess) -> Int? {
        guard let url = serve.lines.first?.split(separator: " ").last else { return nil }
        return Int(url.split(separator: ":").last?.dropLast() ?? "")
    }

    /// `fileshare serve` started by `sh` with `ulimit` options applied first.
    static func serve(_ arguments: [String], ulimit: String? = nil) throws -> CommandProcess {
        guard let ulimit else { return try CommandProcess(["serve"] + arguments) }
        return try CommandProcess(
            ["-c", "ulimit \(ulimit) && exec \"$0\" \"$@\"", CommandProcess.binary, "serve"] + arguments,
            executable: "/bin/sh")
    }

    @Test(
        "300 clients dripping a header byte by byte are closed at the header bound (3 s), with 408; ordinary clients are answered while all 300 are connected"
    )
    func drippingClientsAreClosed() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let serve = try Self.serve([dir.path + "/share", "--port", "0", "--no-auth", "--header-timeout", "3"])
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let port = try #require(Self.port(of: serve))
            // Connected on a thread of their own: 300 blocking connects must
            // not hold one of the cooperative pool's two threads.
            let clients = try await onOwnThread { try DrippingClients(port: port, count: 300) }
            defer { clients.stop() }
            // Every second each sends a byte: an idle timer would never fire.
            // Ordinary requests, one after another, until the last is closed;
            // each notes whether all 300 were still connected when it ended.
            var answers: [(status: String, elapsed: Duration, allOpen: Bool)] = []
            let start = ContinuousClock.now
            while clients.tally.open > 0 && ContinuousClock.now - start < .seconds(30) {
                let request = await onOwnThread { timedRequest(port: port) }
                answers.append((request.status, request.elapsed, clients.tally.closedAfter.isEmpty))
                try await Task.sleep(for: .milliseconds(20))
            }
            let tally = clients.tally
            #expect(tally.open == 0, "\(tally.open) of 300 still connected after 30 s")
            let closed = tally.closedAfter.sorted()
            // The clock starts before the first connection: none is closed before the bound.
            #expect((closed.first ?? .zero) >= .milliseconds(2900), "first closed after \(closed.first ?? .zero)")
            #expect((closed.last ?? .zero) < .seconds(12), "last closed after \(closed.last ?? .zero)")
            #expect(tally.answered408 >= 270, "\(tally.answered408) of 300 answered 408")
            // The promise: the 300 hold nobody up. Every ordinary request is
            // answered, and answers come while all 300 are still connected
            // (not only once the server has dropped them). How fast is a
            // benchmark's question (Benchmarks/serve-run --only slow).
            let failed = answers.filter { $0.status != "HTTP/1.1 200 OK" }
            #expect(
                failed.isEmpty,
                "\(failed.count) of \(answers.count) ordinary requests not answered: \(failed.prefix(3))")
            let meanwhile = answers.filter(\.allOpen).count
            #expect(meanwhile >= 5, "\(meanwhile) ordinary requests answered while all 300 were connected")
            let times = answers.map(\.elapsed).sorted()
            print(
                "dripping clients: closed from \(closed.first ?? .zero) to \(closed.last ?? .zero), \(tally.answered408) answered 408; \(answers.count) ordinary requests, \(meanwhile) while all were connected: median \(times.isEmpty ? .zero : times[times.count / 2]), slowest \(times.last ?? .zero)"
            )
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "with more dripping clients than descriptors, accept pauses instead of spinning, and a real client gets in once they are dropped"
    )
    func exhaustedDescriptors() async throws {
        // Alone: the CPU time measured is the server's, but a busy machine
        // makes every figure noisier.
        try await MachineSettings.alone {
            let dir = try TemporaryFolder()
            let serve = try Self.serve(
                [dir.path + "/share", "--port", "0", "--no-auth", "--header-timeout", "6"], ulimit: "-n 128")
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let port = try #require(Self.port(of: serve))
            let pid = serve.processIdentifier
            #expect(serve.errorOutput.contains("at most about 128 connections"), "\(serve.errorOutput)")
            // About 100 are accepted; the other 70 wait in the listen queue.
            let clients = try DrippingClients(port: port, count: 170)
            defer { clients.stop() }
            // Out of descriptors: about every one is a connection now.
            #expect(
                await waitFor(timeout: .seconds(20)) { openDescriptors(of: pid) >= 124 },
                "\(openDescriptors(of: pid)) descriptors open")
            // A real client, queued behind the slow ones.
            let real = Mutex<(status: String, elapsed: Duration)?>(nil)
            Thread.detachNewThread { real.withLock { $0 = timedRequest(port: port) } }
            // The server's CPU while it has no descriptor left and every slow client is still there.
            let before = try #require(cpuTime(of: pid))
            let windowStart = ContinuousClock.now
            try await Task.sleep(for: .seconds(2))
            let used = try #require(cpuTime(of: pid)) - before
            let window = ContinuousClock.now - windowStart
            let descriptors = openDescriptors(of: pid)
            #expect(clients.tally.closedAfter.isEmpty, "the window ends before the first slow client is dropped")
            #expect(descriptors >= 120, "out of descriptors: \(descriptors) of 128 open")
            #expect(used < window * 0.1, "CPU \(used) in \(window)")
            #expect(await waitFor(timeout: .seconds(40)) { real.withLock { $0 != nil } })
            let answer = try #require(real.withLock { $0 })
            #expect(answer.status == "HTTP/1.1 200 OK")
            #expect(answer.elapsed < .seconds(15), "answered after \(answer.elapsed)")
            #expect(serve.errorOutput.contains("cannot accept connections"), "\(serve.errorOutput)")
            #expect(serve.errorOutput.contains("accepting connections again"), "\(serve.errorOutput)")
            print(
                "out of descriptors (\(descriptors) open, limit 128): CPU \(used) in \(window); a real client answered after \(answer.elapsed)"
            )
            clients.stop()
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test("the soft descriptor limit is raised to the hard one at start, without a line when it is high enough")
    func softLimitRaised() async throws {
        try await MachineSettings.shared {
            let dir = try TemporaryFolder()
            let serve = try Self.serve([dir.path + "/share", "--port", "0", "--no-auth"], ulimit: "-S -n 200")
            #expect(await serve.waitForLine { $0.hasPrefix("Serving ") })
            let limits = try String(contentsOfFile: "/proc/\(serve.processIdentifier)/limits", encoding: .utf8)
            let line = try #require(limits.split(whereSeparator: \.isNewline).first { $0.hasPrefix("Max open files") })
            let values = line.split(separator: " ").dropFirst(3).prefix(2).map(String.init)
            #expect(values.count == 2 && values[0] == values[1] && values[0] != "200", "\(line)")
            // A limit of 4,096 or more is worth no line on every start.
            if let hard = Int(values[1]), hard >= 4096 {
                #expect(!serve.errorOutput.contains("open file limit"), "\(serve.errorOutput)")
            } else {
                #expect(serve.errorOutput.contains("at most about"), "\(serve.errorOutput)")
            }
            serve.send(SIGINT)
            #expect(await serve.exitStatus() == 0)
        }
    }

    @Test(
        "bad limits: exit 2, one line",
        arguments: [["--header-timeout", "0"], ["--keep-alive-timeout", "-1"], ["--body-timeout", "100000"]])
    func badLimits(arguments: [String]) async throws {
        let dir = try TemporaryFolder()
        let run = try CommandProcess(["serve", dir.path + "/new"] + arguments)
        #expect(await run.exitStatus() == 2)
        #expect(run.errorOutput.split(whereSeparator: \.isNewline).count == 1, "\(run.errorOutput)")
        #expect(run.errorOutput.contains(arguments[0]), "\(run.errorOutput)")
    }
}
