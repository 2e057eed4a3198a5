import ConfigText
import Yams

extension ConfigNode {
    /// Parses the first YAML document of `text` with Yams, keeping the
    /// position of every value.
    ///
    /// - Throws: ``ConfigProblem`` with libyaml's description and position.
    static func parseYAML(_ text: String) throws(ConfigProblem) -> ConfigNode {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw problem(from: error, in: text)
        } catch {
            throw ConfigProblem(message: "the YAML could not be read: \(error)", position: nil)
        }
        guard let root else { return ConfigNode(.null, at: SourcePosition(line: 1, column: 1)) }
        return convert(root)
    }

    private static func convert(_ node: Node) -> ConfigNode {
        let position = node.mark.map { SourcePosition(line: $0.line, column: $0.column) }
        switch node {
        case .scalar(let scalar):
            let plain = scalar.style == .plain ? scalar.string : nil
            let value: Value
            if scalar.style != .plain {
                value = .string(scalar.string)
            } else if node.null != nil {
                value = .null
            } else if let boolean = node.bool {
                value = .boolean(boolean)
            } else if let integer = node.int {
                value = .integer(integer)
            } else if node.float != nil {
                value = .other("a decimal number")
            } else {
                value = .string(scalar.string)
            }
            return ConfigNode(value, at: position, plainText: plain)
        case .sequence(let sequence):
            return ConfigNode(.list(sequence.map(convert)), at: position)
        case .mapping(let mapping):
            var entries: [(key: String, node: ConfigNode)] = []
            for (key, value) in mapping {
                var converted = convert(value)
                if converted.position == nil {
                    converted.position = key.mark.map { SourcePosition(line: $0.line, column: $0.column) }
                }
                entries.append((key.string ?? "\(key)", converted))
            }
            return ConfigNode(.table(entries), at: position)
        case .alias:
            return ConfigNode(.other("an alias"), at: position)
        }
    }

    private static func problem(from error: YamlError, in text: String) -> ConfigProblem {
        func at(_ mark: Mark) -> SourcePosition { SourcePosition(line: mark.line, column: mark.column) }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let detail = context.map { " (\($0.text) at line \($0.mark.line), column \($0.mark.column))" } ?? ""
            return ConfigProblem(message: "invalid YAML: \(problem)\(detail)", position: at(mark))
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return ConfigProblem(
                message: "invalid YAML: the key \(keys) appears twice in one mapping", position: at(context.mark))
        case .reader(let problem, let offset, _, _):
            return ConfigProblem(
                message: "invalid YAML: \(problem)",
                position: offset.map { sourcePosition(ofOffset: $0, in: Array(text.utf8)) })
        default:
            return ConfigProblem(message: "invalid YAML: \(error)", position: nil)
        }
    }
}
