import Yams

/// A mistake in the configuration: where it is (the file and line, the
/// environment variable or the flag) and what is wrong, in plain words.
struct ConfigurationProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where: `/etc/fileshare/fileshare.yaml, line 4`, `FILESHARE_PORT`, `--port`.
    var place: String
    /// What is wrong, naming the key.
    var message: String

    var description: String { "\(place): \(message)" }
}

/// The configuration file, read and checked against ``ServeSetting/all``
/// with the line of each key: every key known, every value of its kind.
///
/// Written with Yams rather than left to swift-configuration's
/// `YAMLSnapshot`: that one flattens the document without its marks, so it
/// can neither name the line of a mistake nor tell an unknown key (it is
/// simply never asked for). The values it finds are then read through
/// swift-configuration like those of the other layers.
struct ConfigurationFileCheck: Sendable {
    /// The file's path, as given.
    let path: String
    /// The line of each key the file sets.
    private(set) var lines: [String: Int] = [:]
    /// The text of each key the file sets, as written.
    private(set) var values: [String: String] = [:]
    /// What is wrong in it, in the order of the file.
    private(set) var problems: [ConfigurationProblem] = []
    /// Whether the document holds no key at all (empty, or only comments).
    private(set) var isEmpty = false

    /// Checks `text`, the content of the file at `path`.
    init(path: String, text: String) {
        self.path = path
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            problems.append(ConfigurationFileCheck.syntaxProblem(error, path: path))
            return
        } catch {
            problems.append(ConfigurationProblem(place: path, message: "cannot be read as YAML: \(error)"))
            return
        }
        guard let root else {
            isEmpty = true
            return
        }
        guard let mapping = root.mapping else {
            problems.append(
                ConfigurationProblem(
                    place: place(root.mark),
                    message: "the file must hold keys and their values (such as 'port: 8080'), not a single value"))
            return
        }
        check(mapping, section: nil)
    }

    /// Reads and checks the file at `path`.
    /// - Throws: ``ConfigurationProblem`` when it cannot be read.
    static func read(_ path: String) throws(ConfigurationProblem) -> ConfigurationFileCheck {
        guard let bytes = FileBytes.read(path) else {
            throw ConfigurationProblem(
                place: path, message: "cannot read the configuration file: \(FileBytes.lastErrorText)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationProblem(place: path, message: "the configuration file is not UTF-8 text")
        }
        return ConfigurationFileCheck(path: path, text: text)
    }

    private func place(_ mark: Mark?) -> String {
        mark.map { "\(path), line \($0.line)" } ?? path
    }

    private mutating func check(_ mapping: Node.Mapping, section: String?) {
        for (keyNode, value) in mapping {
            guard let name = keyNode.scalar?.string else {
                problems.append(ConfigurationProblem(place: place(keyNode.mark), message: "a key must be a word"))
                continue
            }
            let key = section.map { "\($0).\(name)" } ?? name
            if section == nil, ServeSetting.sections.contains(name) {
                guard let inner = value.mapping else {
                    let keys = ServeSetting.all.filter { $0.section == name }.map { $0.components[1] }
                    problems.append(
                        ConfigurationProblem(
                            place: place(keyNode.mark),
                            message:
                                "'\(name)' is a section: give its keys below it (\(keys.joined(separator: ", "))), not a value"
                        ))
                    continue
                }
                check(inner, section: name)
                continue
            }
            guard let setting = ServeSetting.named(key) else {
                var message = "unknown key '\(key)'"
                if let closest = ConfigurationFileCheck.closestKey(to: key) {
                    message += "; did you mean '\(closest)'?"
                }
                problems.append(ConfigurationProblem(place: place(keyNode.mark), message: message))
                continue
            }
            lines[key] = keyNode.mark?.line
            guard let scalar = value.scalar else {
                let what = value.mapping != nil ? "a section" : "a list"
                problems.append(
                    ConfigurationProblem(
                        place: place(keyNode.mark), message: "'\(key)' takes \(setting.kindDescription), not \(what)"))
                continue
            }
            if scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
                problems.append(
                    ConfigurationProblem(
                        place: place(keyNode.mark),
                        message: "'\(key)' has no value: give \(setting.kindDescription), or remove the line"))
                continue
            }
            if let problem = setting.problem(with: scalar.string) {
                problems.append(ConfigurationProblem(place: place(keyNode.mark), message: problem))
                continue
            }
            values[key] = scalar.string
        }
    }

    /// A YAML syntax error, with its line.
    private static func syntaxProblem(_ error: YamlError, path: String) -> ConfigurationProblem {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return ConfigurationProblem(place: "\(path), line \(mark.line)", message: "not valid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ConfigurationProblem(
                place: "\(path), line \(context.mark.line)",
                message: "'\(duplicates.sorted().joined(separator: "', '"))' is given twice: keep one")
        default:
            return ConfigurationProblem(place: path, message: "not valid YAML: \(error)")
        }
    }

    /// The known key nearest `key` in spelling (at most a third of its
    /// letters apart), or the full name of a section's key given at the top.
    static func closestKey(to key: String) -> String? {
        let candidates = ServeSetting.all.map(\.key) + ServeSetting.sections
        let last = key.split(separator: ".").last.map(String.init) ?? key
        var best: (key: String, distance: Int)?
        for candidate in candidates {
            let candidateLast = candidate.split(separator: ".").last.map(String.init) ?? candidate
            let distance = min(
                editDistance(key, candidate), editDistance(last, candidateLast) + (candidate == candidateLast ? 0 : 1))
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best, best.distance <= max(2, key.count / 3) else { return nil }
        return best.key
    }

    /// Levenshtein distance between `a` and `b`.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
