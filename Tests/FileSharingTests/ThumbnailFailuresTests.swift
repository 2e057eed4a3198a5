import Previews
import Testing

@testable import FileSharing

/// The thumbnails that could not be made, remembered by content version:
/// what is remembered, what is not, and the bound.
@Suite("thumbnail failures")
struct ThumbnailFailuresTests {
    @Test(
        "a failure about the file's content is remembered by its version; a missing library or an unfinished file is not"
    )
    func remembered() {
        var failures = ThumbnailFailures(capacity: 8)
        for reason in [ThumbnailError.Reason.failed, .tooCostly, .timedOut, .noImage] {
            failures.remember(ThumbnailError(reason, "\(reason)"), named: "1-100-2000-\(reason).jpg")
            #expect(failures.failure(named: "1-100-2000-\(reason).jpg")?.reason == reason)
        }
        for reason in [ThumbnailError.Reason.libraryMissing, .programMissing, .notThisKind, .unfinished, .tookTooLong] {
            failures.remember(ThumbnailError(reason, "\(reason)"), named: "2-100-2000-\(reason).jpg")
            #expect(failures.failure(named: "2-100-2000-\(reason).jpg") == nil, "\(reason)")
        }
        // Another version of the same item is another name: tried afresh.
        #expect(failures.failure(named: "1-101-2000-failed.jpg") == nil)
        #expect(failures.count == 4)
    }

    @Test("bounded: past its capacity the oldest failure is forgotten first")
    func bounded() {
        var failures = ThumbnailFailures(capacity: 100)
        for index in 0..<1_000 { failures.remember(ThumbnailError(.failed, "\(index)"), named: "\(index)") }
        #expect(failures.count == 100)
        #expect(failures.failure(named: "899") == nil && failures.failure(named: "900")?.message == "900")
        #expect(failures.failure(named: "999")?.message == "999")
        // Remembered again: no second place in the order.
        failures.remember(ThumbnailError(.failed, "again"), named: "950")
        #expect(failures.count == 100 && failures.failure(named: "950")?.message == "again")
        var none = ThumbnailFailures(capacity: 0)
        none.remember(ThumbnailError(.failed, "x"), named: "x")
        #expect(none.failure(named: "x") == nil)
    }

    @Test("a failed flight is remembered: the next ask gets its error without making it again")
    func flights() async throws {
        let flights = ThumbnailFlights(failures: 16)
        let made = Counter()
        for _ in 0..<3 {
            await #expect(throws: ThumbnailError.self) {
                _ = try await flights.thumbnail(named: "7-1-1.jpg") { () async throws(ThumbnailError) -> [UInt8] in
                    await made.add()
                    throw ThumbnailError(.tooCostly, "too costly")
                }
            }
        }
        #expect(await made.value == 1)
        #expect(flights.failureCount == 1 && flights.count == 0)
        // A file still being written: asked again, made again.
        for _ in 0..<2 {
            _ = try? await flights.thumbnail(named: "8-1-1.jpg") { () async throws(ThumbnailError) -> [UInt8] in
                await made.add()
                throw ThumbnailError(.unfinished, "being written")
            }
        }
        #expect(await made.value == 3)
    }

    actor Counter {
        var value = 0
        func add() { value += 1 }
    }
}
