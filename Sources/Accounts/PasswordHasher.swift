import HummingbirdBcrypt

/// Turns passwords into slow salted hashes and checks them: what the users
/// file stores instead of passwords.
public protocol PasswordHasher: Sendable {
    /// A new salted hash of `password`.
    func hash(_ password: String) -> String
    /// Whether `password` is the one `hash` was made from.
    func verify(_ password: String, against hash: String) -> Bool
}

/// bcrypt (HummingbirdBcrypt, from hummingbird-auth): slow on purpose, with
/// a cost that doubles the work per step, so a stolen users file does not
/// give the passwords away quickly.
public struct BcryptHasher: PasswordHasher {
    /// The cost (log2 of the rounds): 12 takes a few hundred milliseconds
    /// on a small server, which is what a sign-in can afford.
    public var cost: UInt8

    /// Creates a hasher with `cost` (4 to 31).
    public init(cost: UInt8 = 12) {
        self.cost = min(max(cost, 4), 31)
    }

    public func hash(_ password: String) -> String {
        Bcrypt.hash(password, cost: cost)
    }

    public func verify(_ password: String, against hash: String) -> Bool {
        // A hash that is not bcrypt's never matches (and must not crash).
        guard hash.hasPrefix("$2") else { return false }
        return Bcrypt.verify(password, hash: hash)
    }
}
