import DocumentTypes
import FileshareTestSupport
import Foundation
import Inbox
import Logging
import Synchronization
import Testing

/// The library on a real folder: the handler closure, its failures, the events.
@Suite("Inbox processor")
struct InboxProcessorTests {
    @Test(
        "the handler closure gets each document once with where it came from; a failing handler is reported, not retried"
    )
    func handler() async throws {
        try await MachineSettings.shared {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: root) }
            try FileManager.default.createDirectory(atPath: root + "/Inbox", withIntermediateDirectories: true)
            try writeFile("%PDF-1.4\n%%EOF\n".utf8, to: root + "/Inbox/a.pdf")
            try writeFile("words\n".utf8, to: root + "/Inbox/fails.txt")
            let deliveries = Mutex<[InboxDelivery]>([])
            let events = Mutex<[InboxEvent]>([])
            struct Refused: Error {}
            let processor = try InboxProcessor(
                root: root,
                options: InboxOptions(acceptedTypes: try AcceptedTypes(["com.adobe.pdf", "public.plain-text"])),
                logger: Logger(label: "test"), report: { event in events.withLock { $0.append(event) } },
                handler: { delivery in
                    deliveries.withLock { $0.append(delivery) }
                    if delivery.relativePath == "fails.txt" { throw Refused() }
                })
            try await processor.processOnce()
            let got = deliveries.withLock { $0 }.sorted { $0.relativePath < $1.relativePath }
            #expect(got.map(\.relativePath) == ["a.pdf", "fails.txt"])
            #expect(got.map(\.source) == ["Inbox/a.pdf", "Inbox/fails.txt"])
            #expect(got.map(\.typeIdentifier) == ["com.adobe.pdf", "public.plain-text"])
            #expect(got.allSatisfy { !$0.isRepeat && $0.path == processor.root + "/" + $0.relativePath })
            let reported = events.withLock { $0 }
            #expect(
                reported.contains {
                    if case .error(let message, "fails.txt") = $0 { message.contains("handler failed") } else { false }
                })
            #expect(reported.contains(.handled(path: "a.pdf", isRepeat: false)))
            // A second run finds nothing to do: the handler is not called again.
            try await processor.processOnce()
            #expect(deliveries.withLock { $0.count } == 2)
        }
    }
}
