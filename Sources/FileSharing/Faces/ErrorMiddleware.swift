import Accounts
import FileWatching
import Hummingbird
import Logging
import NIOCore

/// Answers every failure as `{"error": "..."}` with its status; the core's
/// errors with the `/api` mapping (``shareError(for:)``). The WebDAV face
/// answers its own with `DAVError(_:)`.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            if let answer = ErrorMiddleware.answer(to: error), answer.status != .internalServerError { return answer }
            // A failure nobody foresaw: the log has it whole; the client is told
            // nothing of the server's insides (its paths, its libraries' words).
            context.logger.error("request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .json(status: .internalServerError, error: ErrorMiddleware.internalFailure)
        }
    }

    /// What a client is told of a failure of the server's own (a 500).
    static let internalFailure = "the server could not do this; its log says why"

    /// The answer to a failure the faces and the core know; `nil` for
    /// any other (a 500). The audit records a failed request with the
    /// status this gives, which is the one the client sees.
    static func answer(to error: any Error) -> Response? {
        if let error = error as? HTTPError {
            return .json(status: error.status, error: error.body ?? error.status.reasonPhrase)
        }
        guard let answer = shareError(for: error) else { return nil }
        let status = HTTPResponse.Status(code: answer.kind.rawValue)
        if let refusal = error as? UploadRefusal, let rename = refusal.rename {
            // The name to give the file, for a client to tell its person in their words.
            return .json(
                status: status,
                body: "{\"error\":" + JSONText.quoted(answer.message) + ",\"rename\":" + JSONText.quoted(rename) + "}")
        }
        return .json(status: status, error: answer.message)
    }

    /// The one mapping of the core's errors (which know no HTTP) to the
    /// `/api` faces' statuses; `nil` for a failure nobody foresaw. The tus
    /// routes answer with it too; WebDAV has its own (`DAVError(_:)`).
    static func shareError(for error: any Error) -> ShareError? {
        switch error {
        case let error as ShareError: error
        case let error as FolderError: ShareError(error)
        case let error as SharePathError: ShareError(error)
        case let refusal as UploadRefusal: ShareError(refusal)
        case let error as AccessDenied: ShareError(error)
        case let error as PreconditionFailure: ShareError(.preconditionFailed, error.message)
        case let error as DAVLockStoreError: ShareError(.serviceUnavailable, error.message)
        case let error as LockedByWebDAV: ShareError(.locked, error.message)
        case let error as UploadStateError: ShareError(.serviceUnavailable, error.message)
        case let error as PendingUploadLimitError: ShareError(error)
        case let error as AccountsError: ShareError(error)
        default: nil
        }
    }
}

extension Response {
    /// `{"error": message}` with a status.
    static func json(status: HTTPResponse.Status, error message: String) -> Response {
        json(status: status, body: "{\"error\":" + JSONText.quoted(message) + "}")
    }

    /// A JSON body.
    static func json(status: HTTPResponse.Status, body: String) -> Response {
        var buffer = ByteBuffer()
        buffer.writeString(body)
        return Response(
            status: status,
            headers: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(buffer.readableBytes),
                .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: buffer))
    }
}
