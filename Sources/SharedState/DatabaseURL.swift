#if canImport(Glibc)
    import Glibc
#endif

/// Where the shared database is and how to log in, read from a libpq-style
/// URL: `postgres://user:password@host:port/database?sslmode=require`, or
/// for a Unix socket `postgresql:///database?host=/socket/folder` (a `host`
/// that begins with `/` is the folder of the server's socket, as libpq reads it).
///
/// Understood query parameters: `host`, `port`, `user`, `password`,
/// `dbname` and `sslmode` (`disable`, `prefer`, `require` — encrypted,
/// certificate not checked — or `verify-full`). Without a host, the socket
/// in `/var/run/postgresql` (Debian's) is used; without a user, the name of
/// the user running the program; without a database, the user's name.
public struct DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is reached.
    public enum Endpoint: Sendable, Hashable {
        /// A TCP connection to a host name or address.
        case tcp(host: String, port: Int)
        /// The server's socket in a folder (`.s.PGSQL.PORT` in it).
        case unixSocket(folder: String, port: Int)
    }

    /// Whether the connection is encrypted, as libpq's `sslmode` says.
    public enum TLSMode: String, Sendable, Hashable {
        /// Never encrypted.
        case disable
        /// Encrypted when the server offers it (certificate not checked).
        case prefer
        /// Always encrypted; the certificate is not checked.
        case require
        /// Always encrypted, with the certificate checked against the system's
        /// authorities and the host name.
        case verifyFull = "verify-full"
    }

    /// Where the server is.
    public var endpoint: Endpoint
    /// The role to log in as.
    public var user: String
    /// The password, if any.
    public var password: String?
    /// The database to open.
    public var database: String
    /// Whether to encrypt (TCP only: a Unix socket is never encrypted).
    public var tls: TLSMode

    /// The default folder of the server's socket (Debian's).
    public static let defaultSocketFolder = "/var/run/postgresql"

    /// Reads a URL.
    /// - Throws: ``DatabaseError`` with code `.invalidURL`, saying what is wrong.
    public init(_ text: String) throws(DatabaseError) {
        func invalid(_ why: String) -> DatabaseError {
            DatabaseError(
                code: .invalidURL,
                message:
                    "cannot read the database URL (\(why)); expected postgres://user@host:port/database or postgresql:///database?host=/socket/folder"
            )
        }
        var rest = Substring(text)
        guard let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") else {
            throw invalid("no postgres:// at its start")
        }
        let scheme = rest[..<colon].lowercased()
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw invalid("the scheme is \(scheme), not postgres or postgresql")
        }
        rest = rest[colon...].dropFirst(3)
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var authority = rest
        var user: String?
        var password: String?
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let colon = userInfo.firstIndex(of: ":")
            guard let name = Self.decode(userInfo[..<(colon ?? userInfo.endIndex)]) else {
                throw invalid("bad percent-encoding in the user")
            }
            user = name
            if let colon {
                guard let secret = Self.decode(userInfo[userInfo.index(after: colon)...]) else {
                    throw invalid("bad percent-encoding in the password")
                }
                password = secret
            }
        }
        var host: String?
        var port: Int?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("an IPv6 address without its ]") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            authority = authority[authority.index(after: close)...]
            if !authority.isEmpty && authority.first != ":" { throw invalid("text after the IPv6 address") }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            authority = authority[colon...]
        } else {
            host = authority.isEmpty ? nil : String(authority)
            authority = ""
        }
        if authority.first == ":" {
            guard let number = Int(authority.dropFirst()), (1...65535).contains(number) else {
                throw invalid("the port is not a number from 1 to 65535")
            }
            port = number
        }
        guard var database = Self.decode(path) else { throw invalid("bad percent-encoding in the database name") }
        var tls = TLSMode.prefer
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let key = Self.decode(parts[0]), let value = Self.decode(parts[1]) else {
                throw invalid("the query part \(pair) is not key=value")
            }
            switch key {
            case "host": host = value
            case "port":
                guard let number = Int(value), (1...65535).contains(number) else {
                    throw invalid("the port is not a number from 1 to 65535")
                }
                port = number
            case "user": user = value
            case "password": password = value
            case "dbname": database = value
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw invalid("sslmode \(value) is not disable, prefer, require or verify-full")
                }
                tls = mode
            default: throw invalid("the parameter \(key) is not one fileshare knows")
            }
        }
        let login = user ?? Self.currentUserName()
        self.user = login
        self.password = password
        self.database = database.isEmpty ? login : database
        self.tls = tls
        let resolvedPort = port ?? 5432
        if let host, !host.isEmpty {
            endpoint =
                host.hasPrefix("/")
                ? .unixSocket(folder: host, port: resolvedPort) : .tcp(host: host, port: resolvedPort)
        } else {
            endpoint = .unixSocket(folder: Self.defaultSocketFolder, port: resolvedPort)
        }
    }

    /// The URL without the user or the password, for logs and `/api/info`.
    public var description: String {
        var text = "postgresql://"
        var parameters: [String] = []
        switch endpoint {
        case .tcp(let host, let port):
            text += host.contains(":") ? "[\(host)]" : host
            if port != 5432 { text += ":\(port)" }
            if tls != .prefer { parameters.append("sslmode=\(tls.rawValue)") }
        case .unixSocket(let folder, let port):
            parameters.append("host=\(Self.encode(folder))")
            if port != 5432 { parameters.append("port=\(port)") }
        }
        text += "/" + Self.encode(database)
        if !parameters.isEmpty { text += "?" + parameters.joined(separator: "&") }
        return text
    }

    /// Percent-decodes; `nil` for a broken escape or bytes that are not UTF-8.
    static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Percent-encodes all but unreserved characters and `/`.
    static func encode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                result += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
            }
        }
        return result
    }

    /// The name of the user running the program (libpq's default).
    static func currentUserName() -> String {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "postgres" }
        return String(cString: name)
    }
}
