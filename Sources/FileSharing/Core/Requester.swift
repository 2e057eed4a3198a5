public import Accounts

/// Who a request is from, and what they may do: set by the authentication
/// middleware for the whole of a request's handling, read by the core
/// wherever it decides (`ShareCore.authorize`, `perform`, `commit`).
///
/// It is a task-local value so that the core's own changes check it
/// without each face handing it down. Where it is not set, it is
/// ``nobody``: a face added later, or a task that does not inherit the
/// request's values, is refused everything rather than allowed everything.
/// Where it is set: the authentication middlewares (``everyone`` for a
/// share without a users file), a share link's face, the small-read lane
/// (which hands its requester down), and the server's own work outside any
/// request (a held-back WebDAV file put in place, thumbnails made ahead,
/// the takeover of a folder, the Inbox), which runs as ``everyone``.
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

    /// May do nothing: no path is seen, read or changed.
    public static let nobody = Requester(user: nil, policy: AccessPolicy(isAdmin: false, rules: []))

    /// Whether every path is open to this requester (nothing to filter).
    public var seesEverything: Bool { policy.isAdmin }

    /// The requester of the request being handled; ``nobody`` where no one
    /// set it. Security fails closed: a code path that forgets to say who
    /// it acts for (a new face, a task that starts afresh) is refused, as a
    /// test shows at once, rather than allowed everything unnoticed.
    @TaskLocal public static var current: Requester = .nobody
}
