import FileWatching
import ServiceLifecycle

/// A service run as `requester`: who the work it does outside any request
/// is done as (requests say who they are themselves, ``Requester``).
struct ActingService<Base: Service>: Service, CustomStringConvertible {
    let base: Base
    let requester: Requester

    var description: String { String(describing: base) }

    func run() async throws {
        try await Requester.$current.withValue(requester) { try await base.run() }
    }
}

/// Work of the server's own that goes on as long as the server does (a
/// loop that wakes up now and then), ended by cancellation when its group
/// shuts down. Outside any request, it may do everything (``Requester/everyone``).
struct LastingWork: Service, CustomStringConvertible {
    let description: String
    let body: @Sendable () async -> Void

    init(_ description: String, _ body: @escaping @Sendable () async -> Void) {
        self.description = description
        self.body = body
    }

    func run() async throws {
        let body = self.body
        await Requester.$current.withValue(.everyone) { await cancelWhenGracefulShutdown(body) }
    }
}

/// The shared folder's presence: throws the observer's error when the
/// folder is removed or moved away, which ends the server; stops the core
/// when the server ends otherwise.
struct FolderPresence: Service, CustomStringConvertible {
    let core: ShareCore

    var description: String { "the shared folder's presence" }

    func run() async throws {
        let core = self.core
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                // An observer replaced when the role changed is not the folder gone.
                while true {
                    let observer = core.observer
                    try await observer.waitUntilStopped()
                    if observer === core.observer || core.isStopped { return }
                }
            } onGracefulShutdown: {
                core.stop()
            }
        } onCancel: {
            core.stop()
        }
    }
}
