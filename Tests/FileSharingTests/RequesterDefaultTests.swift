import Accounts
import ChangeLog
import FileshareTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FileSharing

/// Who a request is from is said where requests enter; where nothing says
/// it, the requester is nobody, and the core and the faces refuse
/// everything (security fails closed).
@Suite("Requester: nobody unless set")
struct RequesterDefaultTests {
    static let origin = ChangeOrigin(face: "test", client: "-", method: "TEST")

    @Test("outside any request, the requester may do nothing")
    func defaultIsNobody() {
        let requester = Requester.current
        #expect(!requester.seesEverything)
        #expect(requester.user == nil && requester.link == nil)
        #expect(throws: AccessDenied.self) {
            try ShareCore.authorize(.read, try SharePath(plain: "a.txt"), for: requester)
        }
    }

    @Test("the core refuses to read, list or change for a code path that set no requester")
    func coreRefuses() async throws {
        let share = try ShareFixture()
        try share.write("notes.txt", "kept")
        let core = share.server.core
        let path = try SharePath(plain: "notes.txt")
        #expect(throws: AccessDenied.self) { try core.authorize(.read, path) }
        // The root is where everyone starts, shown filtered to nothing; a folder in it is not there.
        #expect(try core.listingScope(.root) == .filtered)
        try share.write("docs/plan.txt", "plan")
        #expect(throws: AccessDenied.self) { try core.listingScope(try SharePath(plain: "docs")) }
        await #expect(throws: AccessDenied.self) {
            try await core.perform([path], origin: Self.origin) { try share.server.core.folder.remove(path) }
        }
        await #expect(throws: AccessDenied.self) { try await core.authorizePut(try SharePath(plain: "new.txt")) }
        #expect(share.read("notes.txt") == "kept")
        // The same work, said to be the server's own, is done.
        try await Requester.$current.withValue(.everyone) {
            try await core.perform([path], origin: Self.origin) { try share.server.core.folder.remove(path) }
        }
        #expect(share.read("notes.txt") == nil)
    }

    @Test("a face mounted without the authentication refuses every request")
    func faceWithoutAuthentication() async throws {
        let share = try ShareFixture()
        try share.write("notes.txt", "kept")
        try share.write("docs/plan.txt", "plan")
        let router = Router(context: ShareContext.self)
        router.add(middleware: ErrorMiddleware())
        router.addRoutes(APIFace(core: share.server.core, readOnly: false).routes(), atPath: "/api")
        try await Application(router: router).test(.router) { client in
            let read = try await client.execute(uri: "/api/files/notes.txt", method: .get)
            #expect(read.status == .notFound)
            #expect(!String(buffer: read.body).contains("kept"))
            // The root answers, showing nothing in it.
            let list = try await client.execute(uri: "/api/list?path=", method: .get)
            #expect(!String(buffer: list.body).contains("notes.txt"))
            let folder = try await client.execute(uri: "/api/list?path=docs", method: .get)
            #expect(folder.status == .notFound)
            #expect(!String(buffer: folder.body).contains("plan.txt"))
            let put = try await client.execute(
                uri: "/api/files/new.txt", method: .put, body: ByteBuffer(string: "written"))
            #expect(put.status == .notFound || put.status == .forbidden)
            let delete = try await client.execute(uri: "/api/files/notes.txt", method: .delete)
            #expect(delete.status == .notFound)
        }
        #expect(share.read("notes.txt") == "kept")
        #expect(share.read("new.txt") == nil)
    }
}
