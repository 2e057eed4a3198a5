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
            case .outsideShare, .permissionDenied, .rootUnchangeable, .unsupportedKind, .unsupported: .forbidden
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
    /// The `/api` face's answer to a refused upload.
    init(_ refusal: UploadRefusal) {
        self.init(refusal.kind == .refused ? .unsupportedMediaType : .internalError, refusal.reason)
    }
}

/// Turns the core's errors into the `/api` face's statuses (the JSON body
/// is written by `ErrorMiddleware`, as for every other failure).
struct CoreErrorMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as FolderError {
            throw ShareError(error)
        } catch let error as UploadRefusal {
            throw ShareError(error)
        } catch let error as PreconditionFailure {
            throw ShareError(.preconditionFailed, error.message)
        }
    }
}
