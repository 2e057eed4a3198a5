import Crypto

/// Checks the password given to `fileshare serve --user NAME --password
/// PASSWORD`, which is held in this server's memory only: its HMAC-SHA-256
/// under a key made when the hasher is (random, never written), compared
/// in constant time.
///
/// No cost, so never for what is written anywhere: a slow hash guards a
/// file that may be stolen, and whoever reads this server's memory has the
/// password itself anyway. The key makes what is derived from a hash (a
/// session's stamp) useless for guessing the password elsewhere.
public struct MemorySecretHasher: PasswordHasher {
    private let key = SymmetricKey(size: .bits256)

    /// Creates the hasher, with a key of its own.
    public init() {}

    public func hash(_ password: String) -> String {
        let hexDigits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in HMAC<SHA256>.authenticationCode(for: Array(password.utf8), using: key) {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    public func verify(_ password: String, against hash: String) -> Bool {
        let expected = Array(hash.utf8)
        let found = Array(self.hash(password).utf8)
        guard expected.count == found.count else { return false }
        // Every byte compared, whatever differs first: the time tells nothing.
        var difference: UInt8 = 0
        for index in found.indices { difference |= found[index] ^ expected[index] }
        return difference == 0
    }
}
