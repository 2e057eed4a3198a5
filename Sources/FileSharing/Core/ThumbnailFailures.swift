import Previews

/// The thumbnails that could not be made, by cache name (the item's id and
/// its content's version: modification time and size), with no I/O and no
/// lock: a broken or hostile file is decoded once per version, not again on
/// every request for it or every listing of its folder, and a new version
/// of it is tried afresh. Bounded: past ``capacity`` the oldest failure is
/// forgotten (that file is tried once more when asked for).
struct ThumbnailFailures: Sendable {
    /// The failures remembered, at most.
    let capacity: Int
    private var failures: [String: ThumbnailError] = [:]
    /// The names in the order they failed (from `head` on), for forgetting the oldest.
    private var order: [String] = []
    private var head = 0

    init(capacity: Int) { self.capacity = max(0, capacity) }

    /// Whether `error` says something about the file's content that trying
    /// again would only repeat: it is damaged, hostile, too costly, used up
    /// its CPU time, or holds no image. A file still being written, a library
    /// or program this machine lacks, or a decode stopped on the clock while
    /// the machine was busy says nothing about the content.
    static func isRemembered(_ error: ThumbnailError) -> Bool {
        switch error.reason {
        case .failed, .tooCostly, .timedOut, .noImage: true
        case .programMissing, .libraryMissing, .notThisKind, .unfinished, .tookTooLong: false
        }
    }

    /// How many failures are remembered.
    var count: Int { failures.count }

    /// Why the thumbnail named `name` could not be made, if it could not.
    func failure(named name: String) -> ThumbnailError? { failures[name] }

    /// Remembers that the thumbnail named `name` could not be made, when
    /// ``isRemembered(_:)`` says so.
    mutating func remember(_ error: ThumbnailError, named name: String) {
        guard capacity > 0, ThumbnailFailures.isRemembered(error) else { return }
        if failures.updateValue(error, forKey: name) != nil { return }
        order.append(name)
        while failures.count > capacity, head < order.count {
            failures[order[head]] = nil
            head += 1
        }
        // The forgotten names dropped from the front in bulk, not one by one.
        if head > capacity {
            order.removeFirst(head)
            head = 0
        }
    }
}
