import Configuration
import Synchronization
import SystemPackage

/// Where a setting's value came from.
enum SettingSource: Sendable, Hashable, CustomStringConvertible {
    /// A flag (or DIR) on the command line.
    case flag(String)
    /// An environment variable.
    case environment(String)
    /// The configuration file, at this line.
    case file(path: String, line: Int?)
    /// Nothing set it.
    case defaultValue

    var description: String {
        switch self {
        case .flag(let flag): flag == "DIR" ? "argument DIR" : "flag \(flag)"
        case .environment(let name): "environment \(name)"
        case .file(let path, let line): line.map { "file \(path), line \($0)" } ?? "file \(path)"
        case .defaultValue: "default"
        }
    }
}

/// The text of every setting in force and where each came from: flags over
/// the environment over the file over the defaults.
struct ResolvedSettings: Sendable, Equatable {
    /// Each setting's text (absent: not set).
    var texts: [String: String] = [:]
    /// Where each came from.
    var sources: [String: SettingSource] = [:]
}

/// Puts the layers together with swift-configuration: a `ConfigReader` over
/// an `InMemoryProvider` of the flags given, an `EnvironmentVariablesProvider`
/// (its keys under `fileshare`, so `versions.max-count` is read from
/// `FILESHARE_VERSIONS_MAX_COUNT`) and a `FileProvider<YAMLSnapshot>` of the
/// file; the first that has a key wins, and its access report says which.
enum ConfigurationLayers {
    /// The settings of `flags` (by key, as text), `environment` and the file
    /// checked by `file`.
    /// - Throws: ``ConfigurationProblem`` for each value that is not of its
    ///   setting's kind, or a file that cannot be read.
    static func resolve(
        flags: [String: String], environment: [String: String], file: ConfigurationFileCheck?
    ) async throws(ConfigurationProblems) -> ResolvedSettings {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(
                name: "flags",
                values: Dictionary(
                    uniqueKeysWithValues: flags.map { key, text in
                        (
                            AbsoluteConfigKey(key.split(separator: ".").map(String.init)),
                            ConfigValue(.string(text), isSecret: false)
                        )
                    })),
            EnvironmentVariablesProvider(environmentVariables: environment.filter { !$0.value.isEmpty })
                .prefixKeys(with: "fileshare"),
        ]
        if let file, !file.isEmpty {
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file.path)))
            } catch {
                throw ConfigurationProblems([
                    ConfigurationProblem(place: file.path, message: "cannot read the configuration file: \(error)")
                ])
            }
        }
        let names = providers.map(\.providerName)
        let recorder = SourceRecorder(providerNames: names)
        let reader = ConfigReader(providers: providers, accessReporter: recorder)
        var resolved = ResolvedSettings()
        var problems: [ConfigurationProblem] = []
        for setting in ServeSetting.all {
            let text = reader.string(forKey: ConfigKey(setting.components))
            let source: SettingSource
            switch recorder.provider(of: setting.components) {
            case 0?: source = .flag(setting.flag ?? setting.key)
            case 1?: source = .environment(setting.environmentName)
            case 2?: source = .file(path: file?.path ?? "", line: file?.lines[setting.key])
            default: source = .defaultValue
            }
            guard let text = text ?? setting.defaultValue else {
                resolved.sources[setting.key] = .defaultValue
                continue
            }
            if source != .defaultValue, let problem = setting.problem(with: text) {
                let place: String =
                    switch source {
                    case .flag(let flag): flag
                    case .environment(let name): name
                    case .file(let path, let line): line.map { "\(path), line \($0)" } ?? path
                    case .defaultValue: "default"
                    }
                problems.append(ConfigurationProblem(place: place, message: problem))
                continue
            }
            resolved.texts[setting.key] = text
            resolved.sources[setting.key] = source
        }
        guard problems.isEmpty else { throw ConfigurationProblems(problems) }
        return resolved
    }
}

/// Several mistakes, each with its place.
struct ConfigurationProblems: Error, Sendable, Equatable {
    var problems: [ConfigurationProblem]

    init(_ problems: [ConfigurationProblem]) { self.problems = problems }
}

/// Notes which provider gave each key: the first whose lookup found a value.
final class SourceRecorder: AccessReporter, Sendable {
    private let providerNames: [String]
    private let found = Mutex<[[String]: Int]>([:])

    init(providerNames: [String]) { self.providerNames = providerNames }

    func report(_ event: AccessEvent) {
        let winner = event.providerResults.first { result in
            if case .success(let lookup) = result.result { return lookup.value != nil }
            return false
        }
        guard let winner, let index = providerNames.firstIndex(of: winner.providerName) else { return }
        found.withLock { $0[event.metadata.key.components] = index }
    }

    /// The index of the provider that gave the key of `components`, if one did.
    func provider(of components: [String]) -> Int? { found.withLock { $0[components] } }
}
