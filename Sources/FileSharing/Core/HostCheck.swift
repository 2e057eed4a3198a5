/// Whether a request's `Host` names this machine's loopback interface. A
/// share without credentials answers only such requests: a page elsewhere
/// that points a name of its own at 127.0.0.1 (DNS rebinding) makes the
/// browser send that name, and gets nothing. Pure.
enum HostCheck {
    /// Whether `authority` (the `Host` field: a name or address, and perhaps
    /// a port) is `localhost`, a name under `.localhost` (which browsers
    /// resolve to loopback themselves, RFC 6761), an address of 127.0.0.0/8,
    /// or `[::1]`. A request without one (HTTP/1.0) comes from no browser
    /// page and is not concerned.
    static func isLoopback(_ authority: String?) -> Bool {
        guard let authority else { return true }
        var host = Substring(authority)
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = host[host.index(after: host.startIndex)..<close]
            return host == "::1"
        }
        if let colon = host.lastIndex(of: ":") {
            guard host[host.index(after: colon)...].allSatisfy(\.isASCII) else { return false }
            host = host[..<colon]
        }
        let name = host.lowercased()
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && UInt8(part) != nil
        }
    }
}
