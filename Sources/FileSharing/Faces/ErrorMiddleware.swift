import FileWatching
import Hummingbird
import Logging
import NIOCore

/// Answers every failure as `{"error": "..."}` with its status; the core's
/// errors (``FolderError``, ``SharePathError``, ``UploadRefusal``, ``PreconditionFailure``) with the `/api` mapping
/// (`ShareError(_:)`). The WebDAV face answers its own with `DAVError(_:)`.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = ShareContext

    func handle(_ request: Request, context: ShareContext, next: (Request, ShareContext) async throws -> Response)
        async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as ShareError {
            return .json(status: HTTPResponse.Status(code: error.kind.rawValue), error: error.message)
        } catch let error as FolderError {
            let error = ShareError(error)
            return .json(status: HTTPResponse.Status(code: error.kind.rawValue), error: error.message)
        } catch let error as SharePathError {
            let error = ShareError(error)
            return .json(status: HTTPResponse.Status(code: error.kind.rawValue), error: error.message)
        } catch let error as UploadRefusal {
            let error = ShareError(error)
            return .json(status: HTTPResponse.Status(code: error.kind.rawValue), error: error.message)
        } catch let error as AccessDenied {
            let error = ShareError(error)
            return .json(status: HTTPResponse.Status(code: error.kind.rawValue), error: error.message)
        } catch let error as PreconditionFailure {
            return .json(status: .preconditionFailed, error: error.message)
        } catch let error as HTTPError {
            return .json(status: error.status, error: error.body ?? error.status.reasonPhrase)
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return .json(status: .internalServerError, error: "the server failed: \(error)")
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
