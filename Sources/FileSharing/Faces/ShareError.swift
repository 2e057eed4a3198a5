import Accounts
import Hummingbird

/// A failure the server answers with a status and `{"error": "..."}`.
public struct ShareError: Error, Sendable, CustomStringConvertible {
    /// The kinds of failure, each with its HTTP status.
    public enum Kind: Int, Sendable {
        case badRequest = 400
        case unauthorized = 401
        case forbidden = 403
        case notFound = 404
        case methodNotAllowed = 405
        case conflict = 409
        case preconditionFailed = 412
        case contentTooLarge = 413
        case unsupportedMediaType = 415
        case rangeNotSatisfiable = 416
        case locked = 423
        case failedDependency = 424
        case tooManyRequests = 429
        case insufficientStorage = 507
        case internalError = 500
        case badGateway = 502
        case serviceUnavailable = 503
    }

    /// What kind of failure, and so the status.
    public var kind: Kind
    /// For a person: what went wrong and, where there is one, the fix.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue) \(message)" }
}

extension ShareError {
    /// The `/api` face's answer to a failure of the folder on disk.
    init(_ error: FolderError) {
        let kind: Kind =
            switch error.code {
            case .notFound: .notFound
            case .outsideShare, .symbolicLink, .permissionDenied, .rootUnchangeable, .unsupportedKind, .unsupported:
                .forbidden
            case .noSpace: .insufficientStorage
            case .isFolder, .exists, .parentMissing, .parentNotFolder: .conflict
            case .intoItself: error.operation == .copy ? .forbidden : .conflict
            case .nameTooLong: .badRequest
            default: .internalError
            }
        self.init(kind, error.message)
    }
}

extension ShareError {
    /// A resumable upload not begun: 429 when the requester has as many
    /// under way as allowed (RFC 6585: ending one of theirs, or waiting,
    /// makes room), 503 when the folder has.
    init(_ error: PendingUploadLimitError) {
        self.init(error.code == .owner ? .tooManyRequests : .serviceUnavailable, error.message)
    }
}

extension ShareError {
    /// The `/api` face's answer to a refused upload.
    init(_ refusal: UploadRefusal) {
        self.init(refusal.kind == .refused ? .unsupportedMediaType : .internalError, refusal.reason)
    }
}

extension ShareError {
    /// The `/api` face's answer to a path it does not allow: 400, or 403 for a hidden name.
    init(_ error: SharePathError) {
        self.init(error.reason == .hidden ? .forbidden : .badRequest, error.message)
    }
}

extension ShareError {
    /// The answer to a refusal of the rights: 404 where the path does not
    /// exist for the requester (the same as for a missing path), 403 where
    /// they see it but may not do this, 409 for a name taken in a drop box.
    init(_ denied: AccessDenied) {
        let kind: Kind =
            switch denied.code {
            case .hidden: .notFound
            case .forbidden: .forbidden
            case .dropBox: .conflict
            }
        self.init(kind, denied.message)
    }
}

extension ShareError {
    /// The answer to a failure of the sessions' or links' store: 503 while
    /// the shared store cannot be reached (neither yes nor no can be said),
    /// 500 for anything else.
    init(_ error: AccountsError) {
        self.init(error.code == .unavailable ? .serviceUnavailable : .internalError, error.message)
    }
}
