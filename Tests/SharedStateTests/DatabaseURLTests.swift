import SharedState
import Testing

@Suite("database URLs")
struct DatabaseURLTests {
    @Test(
        "libpq-style URLs are read, and described without credentials",
        arguments: [
            (
                "postgres://alice:s%40cret@db.example:6543/files?sslmode=require",
                DatabaseURL.Endpoint.tcp(host: "db.example", port: 6543), "alice", "s@cret", "files",
                "postgresql://db.example:6543/files?sslmode=require"
            ),
            (
                "postgresql:///files?host=/run/pg&user=bob", .unixSocket(folder: "/run/pg", port: 5432), "bob", nil,
                "files", "postgresql:///files?host=/run/pg"
            ),
            (
                "postgresql://bob@/postgres?host=/tmp/x%20y&port=5433", .unixSocket(folder: "/tmp/x y", port: 5433),
                "bob", nil, "postgres", "postgresql:///postgres?host=/tmp/x%20y&port=5433"
            ),
            (
                "postgres://carol@[::1]/shared", .tcp(host: "::1", port: 5432), "carol", nil, "shared",
                "postgresql://[::1]/shared"
            ),
            (
                "postgres://dave@localhost", .tcp(host: "localhost", port: 5432), "dave", nil, "dave",
                "postgresql://localhost/dave"
            ),
        ] as [(String, DatabaseURL.Endpoint, String, String?, String, String)])
    func reads(
        text: String, endpoint: DatabaseURL.Endpoint, user: String, password: String?, database: String,
        described: String
    ) throws {
        let url = try DatabaseURL(text)
        #expect(url.endpoint == endpoint)
        #expect(url.user == user)
        #expect(url.password == password)
        #expect(url.database == database)
        #expect(url.description == described)
        #expect(!url.description.contains("cret"))
    }

    @Test("without a host: Debian's socket folder")
    func defaultSocket() throws {
        let url = try DatabaseURL("postgresql:///files")
        #expect(url.endpoint == .unixSocket(folder: "/var/run/postgresql", port: 5432))
    }

    @Test(
        "bad URLs are refused with a reason",
        arguments: [
            ("http://host/db", "scheme"), ("postgres:/db", "postgres://"), ("postgres://h:99999/db", "port"),
            ("postgres://h/db?sslmode=maybe", "sslmode"), ("postgres://h/db?colour=red", "colour"),
            ("postgres://u%zz@h/db", "percent"), ("postgres://[::1/db", "IPv6"),
        ])
    func refuses(text: String, reason: String) {
        let error = #expect(throws: DatabaseError.self) { try DatabaseURL(text) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }
}
