import FileWatching
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Previews
import Testing

@testable import FileSharing

/// The thumbnails made ahead of time: the queue's logic, then a listed
/// folder whose cache fills with nobody asking for a thumbnail.
@Suite("thumbnails made ahead", .timeLimit(.minutes(10)))
struct ThumbnailsAheadTests {
    static func id(_ number: UInt64) -> ItemID { ItemID(rawValue: number) }

    @Test("bounded: what does not fit is dropped; each item once while queued or being made; one worker")
    func queue() {
        var queue = ThumbnailsAheadQueue<String>(capacity: 3)
        let first = queue.offer([(Self.id(1), "a"), (Self.id(2), "b")])
        #expect(first == .init(queued: 2, alreadyKnown: 0, dropped: 0, startWorker: true))
        // Listed again while waiting: not queued twice, no second worker.
        let second = queue.offer([(Self.id(2), "b"), (Self.id(3), "c"), (Self.id(4), "d"), (Self.id(5), "e")])
        #expect(second == .init(queued: 1, alreadyKnown: 1, dropped: 2, startWorker: false))
        #expect(queue.count == 3)
        let taken = queue.next()
        #expect(taken?.job == "a")
        // Being made: still known, so not queued again; a place freed for another.
        let third = queue.offer([(Self.id(1), "a"), (Self.id(4), "d")])
        #expect(third == .init(queued: 1, alreadyKnown: 1))
        queue.finished(Self.id(1))
        var next = queue.next()
        #expect(next?.job == "b")
        next = queue.next()
        #expect(next?.job == "c")
        next = queue.next()
        #expect(next?.job == "d")
        next = queue.next()
        #expect(next == nil, "the worker ends")
        // Made, then listed again (maybe a new version): queued, and a worker starts.
        let again = queue.offer([(Self.id(1), "a")])
        #expect(again == .init(queued: 1, startWorker: true))
        queue.stop()
        next = queue.next()
        #expect(queue.count == 0 && next == nil)
        let stopped = queue.offer([(Self.id(6), "f")])
        #expect(stopped == .init(dropped: 1))
    }

    @Test("a long run through the queue keeps its order and drops nothing that fits")
    func longRun() {
        var queue = ThumbnailsAheadQueue<Int>(capacity: 1000)
        var seen: [Int] = []
        for round in 0..<10 {
            let jobs = (0..<700).map { (Self.id(UInt64(round * 700 + $0)), round * 700 + $0) }
            let offered = queue.offer(jobs)
            #expect(offered.queued == 700)
            while queue.count > 300, let next = queue.next() {
                seen.append(next.job)
                queue.finished(next.key)
            }
        }
        while let next = queue.next() { seen.append(next.job) }
        #expect(seen == Array(0..<7000))
    }

    /// A JPEG the server needs no library for: the camera's thumbnail is
    /// sent as it is.
    static let photo = TestJPEG.bytes(thumbnail: TestJPEG.bytes(thumbnail: nil, padding: 64), padding: 4096)

    /// The names the cache holds.
    static func kept(_ share: ShareFixture) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: share.path(".fileshare/thumbnails")))?.filter {
            $0.hasSuffix(".jpg")
        } ?? []
    }

    @Test("listing a folder through the API fills the cache with its photos' thumbnails, not from a file being written")
    func listedThroughTheAPI() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try FileManager.default.createDirectory(atPath: share.path("Photos"), withIntermediateDirectories: true)
            for number in 0..<24 {
                try writeFile(Data(Self.photo), to: share.path("Photos/\(number).jpg"))
            }
            try share.write("Photos/notes.txt", "not an image")
            // A photo still being copied: never made from it.
            try writeFile(Data(Self.photo.prefix(100)), to: share.path("Photos/copying.jpg"))
            let writer = try #require(FileHandle(forUpdatingAtPath: share.path("Photos/copying.jpg")))
            try writer.seekToEnd()
            try writer.write(contentsOf: Data(Self.photo.dropFirst(100).prefix(100)))
            let observer = share.server.observer
            #expect(
                await eventually {
                    observer.children(of: ItemPath("Photos"))?.filter { $0.name != "copying.jpg" && !$0.isWriting }
                        .count == 25 && observer.item(at: ItemPath("Photos/copying.jpg"))?.isWriting == true
                })
            let finished = try #require(observer.children(of: ItemPath("Photos"))).filter {
                $0.name.hasSuffix(".jpg") && $0.name != "copying.jpg"
            }
            #expect(finished.count == 24)
            try await share.test { client in
                #expect(Self.kept(share).isEmpty)
                let listing = try await client.request("/api/list?path=Photos")
                #expect(listing.status == .ok)
                #expect(await eventually { Self.kept(share).count == finished.count }, "\(Self.kept(share))")
                let ids = Set(Self.kept(share).map { String($0.prefix(16)) })
                #expect(ids == Set(finished.map(\.id.description)))
                let copying = try #require(observer.item(at: ItemPath("Photos/copying.jpg")))
                #expect(!ids.contains(copying.id.description))
                #expect(share.server.core.thumbnails?.listings == 1, "the cache's folder is listed once")
                // Finished: the next listing makes it too.
                try writer.write(contentsOf: Data(Self.photo.dropFirst(200)))
                try writer.close()
                #expect(await eventually { observer.item(at: ItemPath("Photos/copying.jpg"))?.isWriting == false })
                _ = try await client.request("/api/list?path=Photos")
                #expect(await eventually { Self.kept(share).count == finished.count + 1 })
                // Then asked for: from the cache, the camera's thumbnail.
                let asked = try await client.request("/api/thumbnail/Photos/copying.jpg")
                #expect(asked.status == .ok && asked.headers[.contentType] == "image/jpeg")
            }
        }
    }

    @Test("a WebDAV PROPFIND of a folder fills the cache the same way")
    func listedThroughWebDAV() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            try FileManager.default.createDirectory(atPath: share.path("Camera"), withIntermediateDirectories: true)
            for number in 0..<10 {
                try writeFile(Data(Self.photo), to: share.path("Camera/IMG_\(number).JPG"))
            }
            let observer = share.server.observer
            #expect(
                await eventually {
                    observer.children(of: ItemPath("Camera"))?.filter { !$0.isWriting }.count == 10
                })
            try await share.test { client in
                let listing = try await client.request("/dav/Camera/", .propfind, headers: [.depth: "1"])
                #expect(listing.status.code == 207)
                #expect(await eventually { Self.kept(share).count == 10 }, "\(Self.kept(share))")
            }
        }
    }
}
