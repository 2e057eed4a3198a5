import Previews
import Synchronization

/// The thumbnails being made now, by cache name: a request for one the
/// background worker (or another request) is making waits for that one
/// instead of decoding the same file a second time beside it (twice the
/// time and twice the memory of a large image).
final class ThumbnailFlights: Sendable {
    private let flights = Mutex<[String: Task<Result<[UInt8], ThumbnailError>, Never>]>([:])

    /// The thumbnail named `name`: made by `make` here, or by the flight
    /// already under way. The flight runs to its end even when this caller
    /// stops waiting, so what `make` uses must outlive it: the callers wait.
    func thumbnail(
        named name: String, make: @escaping @Sendable () async throws(ThumbnailError) -> [UInt8]
    ) async throws(ThumbnailError) -> [UInt8] {
        let (task, mine) = flights.withLock { table in
            if let running = table[name] { return (running, false) }
            let task = Task { () -> Result<[UInt8], ThumbnailError> in
                do throws(ThumbnailError) { return .success(try await make()) } catch { return .failure(error) }
            }
            table[name] = task
            return (task, true)
        }
        let result = await task.value
        if mine { _ = flights.withLock { $0.removeValue(forKey: name) } }
        return try result.get()
    }

    /// How many thumbnails are being made (for tests).
    var count: Int { flights.withLock { $0.count } }
}
