/// The settings of `fileshare serve` as read at one moment: the texts and
/// their sources, and the typed values.
struct LoadedConfiguration: Sendable, Equatable {
    var resolved: ResolvedSettings
    var settings: ServeSettings
}

/// Reads the settings from the flags given, the environment and the
/// configuration file (`--config` or `FILESHARE_CONFIG`), checked whole:
/// at start, and again on `SIGHUP` or when the file changes (the flags and
/// the environment are those of the start).
struct ServeConfigurationLoader: Sendable {
    /// The flags given, by key, as text.
    let flags: [String: String]
    /// The process's environment.
    let environment: [String: String]
    /// The configuration file, if one is given.
    let filePath: String?

    /// Reads and checks every layer.
    /// - Throws: ``ConfigurationProblems``, each naming its place (the file
    ///   and line, the variable or the flag) and the key.
    func load() async throws(ConfigurationProblems) -> LoadedConfiguration {
        var file: ConfigurationFileCheck?
        if let filePath {
            do {
                file = try ConfigurationFileCheck.read(filePath)
            } catch {
                throw ConfigurationProblems([error])
            }
            if let problems = file?.problems, !problems.isEmpty { throw ConfigurationProblems(problems) }
        }
        let resolved = try await ConfigurationLayers.resolve(flags: flags, environment: environment, file: file)
        let settings = ServeSettings(resolved)
        let conflicts = settings.conflicts
        guard conflicts.isEmpty else {
            throw ConfigurationProblems(
                conflicts.map { ConfigurationProblem(place: filePath ?? "the settings", message: $0) })
        }
        return LoadedConfiguration(resolved: resolved, settings: settings)
    }

    /// The settings as `--check-config` prints them: one line each, its
    /// value (a secret's hidden) and where it came from.
    static func report(_ resolved: ResolvedSettings) -> String {
        let width = (ServeSetting.all.map(\.key.count).max() ?? 0) + 2
        var lines: [String] = []
        for setting in ServeSetting.all {
            let value = display(setting, in: resolved)
            let source = resolved.sources[setting.key] ?? .defaultValue
            let key = setting.key + ":"
            let padded = key + String(repeating: " ", count: max(1, width - key.count))
            let shown = value + String(repeating: " ", count: max(1, 24 - value.count))
            lines.append(padded + shown + "(\(source))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A setting's value for a person: `(not set)`, `(secret)`, or its text.
    static func display(_ setting: ServeSetting, in resolved: ResolvedSettings) -> String {
        guard let text = resolved.texts[setting.key], !text.isEmpty else { return "(not set)" }
        return setting.secret ? "(secret)" : text
    }
}
