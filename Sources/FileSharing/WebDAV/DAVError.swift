import FileWatching

/// A WebDAV failure: a status, a message for a person, and where RFC 4918
/// names one, the precondition that failed (sent as a `DAV:error` body).
struct DAVError: Error, Sendable {
    var status: Int
    var message: String
    var condition: String? = nil
    var hrefs: [String] = []

    static func locked(_ lock: DAVLock, condition: String = "lock-token-submitted") -> DAVError {
        DAVError(
            status: 423, message: "'\(lock.root)' is locked; send its lock token in an If header",
            condition: condition, hrefs: [WebDAV.href(lock.root, collection: false)])
    }
}

extension DAVError {
    /// The `/dav` face's answer to a failure of the folder on disk.
    init(_ error: FolderError) {
        switch error.code {
        case .notFound: self.init(status: 404, message: error.message)
        case .parentMissing, .parentNotFolder, .isFolder: self.init(status: 409, message: error.message)
        case .outsideShare, .symbolicLink, .permissionDenied, .rootUnchangeable, .unsupportedKind, .unsupported:
            self.init(status: 403, message: error.message)
        case .noSpace: self.init(status: 507, message: error.message)
        // Only a copy or move with `Overwrite: F` finds its destination taken while it puts the item in place.
        case .exists where error.operation == .commit:
            self.init(status: 412, message: "'\(error.path)' exists and Overwrite is F")
        case .exists: self.init(status: 409, message: error.message)
        case .intoItself: self.init(status: error.operation == .copy ? 403 : 409, message: error.message)
        case .nameTooLong: self.init(status: 400, message: error.message)
        default: self.init(status: 500, message: error.message)
        }
    }
}
