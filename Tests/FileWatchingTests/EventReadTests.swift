import Foundation
import Synchronization
import Testing

@testable import FileWatching

/// How the observer reads the kernel's queue: a rename whose two halves a
/// read split (the renaming thread preempted between them) still arrives
/// whole, so the core pairs it as a move rather than a removal and an arrival.
@Suite("Reading events")
struct EventReadTests {
    /// A source whose queue the test fills; a pipe makes its descriptor
    /// readable when events are queued, as inotify's is.
    final class QueueSource: EventSource, Sendable {
        private let queue = Mutex<[SourceEvent]>([])
        private let pipe: (read: Int32, write: Int32)

        init() throws {
            var fds: [Int32] = [0, 0]
            try #require(Foundation.pipe(&fds) == 0)
            pipe = (fds[0], fds[1])
        }

        deinit {
            close(pipe.read)
            close(pipe.write)
        }

        var descriptor: Int32 { pipe.read }

        func push(_ events: [SourceEvent]) {
            queue.withLock { $0 += events }
            var byte: UInt8 = 1
            _ = write(pipe.write, &byte, 1)
        }

        func readAvailable(into events: inout [SourceEvent]) -> Int {
            let queued = queue.withLock { queue in
                defer { queue.removeAll() }
                return queue
            }
            if !queued.isEmpty {
                var drain = [UInt8](repeating: 0, count: 64)
                _ = read(pipe.read, &drain, drain.count)
            }
            events += queued
            return queued.count
        }
    }

    static func from(_ name: String) -> SourceEvent {
        SourceEvent(watch: 1, kind: .movedFrom(cookie: 7), name: Array(name.utf8))
    }

    static func to(_ name: String) -> SourceEvent {
        SourceEvent(watch: 2, kind: .movedTo(cookie: 7), name: Array(name.utf8))
    }

    @Test("a rename split across two reads: the second half, queued 20 ms later, is read with the first")
    func splitRename() throws {
        let source = try QueueSource()
        source.push([SourceEvent(watch: 1, kind: .created, name: Array("a".utf8)), Self.from("b")])
        let late = Thread {
            Thread.sleep(forTimeInterval: 0.02)
            source.push([Self.to("c")])
        }
        late.start()
        var events: [SourceEvent] = []
        ObserverState.readAll(source, into: &events, pairingWait: .seconds(10))
        #expect(events.count == 3)
        #expect(events.last == Self.to("c"))
        #expect(!ObserverState.hasUnpairedMoveFrom(events))
    }

    @Test("a move out of the tree has no second half: the read gives up after the pairing wait")
    func moveOut() throws {
        let source = try QueueSource()
        source.push([Self.from("b")])
        var events: [SourceEvent] = []
        let clock = ContinuousClock()
        let took = clock.measure { ObserverState.readAll(source, into: &events, pairingWait: .milliseconds(30)) }
        #expect(events == [Self.from("b")])
        #expect(took >= .milliseconds(30))
        // Other events arriving meanwhile are read, and do not end the wait early.
        source.push([Self.from("d")])
        let second = Thread {
            Thread.sleep(forTimeInterval: 0.005)
            source.push([SourceEvent(watch: 1, kind: .modified, name: Array("e".utf8))])
        }
        second.start()
        events = []
        ObserverState.readAll(source, into: &events, pairingWait: .milliseconds(300))
        #expect(events.count == 2)
    }
}
