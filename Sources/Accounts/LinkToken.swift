import Crypto
import Foundation

/// A link's secret: 256 random bits from the system's generator, written
/// base64url without padding (43 characters). Only its SHA-256 is kept.
public enum LinkToken {
    /// A new token.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<4 { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        return Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_")
            .replacing("=", with: "")
    }

    /// Whether `text` has a token's shape (anything else is not looked up).
    public static func isWellFormed(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 43
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// SHA-256 of the token, lowercase hexadecimal: what the store keeps.
    public static func hash(_ token: some StringProtocol) -> String {
        SHA256.hash(data: Array(token.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The link's public id: from the hash of the hash, so it tells nothing of either.
    public static func id(ofHash hash: String) -> String {
        String(LinkToken.hash(hash).prefix(12))
    }
}
