public import FileWatching

/// Who made a change through fileshare: the face, the client's address, the
/// user and the method. Kept with the change in the log as data, so an app
/// can tell its users' uploads from its own writes, and an audit can ask
/// who did what.
public struct ChangeOrigin: Sendable, Hashable {
    /// The face: `api`, `dav`, …
    public var face: String
    /// The client's address and port.
    public var client: String
    /// The authenticated user, if any.
    public var user: String?
    /// The HTTP method (or the library call) that made the change.
    public var method: String

    /// Creates an origin.
    public init(face: String, client: String, user: String? = nil, method: String) {
        self.face = face
        self.client = client
        self.user = user
        self.method = method
    }

    /// The origin as a JSON object: `{"by":"server","face":…,"client":…,"method":…,"user":…}`.
    public var json: String {
        var fields = [
            "\"by\":\"server\"", "\"face\":" + JSONText.quoted(face), "\"client\":" + JSONText.quoted(client),
            "\"method\":" + JSONText.quoted(method),
        ]
        if let user { fields.append("\"user\":" + JSONText.quoted(user)) }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
