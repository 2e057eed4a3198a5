import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder for one test's log, removed afterwards.
final class LogFolder: @unchecked Sendable {
    let path: String

    init() {
        var template = Array("\(NSTemporaryDirectory())/fileshare-log-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: made!) + "/changes"
    }

    deinit { try? FileManager.default.removeItem(atPath: String(path.dropLast("/changes".count))) }
}
