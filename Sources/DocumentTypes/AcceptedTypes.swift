/// The types a folder (or an app) accepts, by identifier: accepting
/// `public.image` accepts PNG, JPEG, HEIC and every other kind of image.
///
/// ```swift
/// let accepted = try AcceptedTypes(["public.image", "com.adobe.pdf"])
/// switch try accepted.check(fileAt: staged, name: "Report.txt", misleadingNames: .correct) {
/// case .accepted(let identification): move(staged, as: identification.type)
/// case .corrected(_, let name): move(staged, to: name)  // "Report.pdf"
/// case .refused(let refusal): reply(415, refusal.reason)
/// }
/// ```
///
/// The rules: content decides when it is recognised; a file whose content
/// contradicts a name of an accepted type is refused, and the reason says
/// so; text without a signature, and an empty file, are judged by name. A
/// file of an accepted type whose name lies about it
/// (``Identification/nameMisleads``: a PDF named `Report.txt`) is refused
/// too, unless names are to be corrected (``MisleadingNames/correct``).
public struct AcceptedTypes: Sendable {
    /// The accepted identifiers, as given.
    public let identifiers: [TypeIdentifier]
    /// The registry the identifiers belong to, which identifies files.
    public let registry: DocumentTypeRegistry
    private let accepted: Set<Int>

    /// Accepts the types `identifiers` names and every kind of them.
    ///
    /// - Parameters:
    ///   - identifiers: The accepted types.
    ///   - registry: The types known; the catalogue by default.
    /// - Throws: ``DocumentTypeError`` (``DocumentTypeError/Code/unknownIdentifier``)
    ///   naming the identifiers the registry does not know.
    public init(_ identifiers: [TypeIdentifier], registry: DocumentTypeRegistry = .standard) throws {
        let unknown = identifiers.filter { !registry.contains($0) }
        if !unknown.isEmpty {
            let known = registry.types.map(\.identifier.rawValue)
            let described = unknown.map { identifier in
                "'\(identifier)'"
                    + (closestMatch(to: identifier.rawValue, among: known).map { " (did you mean '\($0)'?)" } ?? "")
            }
            throw DocumentTypeError(
                code: .unknownIdentifier,
                message: (unknown.count == 1 ? "unknown type " : "unknown types ") + described.joined(separator: ", "),
                identifier: unknown[0])
        }
        self.identifiers = identifiers
        self.registry = registry
        self.accepted = Set(identifiers.compactMap { registry.index[$0] })
    }

    /// Accepts everything (`public.item`).
    public static func all(in registry: DocumentTypeRegistry = .standard) -> AcceptedTypes {
        do {
            return try AcceptedTypes([.item], registry: registry)
        } catch {
            fatalError("public.item is in every registry: \(error)")
        }
    }

    /// Whether every type is accepted.
    public var acceptsEverything: Bool { registry.index[.item].map { accepted.contains($0) } ?? false }

    /// Whether the type `identifier` is accepted: it is one of the accepted
    /// types or a kind of one.
    public func accepts(_ identifier: TypeIdentifier) -> Bool {
        guard let position = registry.index[identifier] else { return false }
        return !registry.closure[position].isDisjoint(with: accepted)
    }

    /// The outcome of a check.
    public enum Decision: Hashable, Sendable {
        /// The file is of an accepted type, and its name does not lie about it.
        case accepted(Identification)
        /// The file is of an accepted type, but its name lies about it: it is
        /// accepted under `name`, its name with the extension of its type
        /// (``Identification/correctedName``). Only when names are corrected
        /// (``MisleadingNames/correct``).
        case corrected(Identification, name: String)
        /// The file is refused, for the reason given.
        case refused(Refusal)

        /// Whether the file is accepted (under its name or a corrected one).
        public var isAccepted: Bool {
            if case .refused = self { return false }
            return true
        }

        /// The identification the decision rests on.
        public var identification: Identification {
            switch self {
            case .accepted(let identification), .corrected(let identification, _): return identification
            case .refused(let refusal): return refusal.identification
            }
        }
    }

    /// Decides on an identified file.
    ///
    /// - Parameters:
    ///   - identification: What the file was found to be.
    ///   - misleadingNames: What becomes of a file of an accepted type whose
    ///     name lies about it: refused (the default), or accepted under a
    ///     corrected name.
    public func check(_ identification: Identification, misleadingNames: MisleadingNames = .refuse) -> Decision {
        let type = identification.type
        guard accepts(type.identifier) else {
            let nameAccepted = identification.nameType.map { accepts($0.identifier) } ?? false
            if identification.contradictsName && nameAccepted {
                return .refused(Refusal(code: .contentContradictsName, identification: identification))
            }
            return .refused(Refusal(code: .typeNotAccepted, identification: identification))
        }
        guard identification.nameMisleads else { return .accepted(identification) }
        if misleadingNames == .correct, let corrected = identification.correctedName {
            return .corrected(identification, name: corrected)
        }
        return .refused(Refusal(code: .misleadingName, identification: identification))
    }

    /// Identifies the file at `path` and decides on it.
    ///
    /// - Parameters:
    ///   - path: The file to read.
    ///   - name: The name to judge by, if not the path's (an upload staged under another name).
    ///   - misleadingNames: What becomes of a name that lies about the content.
    /// - Throws: ``DocumentTypeError`` when the file cannot be read.
    public func check(fileAt path: String, name: String? = nil, misleadingNames: MisleadingNames = .refuse) throws
        -> Decision
    {
        check(try registry.identify(fileAt: path, name: name), misleadingNames: misleadingNames)
    }

    /// Identifies the regular file open at `descriptor` and decides on it;
    /// the descriptor stays open.
    ///
    /// - Parameters:
    ///   - descriptor: A descriptor open for reading (an upload's staged file).
    ///   - name: The name the file will have.
    ///   - misleadingNames: What becomes of a name that lies about the content.
    /// - Throws: ``DocumentTypeError`` when the file cannot be read.
    public func check(fileDescriptor descriptor: Int32, name: String?, misleadingNames: MisleadingNames = .refuse)
        throws -> Decision
    {
        check(try registry.identify(fileDescriptor: descriptor, name: name), misleadingNames: misleadingNames)
    }

    /// Identifies a file from its first bytes and decides on it: an upload
    /// can be refused before the rest arrives.
    ///
    /// - Parameters:
    ///   - prefix: The first bytes (64 KiB are enough; less for most types).
    ///   - name: The file's name.
    ///   - totalSize: The whole size, if known.
    ///   - misleadingNames: What becomes of a name that lies about the content.
    public func check(
        prefix: [UInt8], name: String?, totalSize: Int? = nil, misleadingNames: MisleadingNames = .refuse
    ) -> Decision {
        check(registry.identify(prefix: prefix, name: name, totalSize: totalSize), misleadingNames: misleadingNames)
    }
}

/// What becomes of a file whose name lies about its content
/// (``Identification/nameMisleads``: a PDF named `notes.txt`, text named
/// `photo.png`), when its content is of an accepted type.
public enum MisleadingNames: Hashable, Sendable {
    /// Refused, with a reason that names both types and the fix: an app that
    /// opens files by their extension would fail on it.
    case refuse
    /// Accepted under its name with the extension of its content's type
    /// (``Identification/correctedName``: `notes.txt` becomes `notes.pdf`);
    /// refused when that type has no extension to give.
    case correct
}

/// Why a file is refused, as a sentence for a person, with what the
/// decision rests on.
public struct Refusal: Hashable, Sendable, CustomStringConvertible {
    /// What kind of refusal this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: Hashable, Sendable {
            case typeNotAccepted, contentContradictsName, misleadingName
        }
        fileprivate var value: Value

        /// The file's type is not accepted.
        public static let typeNotAccepted = Code(value: .typeNotAccepted)
        /// The file's name says an accepted type, but its content is another
        /// (or nothing recognised), which is not accepted.
        public static let contentContradictsName = Code(value: .contentContradictsName)
        /// The file's content is of an accepted type, but its name says
        /// another that has nothing to do with it (``Identification/nameMisleads``).
        public static let misleadingName = Code(value: .misleadingName)

        public var description: String { "\(value)" }
    }

    /// What kind of refusal this is.
    public var code: Code
    /// What the file was found to be.
    public var identification: Identification

    /// Creates a refusal.
    public init(code: Code, identification: Identification) {
        self.code = code
        self.identification = identification
    }

    /// A sentence for a person, such as "'Report.txt' is a PDF document (by
    /// its content), which this folder does not accept", "the name of
    /// 'photo.jpg' says JPEG image, but the content is a PDF document" or
    /// "the name of 'notes.txt' says plain text document, but the content is
    /// a PDF document: rename it 'notes.pdf', or have such names corrected
    /// (--fix-extensions)".
    public var reason: String {
        let found = identification
        let file = found.fileName.map { "'\($0)'" } ?? "the file"
        if code == .misleadingName, let nameType = found.nameType {
            let claim = "the name of \(file) says \(nameType.name), but the content is \(found.type.nameWithArticle)"
            guard let corrected = found.correctedName else {
                return "\(claim), which has no file name extension to correct the name with: rename it by hand"
            }
            return "\(claim): rename it '\(corrected)', or have such names corrected (--fix-extensions)"
        }
        if code == .contentContradictsName, let nameType = found.nameType {
            let claim = "the name of \(file) says \(nameType.name)"
            switch found.content {
            case .recognised(let type):
                return "\(claim), but the content is \(type.nameWithArticle), which this folder does not accept"
            case .text:
                return "\(claim), but the content is \(found.type.nameWithArticle), which this folder does not accept"
            case .unrecognised, .empty:
                return "\(claim), but the content is not \(nameType.nameWithArticle)"
            }
        }
        switch found.basis {
        case .content:
            let how = found.nameType == nil || found.contradictsName ? " (by its content)" : ""
            return "\(file) is \(found.type.nameWithArticle)\(how), which this folder does not accept"
        case .contentAndName:
            return "\(file) is \(found.type.nameWithArticle), which this folder does not accept"
        case .name:
            return "\(file) is \(found.type.nameWithArticle) (by its name), which this folder does not accept"
        case .unknown:
            if case .empty = found.content {
                return "\(file) is empty and its name does not tell its type, which this folder needs"
            }
            let claim =
                found.contradictsName
                ? found.nameType.map { " (its name says \($0.name), but its content is not one)" } ?? "" : ""
            return "\(file) is of a type that was not recognised\(claim), which this folder does not accept"
        }
    }

    public var description: String { reason }
}
