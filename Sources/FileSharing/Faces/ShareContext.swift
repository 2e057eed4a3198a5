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
    /// Whether the client is on this machine (the loopback interface).
    let isLoopback: Bool
    /// The user, once authenticated.
    var user: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        if let address = source.channel.remoteAddress {
            client = "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
            self.address = address.ipAddress ?? "?"
            isLoopback = ShareContext.isLoopback(address)
        } else {
            client = "unknown"
            address = "unknown"
            isLoopback = false
        }
    }

    /// 127.0.0.0/8, ::1, and IPv4-mapped loopback addresses.
    static func isLoopback(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4, .v6:
            guard let ip = address.ipAddress else { return false }
            return ip.hasPrefix("127.") || ip == "::1" || ip.hasPrefix("::ffff:127.")
        case .unixDomainSocket: return true
        }
    }

    /// JSON bodies (mkdir, move) are small.
    var maxUploadSize: Int { 64 * 1024 }
}
