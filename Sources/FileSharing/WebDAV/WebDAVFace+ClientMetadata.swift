import CFileshareShim
import FileWatching
import Foundation
import Hummingbird
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

extension WebDAVFace {
    /// Requests for Finder's `._name` and `.DS_Store` files: kept apart (see
    /// `SharedFolder.openClientMetadata`), never in the shared folder, never
    /// listed, never in the events. Locks on them are real locks.
    func davClientMetadata(_ path: SharePath, request: Request, context: ShareContext) async throws -> Response {
        // Finder's files about an item go with the folder that holds it: read
        // there to read them (or copy them), write to write them. Asked
        // before anything about the path is looked at on disk.
        switch request.method.rawValue {
        case "OPTIONS": break
        case "GET", "HEAD", "PROPFIND", "COPY": try core.authorize(.read, path.parent)
        default: try core.authorize(.change, path.parent)
        }
        switch request.method.rawValue {
        case "OPTIONS":
            return WebDAV.optionsResponse()
        case "GET", "HEAD", "PROPFIND":
            let kept = try await core.blocking { () throws -> (SharedFolder.Metadata, [UInt8])? in
                guard let fd = try folder.openClientMetadata(path) else { return nil }
                defer { close(fd) }
                let metadata = try SharedFolder.metadata(fd: fd, path: path)
                guard metadata.kind == .file, request.method == .get else { return (metadata, []) }
                var bytes = [UInt8](repeating: 0, count: Int(min(metadata.size, SharedFolder.clientMetadataLimit)))
                let count = bytes.withUnsafeMutableBytes { cfs_pread(fd, $0.baseAddress, $0.count, 0) }
                return (metadata, Array(bytes[..<max(0, count)]))
            }
            guard let (metadata, bytes) = kept, metadata.kind == .file else {
                throw ShareError(.notFound, "'\(path)': no such file")
            }
            if request.method.rawValue == "PROPFIND" {
                let asked = try PropfindRequest(try await WebDAV.xmlBody(request))
                var writer = XMLWriter()
                writer.raw("<D:multistatus xmlns:D=\"DAV:\">")
                writeResponse(
                    DAVEntry(path: path, metadata: metadata, properties: []), asked: asked,
                    quota: (folder.availableBytes, folder.usedBytes), into: &writer)
                writer.raw("</D:multistatus>\n")
                return WebDAV.xmlResponse(
                    status: HTTPResponse.Status(code: 207, reasonPhrase: "Multi-Status"), writer.bytes)
            }
            return Response(
                status: .ok,
                headers: [
                    // Whatever a client put there, a browser takes it for bytes, never a page.
                    .contentType: "application/octet-stream", .xContentTypeOptions: "nosniff",
                    .contentLength: String(metadata.size), .eTag: metadata.entityTag,
                    .lastModified: HTTPDate.format(nanoseconds: metadata.modified),
                ],
                body: request.method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        case "PUT":
            let tokens = try await davConditions(request, path: path)
            try await davRequireTokens(tokens, changing: [path])
            try await davRequireParent(path)
            let file = try await core.blocking { try StagedFile.create(in: folder, prefix: "dav-metadata-") }
            _ = try await UploadBody.write(
                request.body, to: file, at: 0, limit: SharedFolder.clientMetadataLimit, core: core)
            let replaced = try await core.blocking { try file.commitAsClientMetadata(for: path) }
            return Response(status: replaced ? .noContent : .created, headers: [.contentLength: "0"])
        case "DELETE":
            let tokens = try await davConditions(request, path: path)
            try await davRequireTokens(tokens, changing: [path])
            guard try await core.blocking({ folder.removeClientMetadata(path) }) else {
                throw ShareError(.notFound, "'\(path)': no such file")
            }
            await removeLocks(under: path)
            return Response(status: .noContent)
        case "MOVE", "COPY":
            guard let header = request.headers.value(of: .destination), let (_, urlPath) = WebDAV.split(url: header),
                urlPath.hasPrefix(WebDAV.prefix),
                let destination = SharePath.clientMetadata(percentEncoded: urlPath.dropFirst(WebDAV.prefix.count))
            else {
                throw ShareError(
                    .forbidden, "Finder's metadata files are moved or copied only to names of the same kind")
            }
            // The destination's folder must be one the requester may write,
            // asked before the disk is: one they may not see answers as any
            // path they may not see (404), whether a file is there or not.
            try core.authorize(.change, destination.parent)
            let tokens = try await davConditions(request, path: path)
            try await davRequireTokens(
                tokens, changing: request.method.rawValue == "MOVE" ? [path, destination] : [destination])
            let overwrite = try WebDAV.overwrite(request)
            let move = request.method.rawValue == "MOVE"
            let existed = try await core.blocking { () throws -> Bool in
                guard let source = try folder.openClientMetadata(path) else {
                    throw ShareError(.notFound, "'\(path)': no such file")
                }
                defer { close(source) }
                if let existing = try folder.openClientMetadata(destination) {
                    close(existing)
                    guard overwrite else {
                        throw ShareError(.preconditionFailed, "'\(destination)' exists and Overwrite is F")
                    }
                }
                let copy = try StagedFile.create(in: folder, prefix: "dav-metadata-")
                let copied = cfs_copy_file(source, copy.descriptor)
                try SharedFolder.check(copied, destination, doing: .copy)
                let replaced = try copy.commitAsClientMetadata(for: destination)
                if move { folder.removeClientMetadata(path) }
                return replaced
            }
            if move { await removeLocks(under: path) }
            return Response(status: existed ? .noContent : .created, headers: [.contentLength: "0"])
        case "LOCK":
            return try await davLock(path, request: request, context: context, clientMetadata: true)
        case "UNLOCK":
            return try await davUnlock(path, request: request, context: context)
        default:
            throw DAVError(status: 403, message: "Finder's metadata files take no properties")
        }
    }
}
