import Hummingbird
import Logging
import NIOCore

/// The request context: the client's address and the authenticated user.
struct ShareContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's address and port.
    let client: String
    /// The client's address alone (what failed sign-ins are counted by).
    let address: String
    /// The user, once authenticated.
    var user: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        if let address = source.channel.remoteAddress {
            client = "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
            self.address = address.ipAddress ?? "?"
        } else {
            client = "unknown"
            address = "unknown"
        }
    }

    /// JSON bodies (mkdir, move) are small.
    var maxUploadSize: Int { 64 * 1024 }
}
