import Accounts
import FileshareTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing

@testable import FileSharing

/// Requests for one answer share its making, and never get one that began
/// before they asked.
@Suite("Coalesced work")
struct CoalescedWorkTests {
    @Test("the state: a request starts a making, queues the next, or waits for the queued one; keys are apart")
    func state() {
        var state = CoalescedWorkState<String>()
        #expect(state.arrive("a") == .start(id: 1))
        #expect(state.arrive("b") == .start(id: 2), "another key does not wait")
        // While 1 runs, the next request queues 3 behind it, and the others wait for 3.
        #expect(state.arrive("a") == .queue(id: 3, after: 1))
        #expect(state.arrive("a") == .wait(id: 3))
        #expect(state.arrive("a") == .wait(id: 3))
        #expect(state.waiting == 3)
        #expect(state.busyKeys == 2)
        state.ended(1, of: "a")
        // Between 1's end and 3's beginning, a request still waits for 3: it has not begun.
        #expect(state.arrive("a") == .wait(id: 3))
        state.begin(3, of: "a")
        #expect(state.waiting == 0)
        // 3 runs: the next request queues 4.
        #expect(state.arrive("a") == .queue(id: 4, after: 3))
        state.ended(3, of: "a")
        state.begin(4, of: "a")
        state.ended(4, of: "a")
        state.ended(2, of: "b")
        #expect(state.busyKeys == 0, "nothing kept once every making ended")
        #expect(state.arrive("a") == .start(id: 5))
    }

    @Test("callers at random moments each get a making that began after they asked")
    func neverOlder() async throws {
        let work = CoalescedWork<Int, Int>()
        let started = Counter()
        let makings = Counter()
        let callers = 400
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for _ in 0..<(caller % 7) { await Task.yield() }
                    let key = caller % 2
                    // Read before asking: a making that began before this is older than the request.
                    let before = started.value
                    let got = try await work.value(for: key) {
                        let number = started.next()
                        _ = makings.next()
                        for _ in 0..<3 { await Task.yield() }
                        return number
                    }
                    #expect(got > before, "caller \(caller) got making \(got), begun before it asked (\(before) had)")
                }
            }
            try await group.waitForAll()
        }
        #expect(work.busyKeys == 0)
        #expect(makings.value <= callers)
    }

    @Test("fifty requests that arrive during one making share the next: two makings in all")
    func fiftyShareTheNext() async throws {
        let work = CoalescedWork<String, Int>()
        let gate = Gate()
        let makings = Counter()
        @Sendable func make() async -> Int {
            let number = makings.next()
            if number == 1 { await gate.wait() }
            return number
        }
        let first = Task { try await work.value(for: "Big", make: make) }
        #expect(await waitUntil { makings.value == 1 })
        let others = (0..<50).map { _ in Task { try await work.value(for: "Big", make: make) } }
        #expect(await waitUntil { work.waiting == 50 })
        // Another folder is not held up by this one.
        #expect(try await work.value(for: "Small") { 99 } == 99)
        gate.open()
        #expect(try await first.value == 1)
        for other in others { #expect(try await other.value == 2) }
        #expect(makings.value == 2)
        #expect(work.busyKeys == 0)
    }

    @Test("an error reaches everyone sharing the making; the next request makes afresh")
    func errorsAreShared() async throws {
        struct Refused: Error {}
        let work = CoalescedWork<String, Int>()
        let gate = Gate()
        let makings = Counter()
        @Sendable func make() async throws -> Int {
            let number = makings.next()
            if number == 1 { await gate.wait() }
            if number == 2 { throw Refused() }
            return number
        }
        let first = Task { try await work.value(for: "k", make: make) }
        #expect(await waitUntil { makings.value == 1 })
        let others = (0..<5).map { _ in Task { try await work.value(for: "k", make: make) } }
        #expect(await waitUntil { work.waiting == 5 })
        gate.open()
        #expect(try await first.value == 1)
        for other in others { await #expect(throws: Refused.self) { try await other.value } }
        #expect(try await work.value(for: "k", make: make) == 3)
    }

    @Test("a caller that stops waiting does not stop the making others wait for")
    func cancelledCaller() async throws {
        let work = CoalescedWork<String, String>()
        let gate = Gate()
        let first = Task {
            try await work.value(for: "k") {
                await gate.wait()
                // The making runs in a task of its own: the first caller's cancellation is not its.
                return Task.isCancelled ? "cancelled" : "made"
            }
        }
        #expect(await waitUntil { work.busyKeys == 1 })
        first.cancel()
        let second = Task { try await work.value(for: "k") { "next" } }
        #expect(await waitUntil { work.waiting == 1 })
        gate.open()
        #expect(try await first.value == "made")
        #expect(try await second.value == "next")
    }

    /// Waits, a millisecond at a time, up to 10 s, for `condition`.
    func waitUntil(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<10_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }
}

/// A number counted up from several tasks.
private final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .sequentiallyConsistent) }

    /// Counts one more, and returns the new count.
    func next() -> Int { count.add(1, ordering: .sequentiallyConsistent).newValue }
}

/// Holds its waiters until it is opened; after that, waiting returns at once.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Shared answers through the server: clients browsing one folder at once.
@Suite("Coalesced listings, live")
struct CoalescedListingLiveTests {
    @Test(
        "while others keep listing a folder, a client that adds a file and then lists sees it, by PROPFIND and /api/list; a reader listing beside a writer never sees what the rules hide"
    )
    func readYourWrites() async throws {
        let folder = try TemporaryFolder()
        let usersFile = folder("users.json")
        try UsersFile.write(try AccessFixture.directory(), to: usersFile)
        let share = try ShareFixture(credentials: false, users: usersFile)
        for index in 0..<600 { try share.write("Team/A rather long name for a plan, number \(index).txt", "p") }
        try share.write("Team/Secret/code.txt", "code")
        try await share.test(.live) { client in
            let port = try #require(client.port)
            #expect(
                await eventuallyTrue {
                    let answer = try await AccessMatrixTests.send(client, "writer", "GET", "/api/list?path=Team")
                    return (answer.json["items"] as? [Any])?.count == 601
                })
            // Two clients list the folder all along, each as a user of its
            // own, both faces in turn: a making of each is nearly always under way.
            let answers = folder("answers")
            try FileManager.default.createDirectory(atPath: answers, withIntermediateDirectories: true)
            let base = "http://127.0.0.1:\(port)"
            let script = """
                lister() {
                    i=0
                    while [ ! -e "$0/stop" ]; do
                        i=$((i+1))
                        curl -s -u "$1:$1-pw" -X PROPFIND -H 'Depth: 1' "\(base)/dav/Team/" -o "$0/$1-dav-$i.xml"
                        curl -s -u "$1:$1-pw" "\(base)/api/list?path=Team" -o "$0/$1-api-$i.json"
                    done
                }
                lister reader & lister writer & wait
                """
            // The writer adds a file, then lists: its own change is in the answer.
            @Sendable func addAndList() async throws {
                for index in 0..<15 {
                    let name = "new-\(index).txt"
                    let put = try await AccessMatrixTests.send(client, "writer", "PUT", "/dav/Team/" + name, [:], "n")
                    #expect(put.status == .created)
                    let dav = try await AccessMatrixTests.send(
                        client, "writer", "PROPFIND", "/dav/Team/", ["Depth": "1"])
                    #expect(dav.status.code == 207)
                    #expect(dav.text.contains("<D:href>/dav/Team/\(name)</D:href>"), "PROPFIND after PUT \(index)")
                    let upload = try await AccessMatrixTests.send(
                        client, "writer", "PUT", "/api/files/Team/api-" + name, [:], "a")
                    #expect(upload.status == .created)
                    let listed = try await AccessMatrixTests.send(client, "writer", "GET", "/api/list?path=Team")
                    let names = (listed.json["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                    #expect(names.contains("api-" + name), "listing after upload \(index)")
                }
            }
            let listers = try ProcessGroup(["/bin/sh", "-c", script, answers], output: folder("listers.log"))
            // On every way out: told to stop, then killed if they do not.
            func stopListers() async {
                FileManager.default.createFile(atPath: answers + "/stop", contents: nil)
                await listers.waitForExit(timeout: .seconds(30))
            }
            do {
                try await addAndList()
            } catch {
                await stopListers()
                throw error
            }
            await stopListers()
            let files = try FileManager.default.contentsOfDirectory(atPath: answers).filter { $0 != "stop" }
            var checked = (reader: 0, writer: 0)
            for file in files {
                let text = try String(contentsOfFile: answers + "/" + file, encoding: .utf8)
                let reader = file.hasPrefix("reader")
                if file.hasSuffix(".xml") {
                    let items = text.components(separatedBy: "<D:response>").count - 1
                    #expect(items >= 601, "\(file): \(items) items")
                    #expect(text.contains("/dav/Team/Secret/") != reader, "\(file): what the rules hide")
                } else {
                    let json = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                    let names = (json?["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                    #expect(names.count >= 600, "\(file): \(names.count) items")
                    #expect(names.contains("Secret") != reader, "\(file): what the rules hide")
                }
                if reader { checked.reader += 1 } else { checked.writer += 1 }
            }
            #expect(checked.reader >= 2 && checked.writer >= 2, "\(checked)")
        }
    }
}
