import DocumentTypes

/// `--accept LIST` and `--types FILE`, as `fileshare serve` and `fileshare inbox` take them.
enum TypeOptions {
    /// The comma-separated items of a list option, trimmed, empty ones left out.
    static func listItems(_ text: String) -> [String] {
        text.split(separator: ",").map { item in
            String(item.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }.filter { !$0.isEmpty }
    }

    /// The accepted types of `--types` and `--accept`: the file's, unless
    /// `--accept` names others (which may be types the file declares);
    /// `nil` for every type.
    ///
    /// - Throws: A message naming the problem: the file and line, or the
    ///   unknown identifier (with the closest known one).
    static func acceptedTypes(typesFile: String?, accept: String?) throws(UsageProblem) -> AcceptedTypes? {
        var registry = DocumentTypeRegistry.standard
        var accepted: AcceptedTypes?
        if let typesFile {
            do {
                let configuration = try DocumentTypeConfiguration(contentsOf: typesFile)
                registry = configuration.registry
                accepted = configuration.acceptedTypes
            } catch let error as DocumentTypeError where error.position == nil && error.message.contains(typesFile) {
                throw UsageProblem("--types: \(error.message)")  // the message names the file already
            } catch {
                throw UsageProblem("--types: \(error)")
            }
        }
        if let accept {
            var identifiers: [TypeIdentifier] = []
            for item in listItems(accept) {
                let identifier = TypeIdentifier(item)
                if registry.contains(identifier) {
                    identifiers.append(identifier)
                } else if let type = registry.type(forExtension: item) {
                    // An extension, as cli.md gives them (pdf, .epub, tar.gz).
                    identifiers.append(type.identifier)
                } else if identifier.isWellFormed {
                    // Unknown: AcceptedTypes names it, with the closest known identifier.
                    identifiers.append(identifier)
                } else {
                    throw UsageProblem(
                        "--accept: '\(item)' is neither a known type identifier nor a known file name extension")
                }
            }
            do {
                accepted = try AcceptedTypes(identifiers, registry: registry)
            } catch {
                throw UsageProblem("--accept: \(error)")
            }
        }
        return accepted
    }

    /// A bad option value, said in one line.
    struct UsageProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

}
