/// Whether a request that changes something may come from where it says it
/// comes from: a browser sends `Sec-Fetch-Site` (or at least `Origin`) with
/// every such request, and one another site's page sends is refused, so a
/// page elsewhere cannot make a signed-in browser change the share. Scripts
/// and WebDAV clients send neither and are not concerned. Pure.
enum CrossSiteCheck {
    /// The methods that change nothing (WebDAV's PROPFIND included).
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "PROPFIND"]

    /// Whether the request may go ahead.
    /// - Parameters:
    ///   - fetchSite: The `Sec-Fetch-Site` header.
    ///   - origin: The `Origin` header.
    ///   - host: The `Host` header (the authority the browser asked).
    static func allows(method: String, fetchSite: String?, origin: String?, host: String?) -> Bool {
        if safeMethods.contains(method) { return true }
        if let fetchSite {
            // "none": typed by the person (a bookmark); never a page elsewhere.
            return fetchSite == "same-origin" || fetchSite == "none"
        }
        guard let origin else { return true }
        // "scheme://host[:port]": what follows the scheme must be the Host asked.
        let parts = origin.split(separator: "/", omittingEmptySubsequences: false)
        guard let host, parts.count == 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return false }
        return parts[2].lowercased() == host.lowercased()
    }
}
