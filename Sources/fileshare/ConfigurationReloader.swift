import FileSharing
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Reads the configuration again on `SIGHUP`, and when the configuration
/// file changes (looked at once a second): what may change while the
/// server runs (the versions' and the trash's retention, and the users file,
/// read again at once) applies now, and each other setting changed is
/// logged as needing a restart and keeps its running value. A file with a
/// mistake changes nothing: its problems are logged.
///
/// Not swift-configuration's `ReloadingFileProvider`: it polls on its own
/// schedule and would hand the reader a file before it is checked (a
/// mistake must change nothing), and it has no way to reload on a signal.
final class ConfigurationReloader: Service, Sendable {
    private let loader: ServeConfigurationLoader
    private let server: ShareServer
    private let logger: Logger
    private let signals: UnixSignalsSequence
    private let interval: Duration
    /// The settings in force.
    private let running: Mutex<LoadedConfiguration>
    /// The file as it was when last read, so that a change already read (on
    /// SIGHUP) is not read again when the file is next looked at.
    private let seen: Mutex<[Int]?>

    /// Starts from `loaded`, the settings the server was made with.
    /// - Parameter signals: `SIGHUP`, trapped before the server starts (an
    ///   untrapped one would end the process).
    init(
        loader: ServeConfigurationLoader, loaded: LoadedConfiguration, server: ShareServer,
        signals: UnixSignalsSequence, interval: Duration = .seconds(1), logger: Logger
    ) {
        self.loader = loader
        self.server = server
        self.signals = signals
        self.interval = interval
        self.logger = logger
        running = Mutex(loaded)
        seen = Mutex(loader.filePath.flatMap(FileBytes.identity(of:)))
    }

    func run() async throws {
        let signals = self.signals
        // One reload at a time, in the order asked; a burst asks once.
        let (reasons, asking) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        await cancelWhenGracefulShutdown {
            await withTaskCancellationHandler {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await _ in signals { asking.yield("SIGHUP") }
                    }
                    if let path = self.loader.filePath {
                        group.addTask { await self.watch(path, asking: asking) }
                    }
                    for await reason in reasons { await self.reload(because: reason) }
                    group.cancelAll()
                }
            } onCancel: {
                asking.finish()
            }
        }
    }

    /// Asks for a reload whenever the file at `path` is not as last read, until cancelled.
    private func watch(_ path: String, asking: AsyncStream<String>.Continuation) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let now = FileBytes.identity(of: path)
            let changed = seen.withLock { seen in
                defer { seen = now }
                return seen != now
            }
            if changed { asking.yield("\(path) changed") }
        }
    }

    /// Reads every layer again and applies what may change now.
    func reload(because reason: String) async {
        if let path = loader.filePath {
            let identity = FileBytes.identity(of: path)
            seen.withLock { $0 = identity }
        }
        let fresh: LoadedConfiguration
        do {
            fresh = try await loader.load()
        } catch {
            for problem in error.problems {
                logger.error("the configuration is not reloaded: \(problem); the running settings stay")
            }
            server.reloadUsers()
            return
        }
        let place = loader.filePath ?? "the environment"
        let (old, changed) = running.withLock { running -> (LoadedConfiguration, [String]) in
            let old = running
            let changed = ServeSettings.changedKeys(from: old.resolved, to: fresh.resolved)
            for key in changed where ServeSetting.named(key)?.reloads == true {
                running.resolved.texts[key] = fresh.resolved.texts[key]
                running.resolved.sources[key] = fresh.resolved.sources[key]
            }
            running.settings = ServeSettings(running.resolved)
            return (old, changed)
        }
        logger.notice("read the configuration again (\(reason))")
        var historyChanged = false
        for key in changed {
            guard let setting = ServeSetting.named(key) else { continue }
            let before = ServeConfigurationLoader.display(setting, in: old.resolved)
            let after = ServeConfigurationLoader.display(setting, in: fresh.resolved)
            if setting.reloads {
                historyChanged = true
                logger.notice("\(key) is now \(after) (was \(before))")
            } else {
                logger.warning("\(key) changed to \(after) in \(place): needs a restart; \(before) stays in force")
            }
        }
        if historyChanged {
            await server.applyHistory(running.withLock { $0.settings.history })
        }
        server.reloadUsers()
    }
}
