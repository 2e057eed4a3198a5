import DocumentTypes
import FileshareTestSupport
import Foundation
import Inbox
import Logging
import Synchronization
import Testing

/// Documents whose names lie about their content, on a real folder:
/// quarantined with the reason by default, taken in under the corrected,
/// clash-free name when names are corrected.
@Suite("Inbox: misleading names")
struct MisleadingNameInboxTests {
    static let pdf = Array("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".utf8)
    static let text = Array("Shopping list\n- bread\n".utf8)

    /// A processed folder with an Inbox holding `files` (folders on the way made).
    static func folder(with files: [String: [UInt8]], function: String = #function) throws -> TemporaryFolder {
        let folder = try TemporaryFolder(function: function)
        for (relative, bytes) in files {
            let parent = (folder("Inbox/" + relative) as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            try folder.write(bytes, to: "Inbox/" + relative)
        }
        return folder
    }

    /// Runs one pass of a processor over `folder`; returns its events and deliveries.
    static func process(_ folder: TemporaryFolder, options: InboxOptions) async throws -> (
        events: [InboxEvent], deliveries: [InboxDelivery]
    ) {
        let events = Mutex<[InboxEvent]>([])
        let deliveries = Mutex<[InboxDelivery]>([])
        let processor = try InboxProcessor(
            root: folder.path, options: options, logger: Logger(label: "test"),
            report: { event in events.withLock { $0.append(event) } },
            handler: { delivery in deliveries.withLock { $0.append(delivery) } })
        try await processor.processOnce()
        return (events.withLock { $0 }, deliveries.withLock { $0 })
    }

    static func names(in path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    @Test("by default a lying name is quarantined with a reason naming both types and the fix; honest names pass")
    func refused() async throws {
        try await MachineSettings.shared {
            let folder = try Self.folder(with: [
                "notes.txt": Self.pdf, "photo.png": Self.text, "sizes.txt": Array("a,b\n1,2\n".utf8),
                "empty.png": [], "report.pdf": Self.pdf,
            ])
            // The Inbox: PDF, PNG and text accepted.
            let accepted = try AcceptedTypes(["com.adobe.pdf", "public.png", .plainText])
            let (events, deliveries) = try await Self.process(folder, options: InboxOptions(acceptedTypes: accepted))
            let reason =
                "the name of 'notes.txt' says plain text document, but the content is a PDF document: "
                + "rename it 'notes.pdf', or have such names corrected (--fix-extensions)"
            #expect(events.contains(.refused(from: "Inbox/notes.txt", path: "Quarantine/notes.txt", reason: reason)))
            let reasonFile = try String(contentsOfFile: folder("Quarantine/notes.txt.reason.txt"), encoding: .utf8)
            #expect(reasonFile.hasPrefix(reason + "\n"))
            #expect(FileManager.default.contents(atPath: folder("Quarantine/notes.txt")) == Data(Self.pdf))
            #expect(
                events.contains {
                    if case .refused("Inbox/photo.png", "Quarantine/photo.png", let why) = $0 {
                        why.contains("says PNG image, but the content is a plain text document")
                            && why.contains("rename it 'photo.txt'")
                    } else {
                        false
                    }
                })
            #expect(deliveries.map(\.relativePath).sorted() == ["empty.png", "report.pdf", "sizes.txt"])
            #expect(Self.names(in: folder("Inbox")).isEmpty)
            #expect(
                Self.names(in: folder("Quarantine")) == [
                    "notes.txt", "notes.txt.reason.txt", "photo.png", "photo.png.reason.txt",
                ])
        }
    }

    @Test("with names corrected, a document is taken in under the corrected name, clash-free, and reported so")
    func corrected() async throws {
        try await MachineSettings.shared {
            let folder = try Self.folder(with: ["notes.txt": Self.pdf, "PHOTO.PNG": Self.text])
            try folder.write("already here", to: "notes.pdf")
            let (events, deliveries) = try await Self.process(
                folder, options: InboxOptions(misleadingNames: .correct))
            #expect(events.contains(.takenIn(from: "Inbox/notes.txt", path: "notes 2.pdf", type: "com.adobe.pdf")))
            #expect(events.contains(.takenIn(from: "Inbox/PHOTO.PNG", path: "PHOTO.txt", type: "public.plain-text")))
            #expect(events.contains(.handled(path: "notes 2.pdf", isRepeat: false)))
            #expect(!events.contains { if case .refused = $0 { true } else { false } })
            #expect(deliveries.map(\.relativePath).sorted() == ["PHOTO.txt", "notes 2.pdf"])
            #expect(deliveries.allSatisfy { $0.path == folder($0.relativePath) })
            #expect(FileManager.default.contents(atPath: folder("notes 2.pdf")) == Data(Self.pdf))
            #expect(try String(contentsOfFile: folder("notes.pdf"), encoding: .utf8) == "already here")
            #expect(Self.names(in: folder("Inbox")).isEmpty)
            #expect(Self.names(in: folder("Quarantine")).isEmpty)
        }
    }

    @Test(
        "a package with a lying name inside: quarantined whole by default; with names corrected, renamed inside",
        arguments: [false, true])
    func package(correcting: Bool) async throws {
        try await MachineSettings.shared {
            let folder = try Self.folder(with: [
                "Album/cover.txt": Self.pdf, "Album/cover.pdf": Self.pdf, "Album/notes.md": Array("# Album\n".utf8),
            ])
            let options = InboxOptions(
                misleadingNames: correcting ? .correct : .refuse, folderSettleTime: .zero,
                settleTime: .milliseconds(50))
            let (events, deliveries) = try await Self.process(folder, options: options)
            if correcting {
                #expect(events.contains(.takenIn(from: "Inbox/Album", path: "Album", type: "public.folder")))
                #expect(deliveries.map(\.relativePath) == ["Album"])
                #expect(Self.names(in: folder("Album")) == ["cover 2.pdf", "cover.pdf", "notes.md"])
                #expect(FileManager.default.contents(atPath: folder("Album/cover 2.pdf")) == Data(Self.pdf))
            } else {
                #expect(deliveries.isEmpty)
                #expect(
                    events.contains {
                        if case .refused("Inbox/Album", "Quarantine/Album", let why) = $0 {
                            why.contains("'cover.txt': the name of 'cover.txt' says plain text document")
                        } else {
                            false
                        }
                    }, "\(events)")
                // As it came: nothing renamed.
                #expect(Self.names(in: folder("Quarantine/Album")) == ["cover.pdf", "cover.txt", "notes.md"])
            }
            #expect(Self.names(in: folder("Inbox")).isEmpty)
        }
    }
}
