/// What one person may do where: the answer the core gives every face.
///
/// Rules are per path and inherited by what is under it; the most specific
/// rule wins. At the same path, the person's own rule wins over their
/// groups'; among groups, the greatest right (in the order none, upload,
/// read, write). A path no rule covers is ``Right/none``. An admin may do
/// everything everywhere.
public struct AccessPolicy: Sendable, Equatable {
    /// One rule: a right on a path, from the person's own grant or a group's.
    public struct Rule: Sendable, Equatable {
        /// The path's names, root first.
        public var path: [String]
        public var right: Right
        /// Whether the grant names the person (not one of their groups).
        public var isPersonal: Bool

        public init(path: [String], right: Right, isPersonal: Bool) {
            self.path = path
            self.right = right
            self.isPersonal = isPersonal
        }
    }

    /// Whether this person may do everything everywhere.
    public var isAdmin: Bool
    /// The rules that concern this person.
    public var rules: [Rule]

    /// Creates a policy.
    public init(isAdmin: Bool, rules: [Rule]) {
        self.isAdmin = isAdmin
        self.rules = rules
    }

    /// The right at `path` (names, root first).
    public func right(at path: [String]) -> Right {
        if isAdmin { return .write }
        var best: Rule? = nil
        for rule in rules where rule.path.count <= path.count && path.starts(with: rule.path) {
            guard let current = best else {
                best = rule
                continue
            }
            if rule.path.count > current.path.count {
                best = rule
            } else if rule.path.count == current.path.count {
                if rule.isPersonal != current.isPersonal {
                    if rule.isPersonal { best = rule }
                } else if AccessPolicy.order(rule.right) > AccessPolicy.order(current.right) {
                    best = rule
                }
            }
        }
        return best?.right ?? .none
    }

    /// Whether a rule below `path` gives this person something there: then
    /// `path` is shown as a way in (its name only), even where its own right is
    /// ``Right/none`` — as a folder holding a shared subfolder must be.
    public func reachesBelow(_ path: [String]) -> Bool {
        if isAdmin { return true }
        return rules.contains { rule in
            rule.path.count > path.count && rule.path.starts(with: path) && rule.right != .none
                && right(at: rule.path) != .none
        }
    }

    /// Whether `path` is listed (and its events sent) for this person: it
    /// is readable, or the way to something below, or a drop box itself (an
    /// ``Right/upload`` rule on exactly this path; what is in a drop box is
    /// never listed).
    public func isListed(_ path: [String]) -> Bool {
        if isAdmin { return true }
        let right = right(at: path)
        if right.canRead || reachesBelow(path) { return true }
        return right == .upload && rules.contains { $0.path == path && $0.right == .upload }
    }

    /// The policy of a share link to `root`, opened with `right` (`read` or
    /// `upload`) and made by one whose policy is now `maker`: the link sees
    /// what its maker may see there now, and no more. Where a rule of the
    /// maker's below `root` is narrower (a folder closed to them inside the
    /// shared one, a part they may only read), the link's is narrowed the
    /// same way; where the maker may do more below, the link still does only
    /// what `right` allows.
    public static func link(to root: [String], right: Right, maker: AccessPolicy) -> AccessPolicy {
        var rules = [Rule(path: root, right: right.limited(to: maker.right(at: root)), isPersonal: true)]
        var seen: Set<[String]> = [root]
        for rule in maker.rules where rule.path.count > root.count && rule.path.starts(with: root) {
            guard seen.insert(rule.path).inserted else { continue }
            rules.append(Rule(path: rule.path, right: right.limited(to: maker.right(at: rule.path)), isPersonal: true))
        }
        return AccessPolicy(isAdmin: false, rules: rules)
    }

    static func order(_ right: Right) -> Int {
        switch right {
        case .none: 0
        case .upload: 1
        case .read: 2
        case .write: 3
        }
    }
}
