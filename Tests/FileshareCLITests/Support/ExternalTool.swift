import Foundation
import Testing

/// A program some tests drive that a machine may lack. `.ci/run` installs
/// each of them when missing, so on CI (`CI` set) a missing one fails the
/// test; elsewhere the test is skipped, saying what to install.
struct ExternalTool: Sendable, CustomStringConvertible {
    /// The executable's absolute path.
    let path: String
    /// The package that has it.
    let package: String

    static let litmus = ExternalTool(path: "/usr/bin/litmus", package: "litmus")
    static let cadaver = ExternalTool(path: "/usr/bin/cadaver", package: "cadaver")
    static let rclone = ExternalTool(path: "/usr/bin/rclone", package: "rclone")
    static let mountDavfs = ExternalTool(path: "/usr/sbin/mount.davfs", package: "davfs2")
    /// The OpenAPI fuzzer, wherever pip put it (by its long name: `st` may be another program).
    static let schemathesis = ExternalTool(
        path: onPath("schemathesis") ?? "/usr/local/bin/schemathesis", package: "schemathesis",
        registry: "PyPI package")

    /// Which registry's package it is, for the message.
    let registry: String

    init(path: String, package: String, registry: String = "Debian package") {
        self.path = path
        self.package = package
        self.registry = registry
    }

    /// The first executable `name` in the `PATH` folders.
    static func onPath(_ name: String) -> String? {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    var description: String { (path as NSString).lastPathComponent }

    var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

    /// Returns when the tool is installed. Otherwise fails the test on CI and
    /// skips it elsewhere.
    func require(sourceLocation: SourceLocation = #_sourceLocation) throws {
        if isInstalled { return }
        let message = "\(self) is missing (\(registry) \(package); .ci/run installs it)"
        if ExternalTool.isCI { throw MissingTool(message: message) }
        try Test.cancel("skipped: \(message)", sourceLocation: sourceLocation)
    }

    struct MissingTool: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
