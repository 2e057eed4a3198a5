/// The rules for names of users and groups, and for the paths rights are
/// granted on. Users and groups share one namespace, so `grant NAME` is
/// never ambiguous.
public enum AccountName {
    /// Whether `name` may name a user or group: 1 to 64 of letters, digits
    /// and `. _ @ + -`, starting with a letter or digit (an e-mail address works).
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), isAlphanumeric(bytes[0]) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || "._@+-".utf8.contains($0) }
    }

    /// Checks a name, or says what a valid one looks like.
    public static func check(_ name: String) throws(AccountsError) {
        guard isValid(name) else {
            throw AccountsError(
                .invalid,
                "'\(name)' is not a valid name: use 1 to 64 letters, digits and . _ @ + -, starting with a letter or digit"
            )
        }
    }

    /// The names of a path in the shared folder, root first (`""` and `"/"`
    /// are the root); refuses `.`, `..`, hidden names (never shared) and NUL.
    public static func pathComponents(_ path: String) throws(AccountsError) -> [String] {
        var names: [String] = []
        for name in path.split(separator: "/", omittingEmptySubsequences: true) {
            if name == "." || name == ".." || name.hasPrefix(".") || name.utf8.contains(0) {
                throw AccountsError(
                    .invalid,
                    "'\(path)' is not a path in the shared folder: no '.', '..' or hidden names; write it as Projects/Alpha"
                )
            }
            names.append(String(name))
        }
        return names
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
