#if canImport(Glibc)
    import Glibc
#endif

/// Starts a detached POSIX thread running `body`: the observer's monitor
/// runs on a thread of its own, so blocking in `poll` never holds up Swift
/// concurrency's cooperative pool.
func startDetachedThread(_ body: @escaping @Sendable () -> Void) throws(FileWatchingError) {
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
        &thread, nil,
        { argument in
            let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        throw FileWatchingError(
            code: .io, message: "cannot start the monitor thread: \(Errno(rawValue: result))",
            systemError: Errno(rawValue: result))
    }
    pthread_detach(thread)
}
