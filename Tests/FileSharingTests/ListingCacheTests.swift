import Accounts
import FileshareTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

/// Large listings kept while the observer's tree is unchanged: never an
/// answer the tree has moved past, never one user's for another.
@Suite("Listing cache")
struct ListingCacheTests {
    static func body(_ size: Int, _ fill: UInt8 = 0x61) -> ByteBuffer {
        ByteBuffer(bytes: [UInt8](repeating: fill, count: size))
    }

    @Test("kept per folder and rights for one tree version; small ones not kept; least recently used dropped first")
    func rules() throws {
        let cache = ListingCache(capacity: 2)
        let everyone = AccessPolicy(isAdmin: true, rules: [])
        let reader = try AccessFixture.policy("reader")
        let team = ListingCache.Key(path: try SharePath(plain: "Team"), policy: everyone)
        let teamForReader = ListingCache.Key(path: team.path, policy: reader)
        let other = ListingCache.Key(path: try SharePath(plain: "Other"), policy: everyone)
        cache.keep(Self.body(100), for: team, version: 1)
        #expect(cache.body(for: team, version: 1) == nil, "a small listing costs less to make than to keep")
        cache.keep(Self.body(ListingCache.minimumBytes), for: team, version: 1)
        #expect(cache.body(for: team, version: 1) == Self.body(ListingCache.minimumBytes))
        #expect(cache.body(for: teamForReader, version: 1) == nil, "another user's rights")
        #expect(cache.body(for: team, version: 2) == nil, "the tree changed")
        #expect(cache.body(for: team, version: 1) == nil, "dropped once stale")
        cache.keep(Self.body(ListingCache.minimumBytes, 1), for: team, version: 2)
        cache.keep(Self.body(ListingCache.minimumBytes, 2), for: other, version: 2)
        _ = cache.body(for: team, version: 2)
        cache.keep(Self.body(ListingCache.minimumBytes, 3), for: teamForReader, version: 2)
        #expect(cache.body(for: other, version: 2) == nil, "the least recently used went")
        #expect(cache.body(for: team, version: 2) == Self.body(ListingCache.minimumBytes, 1))
        #expect(cache.body(for: teamForReader, version: 2) == Self.body(ListingCache.minimumBytes, 3))
        cache.keep(Self.body(ListingCache.maximumBytes), for: other, version: 2)
        #expect(cache.body(for: other, version: 2) == nil, "larger than half of all it keeps")
    }

    @Test("a large listing answered again is the same; a file added, grown or removed outside shows at once after")
    func liveListing() async throws {
        try await MachineSettings.shared {
            let share = try ShareFixture()
            let names = (0..<600).map { "A rather long name for a file, number \(1000 + $0).txt" }
            for name in names { try share.write("Big/" + name, "x") }
            try await share.test { (client: any TestClientProtocol) async throws in
                func listing() async throws -> (text: String, items: [[String: Any]]) {
                    let answer = try await client.request("/api/list?path=Big")
                    #expect(answer.status == .ok)
                    return (answer.text, answer.json["items"] as? [[String: Any]] ?? [])
                }
                // Every file seen and seen finished: the tree stands still.
                #expect(
                    await eventuallyTrue {
                        let items = try await listing().items
                        return items.count == 600 && items.allSatisfy { $0["writing"] as? Bool == false }
                    })
                let first = try await listing()
                #expect(first.text.utf8.count >= ListingCache.minimumBytes, "large enough to be kept")
                #expect(try await listing().text == first.text)
                // Outside the server: one file grows, one is added, one removed.
                try share.write("Big/" + names[7], "grown")
                try share.write("Big/new.txt", "new")
                #expect(unlink(share.path("Big/" + names[9])) == 0)
                #expect(
                    await eventuallyTrue {
                        let items = try await listing().items
                        let grown = items.first { $0["name"] as? String == names[7] }
                        return items.count == 600 && items.contains { $0["name"] as? String == "new.txt" }
                            && !items.contains { $0["name"] as? String == names[9] } && grown?["size"] as? Int == 5
                    })
                // Once the observer has it, every answer has it: no older one comes back.
                for _ in 0..<5 {
                    let items = try await listing().items
                    #expect(items.contains { $0["name"] as? String == "new.txt" })
                }
            }
        }
    }

    @Test("one user's kept listing is never another's: what the rules hide stays hidden")
    func perUser() async throws {
        let folder = try TemporaryFolder()
        let usersFile = folder("users.json")
        try UsersFile.write(try AccessFixture.directory(), to: usersFile)
        let share = try ShareFixture(credentials: false, users: usersFile)
        for index in 0..<600 { try share.write("Team/A rather long name for a plan, number \(index).txt", "p") }
        try share.write("Team/Secret/code.txt", "code")
        try await share.test(.live) { client in
            func names(_ user: String) async throws -> [String] {
                let answer = try await AccessMatrixTests.send(client, user, "GET", "/api/list?path=Team")
                #expect(answer.status == .ok)
                return (answer.json["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            }
            #expect(await eventuallyTrue { try await names("admin").count == 601 })
            for _ in 0..<2 {
                // Asked in turn, each from what is kept after the first time.
                #expect(try await names("admin").contains("Secret"))
                let seen = try await names("reader")
                #expect(seen.count == 600 && !seen.contains("Secret"))
            }
        }
    }
}
