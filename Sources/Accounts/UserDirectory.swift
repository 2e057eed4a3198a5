/// The people of a share: users with password hashes, groups, and the
/// rights granted to each on paths. A value; ``UsersFile`` keeps it on disk.
///
/// Every change checks what it is given and leaves the directory as it was
/// when it throws.
public struct UserDirectory: Sendable, Equatable {
    /// A person who can sign in.
    public struct User: Sendable, Equatable {
        /// The password's salted hash (never the password).
        public var passwordHash: String
        /// Whether this person may do everything, and manage everyone's shares.
        public var isAdmin: Bool

        public init(passwordHash: String, isAdmin: Bool) {
            self.passwordHash = passwordHash
            self.isAdmin = isAdmin
        }
    }

    /// A right given to a user or group on a path.
    public struct Grant: Sendable, Equatable {
        /// The user or group.
        public var subject: String
        /// The path's names, root first.
        public var path: [String]
        public var right: Right

        public init(subject: String, path: [String], right: Right) {
            self.subject = subject
            self.path = path
            self.right = right
        }
    }

    /// The users by name.
    public private(set) var users: [String: User]
    /// The groups by name, with their members (user names), sorted.
    public private(set) var groups: [String: [String]]
    /// The grants, one per subject and path, in the order they were made.
    public private(set) var grants: [Grant]

    /// An empty directory.
    public init() {
        users = [:]
        groups = [:]
        grants = []
    }

    /// A directory with this content, checked as a whole.
    /// - Throws: ``AccountsError`` (`.damaged`) naming what is inconsistent.
    public init(users: [String: User], groups: [String: [String]], grants: [Grant]) throws(AccountsError) {
        for name in users.keys where !AccountName.isValid(name) {
            throw AccountsError(.damaged, "the user name '\(name)' is not valid")
        }
        for (group, members) in groups {
            guard AccountName.isValid(group) else {
                throw AccountsError(.damaged, "the group name '\(group)' is not valid")
            }
            if users[group] != nil {
                throw AccountsError(.damaged, "'\(group)' is both a user and a group")
            }
            for member in members where users[member] == nil {
                throw AccountsError(.damaged, "the group '\(group)' has '\(member)', who is not a user")
            }
        }
        var seen = Set<[String]>()
        for grant in grants {
            guard users[grant.subject] != nil || groups[grant.subject] != nil else {
                throw AccountsError(.damaged, "a right is granted to '\(grant.subject)', who is neither user nor group")
            }
            guard seen.insert([grant.subject] + grant.path).inserted else {
                throw AccountsError(
                    .damaged, "'\(grant.subject)' has two rights on '/\(grant.path.joined(separator: "/"))'")
            }
        }
        self.users = users
        self.groups = groups.mapValues { Array(Set($0)).sorted() }
        self.grants = grants
    }

    // MARK: Users

    /// Adds a user.
    public mutating func addUser(_ name: String, passwordHash: String, isAdmin: Bool = false) throws(AccountsError) {
        try AccountName.check(name)
        guard users[name] == nil else {
            throw AccountsError(
                .exists, "the user '\(name)' exists already; 'fileshare users passwd \(name)' changes the password")
        }
        guard groups[name] == nil else {
            throw AccountsError(.exists, "'\(name)' is a group; users and groups need different names")
        }
        users[name] = User(passwordHash: passwordHash, isAdmin: isAdmin)
    }

    /// Replaces a user's password hash.
    public mutating func setPassword(_ name: String, passwordHash: String) throws(AccountsError) {
        guard users[name] != nil else { throw AccountsError.noUser(name) }
        users[name]?.passwordHash = passwordHash
    }

    /// Makes a user an admin, or not.
    public mutating func setAdmin(_ name: String, _ isAdmin: Bool) throws(AccountsError) {
        guard users[name] != nil else { throw AccountsError.noUser(name) }
        users[name]?.isAdmin = isAdmin
    }

    /// Removes a user, from their groups too, and the rights granted to them.
    public mutating func removeUser(_ name: String) throws(AccountsError) {
        guard users.removeValue(forKey: name) != nil else { throw AccountsError.noUser(name) }
        for group in groups.keys { groups[group]?.removeAll { $0 == name } }
        grants.removeAll { $0.subject == name }
    }

    // MARK: Groups

    /// Adds users to a group, made if it does not exist.
    public mutating func addToGroup(_ group: String, members: [String]) throws(AccountsError) {
        try AccountName.check(group)
        guard users[group] == nil else {
            throw AccountsError(.exists, "'\(group)' is a user; users and groups need different names")
        }
        for member in members where users[member] == nil { throw AccountsError.noUser(member) }
        groups[group] = Array(Set(groups[group, default: []] + members)).sorted()
    }

    /// Takes users out of a group (the group stays, possibly empty).
    public mutating func removeFromGroup(_ group: String, members: [String]) throws(AccountsError) {
        guard let current = groups[group] else { throw AccountsError.noGroup(group) }
        for member in members where !current.contains(member) {
            throw AccountsError(.notFound, "'\(member)' is not in the group '\(group)'")
        }
        groups[group] = current.filter { !members.contains($0) }
    }

    /// Removes a group and the rights granted to it.
    public mutating func removeGroup(_ group: String) throws(AccountsError) {
        guard groups.removeValue(forKey: group) != nil else { throw AccountsError.noGroup(group) }
        grants.removeAll { $0.subject == group }
    }

    // MARK: Rights

    /// Gives `subject` (a user or group) `right` on `path`, replacing what
    /// it had there. `none` is a rule too: it takes away what a rule above gives.
    public mutating func grant(_ right: Right, on path: String, to subject: String) throws(AccountsError) {
        guard users[subject] != nil || groups[subject] != nil else {
            throw AccountsError(
                .notFound,
                "no user or group is called '\(subject)'; add one with 'fileshare users add \(subject)' or 'fileshare users group add \(subject) NAME…'"
            )
        }
        let components = try AccountName.pathComponents(path)
        if let index = grants.firstIndex(where: { $0.subject == subject && $0.path == components }) {
            grants[index].right = right
        } else {
            grants.append(Grant(subject: subject, path: components, right: right))
        }
    }

    /// Removes the rule of `subject` on `path` (what is above applies again).
    public mutating func revoke(on path: String, from subject: String) throws(AccountsError) {
        let components = try AccountName.pathComponents(path)
        guard let index = grants.firstIndex(where: { $0.subject == subject && $0.path == components }) else {
            throw AccountsError(.notFound, "'\(subject)' has no rule on '/\(components.joined(separator: "/"))'")
        }
        grants.remove(at: index)
    }

    // MARK: Answers

    /// The groups `user` is in, sorted.
    public func groups(of user: String) -> [String] {
        groups.filter { $0.value.contains(user) }.map(\.key).sorted()
    }

    /// What `user` may do where; `nil` when there is no such user.
    public func policy(for user: String) -> AccessPolicy? {
        guard let account = users[user] else { return nil }
        let memberOf = Set(groups(of: user))
        let rules = grants.compactMap { grant -> AccessPolicy.Rule? in
            if grant.subject == user {
                return AccessPolicy.Rule(path: grant.path, right: grant.right, isPersonal: true)
            }
            if memberOf.contains(grant.subject) {
                return AccessPolicy.Rule(path: grant.path, right: grant.right, isPersonal: false)
            }
            return nil
        }
        return AccessPolicy(isAdmin: account.isAdmin, rules: rules)
    }
}

extension AccountsError {
    static func noUser(_ name: String) -> AccountsError {
        AccountsError(.notFound, "no user is called '\(name)' ('fileshare users list' shows who there is)")
    }

    static func noGroup(_ name: String) -> AccountsError {
        AccountsError(.notFound, "no group is called '\(name)' ('fileshare users list' shows the groups)")
    }
}
