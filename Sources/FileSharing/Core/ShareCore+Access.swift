import Accounts
import FileWatching

/// The rights, applied by the core: every face asks these, and the core's
/// own changes (`perform`, `commit`) check them again, so a face that
/// forgets to ask still cannot change what the requester may not.
extension ShareCore {
    /// Throws unless the current requester (``Requester/current``) may do `operation` at `path`.
    /// - Throws: ``AccessDenied``.
    func authorize(_ operation: AccessOperation, _ path: SharePath) throws(AccessDenied) {
        try ShareCore.authorize(operation, path, for: Requester.current)
    }

    static func authorize(_ operation: AccessOperation, _ path: SharePath, for requester: Requester)
        throws(AccessDenied)
    {
        if let denied = AccessRules.check(operation, at: path.components, policy: requester.policy) { throw denied }
    }

    /// Throws unless `requester` may do `operation` at `path` and at
    /// everything under it (``AccessRules/checkTree(_:at:policy:)``): for
    /// what copies, moves or deletes a folder whole.
    static func authorizeTree(_ operation: AccessOperation, _ path: SharePath, for requester: Requester)
        throws(AccessDenied)
    {
        if let denied = AccessRules.checkTree(operation, at: path.components, policy: requester.policy) {
            throw denied
        }
    }

    /// Throws unless the current requester may put a file at `path`: a new
    /// one (``AccessOperation/add``) or over the one there (``AccessOperation/replace``), as the disk says now.
    /// - Throws: ``AccessDenied``.
    func authorizePut(_ path: SharePath) async throws {
        let requester = Requester.current
        if requester.seesEverything { return }
        let folder = self.folder
        try await blocking { try ShareCore.authorizePut(path, for: requester, in: folder) }
    }

    /// The blocking part of ``authorizePut(_:)``.
    static func authorizePut(_ path: SharePath, for requester: Requester, in folder: SharedFolder) throws {
        if requester.seesEverything { return }
        // Only what the requester may see is asked of the disk.
        try authorize(.add, path, for: requester)
        // A missing folder on the way holds nothing yet (uploads make it);
        // any other failure (a symbolic link on the way) refuses the upload now.
        if try existsForPut(path, in: folder) { try authorize(.replace, path, for: requester) }
    }

    /// Whether something is at `path`; a missing folder on the way holds nothing.
    private static func existsForPut(_ path: SharePath, in folder: SharedFolder) throws(FolderError) -> Bool {
        do {
            return try folder.existingKind(path) != nil
        } catch  where error.code == .notFound {
            return false
        }
    }

    /// How the current requester sees the folder at `path`.
    /// - Throws: ``AccessDenied`` (`hidden`) when it does not exist for them.
    func listingScope(_ path: SharePath) throws(AccessDenied) -> ListingScope {
        guard let scope = AccessRules.listing(at: path.components, policy: Requester.current.policy) else {
            throw AccessDenied(code: .hidden, message: "'/\(path)': no such file or folder")
        }
        return scope
    }

    /// Checks `access` (the operation wanted at each path; `.add` meaning a
    /// new file or, where one is, its replacement) for `requester`, on the disk as it is now (blocking).
    /// Every other operation is checked on the whole tree under its path:
    /// a change of a folder takes all it holds along.
    static func check(_ access: [SharePath: AccessOperation], for requester: Requester, in folder: SharedFolder)
        throws
    {
        if requester.seesEverything { return }
        for (path, operation) in access {
            if operation == .add {
                try authorizePut(path, for: requester, in: folder)
            } else {
                try authorizeTree(operation, path, for: requester)
            }
        }
    }
}

extension AccessPolicy {
    /// Whether `path` (an item in a listing, an entry of a ZIP) is shown.
    func shows(_ path: SharePath) -> Bool { isAdmin || isListed(path.components) }
}

extension ShareCore {
    /// What the current requester may be told of the change log: their
    /// policy, with the sizes of files from the observer's tree.
    func visibility() -> ChangeVisibility.Scope {
        let observer = self.observer
        return ChangeVisibility.Scope(
            policy: Requester.current.policy, size: { path in observer.item(at: path)?.size })
    }
}
