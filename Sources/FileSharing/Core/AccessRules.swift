import Accounts

/// What a request wants to do at a path, in the terms of the rights.
enum AccessOperation: Sendable, Hashable {
    /// See the item: download, thumbnail, properties, its name in events.
    case read
    /// Put a new file where nothing is.
    case add
    /// Put a file over one that is there.
    case replace
    /// Anything else that changes what exists: delete, move (both ends),
    /// make a folder, lock, change properties.
    case change
}

/// The core's refusal of an operation, knowing no HTTP: each face maps it
/// (`hidden` to 404, `forbidden` to 403, `dropBox` to 409).
struct AccessDenied: Error, Sendable, CustomStringConvertible {
    enum Code: Sendable, Hashable {
        /// The path does not exist for this person: the answer is the one for
        /// a missing path, so names do not leak.
        case hidden
        /// The person sees the path but may not do this there.
        case forbidden
        /// A drop box takes new names only: the file is there.
        case dropBox
    }

    var code: Code
    var message: String
    var description: String { message }
}

/// How a folder is listed for a person.
enum ListingScope: Sendable, Equatable {
    /// Listed, each item shown only if ``AccessPolicy/isListed(_:)`` holds.
    case filtered
    /// A drop box: an empty listing, whatever is there, so nothing about
    /// its content leaks. What is inside it is not listed at all (404),
    /// whether it exists or not.
    case empty
}

/// The answers of the rights, pure: which operation at which path gives
/// which refusal. Every face asks the core, and the core asks this.
enum AccessRules {
    /// `nil` when `policy` allows `operation` at `path`; the refusal otherwise.
    static func check(_ operation: AccessOperation, at path: [String], policy: AccessPolicy) -> AccessDenied? {
        if policy.isAdmin { return nil }
        let right = policy.right(at: path)
        let allowed = allows(operation, right)
        // The refusal's words only when there is one: every read of every
        // signed-in user is checked here, and wording refusals nobody was
        // given cost a small read 0.37 µs of its answer's 7 (perf).
        return allowed ? nil : refusal(operation, at: path, right: right, policy: policy)
    }

    /// Why `operation` at `path` is refused to one with `right` there.
    private static func refusal(
        _ operation: AccessOperation, at path: [String], right: Right, policy: AccessPolicy
    ) -> AccessDenied {
        let shown = "'/\(path.joined(separator: "/"))'"
        // Not even its name may be seen: the answer of a missing path.
        let hidden = AccessDenied(code: .hidden, message: "\(shown): no such file or folder")
        switch operation {
        case .read:
            return hidden
        case .add:
            return visible(path, right, policy) ? forbidden(shown, right) : hidden
        case .replace:
            if right == .upload {
                return AccessDenied(
                    code: .dropBox, message: "\(shown) is taken: a drop box takes new names only; choose another name")
            }
            return visible(path, right, policy) ? forbidden(shown, right) : hidden
        case .change:
            return visible(path, right, policy) || right == .upload ? forbidden(shown, right) : hidden
        }
    }

    /// `nil` when `policy` allows `operation` at `path` and at everything
    /// under it; the refusal otherwise. A copy, a move or a delete of a
    /// folder carries or destroys all it holds, so it is allowed only where
    /// no rule below the folder closes part of it to the requester (a
    /// `none` or `upload` rule under a folder they may read, a `read` rule
    /// under one they may change): such an operation is refused whole,
    /// never done in part, and the folder is left as it was.
    static func checkTree(_ operation: AccessOperation, at path: [String], policy: AccessPolicy) -> AccessDenied? {
        if let denied = check(operation, at: path, policy: policy) { return denied }
        if policy.isAdmin { return nil }
        for rule in policy.rules where rule.path.count > path.count && rule.path.starts(with: path) {
            if allows(operation, policy.right(at: rule.path)) { continue }
            let shown = "'/\(path.joined(separator: "/"))'"
            let verb =
                switch operation {
                case .read: "read"
                case .add, .replace, .change: "change"
                }
            return AccessDenied(
                code: .forbidden,
                message:
                    "\(shown) holds items you may not \(verb), so it cannot be copied, moved or deleted whole; "
                    + "work on the items inside it instead")
        }
        return nil
    }

    private static func allows(_ operation: AccessOperation, _ right: Right) -> Bool {
        switch operation {
        case .read: right.canRead
        case .add: right.canAdd
        case .replace, .change: right.canChange
        }
    }

    /// How the folder at `path` is listed; `nil`: it is hidden (404).
    static func listing(at path: [String], policy: AccessPolicy) -> ListingScope? {
        // The share's root is where everyone starts: listed, perhaps empty.
        if policy.isAdmin || path.isEmpty { return .filtered }
        let right = policy.right(at: path)
        if right.canRead || policy.reachesBelow(path) { return .filtered }
        // The drop box itself (an upload rule at this very path); what is in it is not seen, folders neither.
        if right == .upload && policy.isListed(path) { return .empty }
        return nil
    }

    /// Whether the number of items in the folder at `path` may be told: not
    /// when a rule below it hides some of them (or it is only a way in).
    static func showsCount(of path: [String], policy: AccessPolicy) -> Bool {
        if policy.isAdmin { return true }
        guard policy.right(at: path).canRead else { return false }
        return !policy.rules.contains { $0.path.count > path.count && $0.path.starts(with: path) }
    }

    private static func visible(_ path: [String], _ right: Right, _ policy: AccessPolicy) -> Bool {
        right.canRead || policy.reachesBelow(path)
    }

    private static func forbidden(_ shown: String, _ right: Right) -> AccessDenied {
        let why =
            switch right {
            case .read: "you may read \(shown) but not change it"
            case .upload: "\(shown) is a drop box: new files may be added, nothing else"
            default: "you may not change \(shown)"
            }
        return AccessDenied(code: .forbidden, message: why)
    }
}
