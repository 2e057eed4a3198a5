public import Accounts

/// Who a request is from, and what they may do: set by the authentication
/// middleware for the whole of a request's handling, read by the core
/// wherever it decides (`ShareCore.authorize`, `perform`, `commit`).
///
/// It is a task-local value so that the core's own changes check it
/// without each face handing it down, and a face added later cannot forget
/// it. Work the server does of its own accord (a held-back WebDAV file put
/// in place by the maintenance task) runs outside any request, as
/// ``everyone``, which is what a share without a users file is too.
public struct Requester: Sendable {
    /// The user name, or `nil` when nobody signed in (a share without a users file).
    public var user: String?
    /// What the user may do where.
    public var policy: AccessPolicy
    /// The id of the share link the request came through (never its token);
    /// `nil` for a signed-in user. A link's requester has no user, and a
    /// policy of one rule: its item, read or upload.
    public var link: String?

    /// Creates a requester.
    public init(user: String?, policy: AccessPolicy, link: String? = nil) {
        self.user = user
        self.policy = policy
        self.link = link
    }

    /// Who it is, as the audit and the logs name them: the user, `link ID`, or `-` (no users file).
    public var name: String {
        if let user { return user }
        if let link { return "link " + link }
        return "-"
    }

    /// May do everything: a share without a users file, and the server itself.
    public static let everyone = Requester(user: nil, policy: AccessPolicy(isAdmin: true, rules: []))

    /// Whether every path is open to this requester (nothing to filter).
    public var seesEverything: Bool { policy.isAdmin }

    /// The requester of the request being handled.
    @TaskLocal public static var current: Requester = .everyone
}
