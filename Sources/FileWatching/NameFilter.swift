/// Decides which names are reported: hidden names (starting with `.`) only
/// when asked, and never those matching an exclusion glob.
struct NameFilter: Sendable {
    var includesHidden: Bool
    /// Globs matched against a name.
    var namePatterns: [String]
    /// Globs with a `/`, matched against the root-relative path.
    var pathPatterns: [String]

    init(includesHidden: Bool, excluded: [String]) {
        self.includesHidden = includesHidden
        namePatterns = excluded.filter { !$0.contains("/") }
        pathPatterns = excluded.filter { $0.contains("/") }.map { $0.hasPrefix("/") ? String($0.dropFirst()) : $0 }
    }

    /// Whether the item named `name` inside the folder at `parent` is reported.
    func includes(_ name: [UInt8], in parent: ItemPath) -> Bool {
        if name.first == UInt8(ascii: ".") && !includesHidden { return false }
        for pattern in namePatterns where globMatches(pattern, name, pathname: false) { return false }
        if !pathPatterns.isEmpty {
            let path = parent.appending(name).bytes
            for pattern in pathPatterns where globMatches(pattern, path, pathname: true) { return false }
        }
        return true
    }
}
