public import ServiceLifecycle

/// The observer as a swift-service-lifecycle service: it starts, runs until
/// graceful shutdown or cancellation, and throws when the root goes away.
extension FileObserver: Service {
    /// Starts the observer and runs until shutdown.
    /// - Throws: ``FileWatchingError`` with code ``FileWatchingError/Code/rootRemoved``
    ///   when the watched folder was removed or moved away.
    public func run() async throws {
        try start()
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await waitUntilStopped()
            } onGracefulShutdown: {
                self.stop()
            }
        } onCancel: {
            self.stop()
        }
    }
}
