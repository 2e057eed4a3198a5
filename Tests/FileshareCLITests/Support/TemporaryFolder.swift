import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A temporary folder, removed on release.
final class TemporaryFolder {
    let path: String
    init() throws {
        var template = Array("\(temporaryFolder())/fileshare-cli-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CocoaError(.fileWriteUnknown)
        }
        path = String(cString: made)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The system's temporary folder, without a trailing slash or symbolic links.
func temporaryFolder() -> String {
    let base = NSTemporaryDirectory()
    guard let resolved = realpath(base, nil) else { return "/tmp" }
    defer { free(resolved) }
    return String(cString: resolved)
}
