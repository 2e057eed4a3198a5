import Accounts
import Hummingbird

extension WebDAVFace {
    /// The rights each method needs at the request's path, asked before
    /// anything about the path is looked at on disk (so a refusal tells
    /// nothing of what is there). MOVE and COPY ask again for the
    /// destination; the core asks again as it changes.
    /// - Throws: ``AccessDenied``.
    func davAuthorize(_ method: String, _ path: SharePath) async throws {
        let policy = Requester.current.policy
        if policy.isAdmin { return }
        switch method {
        case "OPTIONS":
            return
        case "GET", "HEAD", "PROPFIND":
            // A way in (a folder holding something shared) and a drop box are
            // seen, their content filtered; a file is sent only if readable.
            // (A drop box's content is not seen: only the drop box itself is listed.)
            if !policy.isListed(path.components) && !path.isRoot { try core.authorize(.read, path) }
        case "PUT":
            try await core.authorizePut(path)
        case "COPY":
            try core.authorize(.read, path)
        default:
            // DELETE, MKCOL, MOVE, PROPPATCH, LOCK, UNLOCK, and what is unknown.
            try core.authorize(.change, path)
        }
    }

    /// Whether `path` (a folder's member) is shown in a PROPFIND or a folder's page.
    func davShows(_ path: SharePath) -> Bool {
        Requester.current.policy.shows(path)
    }
}
