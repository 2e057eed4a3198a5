import Foundation
import Testing

/// A program some tests drive that a machine may lack. `.ci/run` installs
/// each of them when missing, so on CI (`CI` set) a missing one fails the
/// test; elsewhere the test is skipped, saying what to install.
struct ExternalTool: Sendable, CustomStringConvertible {
    /// The executable's absolute path.
    let path: String
    /// The Debian package that has it.
    let package: String

    static let litmus = ExternalTool(path: "/usr/bin/litmus", package: "litmus")
    static let cadaver = ExternalTool(path: "/usr/bin/cadaver", package: "cadaver")
    static let rclone = ExternalTool(path: "/usr/bin/rclone", package: "rclone")
    static let mountDavfs = ExternalTool(path: "/usr/sbin/mount.davfs", package: "davfs2")

    var description: String { (path as NSString).lastPathComponent }

    var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

    /// Returns when the tool is installed. Otherwise fails the test on CI and
    /// skips it elsewhere.
    func require(sourceLocation: SourceLocation = #_sourceLocation) throws {
        if isInstalled { return }
        let message = "\(self) is missing (Debian package \(package); .ci/run installs it)"
        if ExternalTool.isCI { throw MissingTool(message: message) }
        try Test.cancel("skipped: \(message)", sourceLocation: sourceLocation)
    }

    struct MissingTool: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
