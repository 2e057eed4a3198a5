import FileWatching

/// The conditions a client puts on a change (RFC 9110 section 13):
/// `If-Match` and `If-Unmodified-Since` so that two people who edit one
/// file cannot both "succeed" (the second is told the file changed),
/// `If-None-Match: *` to create and never replace. They are judged against
/// what is on disk at the moment of the change (`ShareCore.perform` does it
/// with the path held), with no HTTP: a failure is a
/// ``PreconditionFailure``, which each face answers with 412.
struct WritePreconditions: Hashable, Sendable {
    /// `If-Match`: compared strongly with the item's entity tag.
    var ifMatch: EntityTag.List?
    /// `If-None-Match`: compared weakly.
    var ifNoneMatch: EntityTag.List?
    /// `If-Unmodified-Since`, in nanoseconds since the epoch (a whole second).
    var ifUnmodifiedSince: Int64?

    /// No condition: the change is unconditional.
    static let none = WritePreconditions()

    init(ifMatch: EntityTag.List? = nil, ifNoneMatch: EntityTag.List? = nil, ifUnmodifiedSince: Int64? = nil) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifUnmodifiedSince = ifUnmodifiedSince
    }

    /// Whether there is no condition.
    var isEmpty: Bool { self == .none }

    /// The conditions on what is already there (`If-Match`, `If-Unmodified-Since`):
    /// for a move, the item moved.
    var onExisting: WritePreconditions { WritePreconditions(ifMatch: ifMatch, ifUnmodifiedSince: ifUnmodifiedSince) }

    /// Why the conditions do not hold for the item whose status is
    /// `current` (`nil`: nothing is there), or `nil` when they hold. In the
    /// order of RFC 9110 section 13.2.2: `If-Match` first, and only without
    /// it `If-Unmodified-Since`; then `If-None-Match`.
    func failure(current: FileStatus?, path: SharePath) -> PreconditionFailure? {
        let tag = current.map { EntityTag(strong: $0.entityTag) }
        let shown = path.isRoot ? "the shared folder" : "'\(path)'"
        if let ifMatch {
            switch (ifMatch, tag) {
            case (_, nil):
                return PreconditionFailure(path: path, current: nil, "\(shown) is not there any more")
            case (.tags(let tags), let tag?) where !tags.contains(where: { $0.matchesStrongly(tag) }):
                return PreconditionFailure(
                    path: path, current: tag,
                    "\(shown) has changed since you read it (it is \(tag) now, not \(ifMatch)); read it again")
            default: break
            }
        } else if let since = ifUnmodifiedSince, let current,
            current.modified / 1_000_000_000 * 1_000_000_000 > since
        {
            return PreconditionFailure(
                path: path, current: tag, "\(shown) has changed since the time you gave; read it again")
        }
        if let ifNoneMatch, let tag {
            switch ifNoneMatch {
            case .any:
                return PreconditionFailure(path: path, current: tag, "\(shown) already exists")
            case .tags(let tags) where tags.contains(where: { $0.matchesWeakly(tag) }):
                return PreconditionFailure(path: path, current: tag, "\(shown) is still \(tag)")
            default: break
            }
        }
        return nil
    }
}

/// A change refused because its conditions (``WritePreconditions``) do not
/// hold: nothing was changed. It knows no HTTP: the faces answer 412.
struct PreconditionFailure: Error, Sendable, CustomStringConvertible {
    /// The item the conditions were about.
    var path: SharePath
    /// Its entity tag now, or `nil` when nothing is there.
    var current: EntityTag?
    /// For a person: what changed.
    var message: String

    init(path: SharePath, current: EntityTag?, _ message: String) {
        self.path = path
        self.current = current
        self.message = message
    }

    var description: String { message }
}

extension WritePreconditions {
    /// The conditions as lines of text (kept with a resumable upload until
    /// it ends): `if-match LIST`, `if-none-match LIST`, `if-unmodified-since NANOSECONDS`.
    /// Entity tags hold no line breaks, so a line is never cut.
    var lines: [String] {
        var lines: [String] = []
        if let ifMatch { lines.append("if-match \(ifMatch)") }
        if let ifNoneMatch { lines.append("if-none-match \(ifNoneMatch)") }
        if let ifUnmodifiedSince { lines.append("if-unmodified-since \(ifUnmodifiedSince)") }
        return lines
    }

    /// Reads what ``lines`` wrote; `nil` for a line it does not know.
    init?(lines: some Sequence<Substring>) {
        self.init()
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1]) : ""
            switch parts.first {
            case "if-match": ifMatch = EntityTag.List(parsing: value)
            case "if-none-match": ifNoneMatch = EntityTag.List(parsing: value)
            case "if-unmodified-since":
                guard let nanoseconds = Int64(value) else { return nil }
                ifUnmodifiedSince = nanoseconds
            default: return nil
            }
        }
    }
}
