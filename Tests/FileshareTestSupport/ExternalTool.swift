import Foundation
public import Testing

/// A program some tests drive that a machine may lack. `.ci/run` installs
/// each of them when missing, so on CI (`CI` set) a missing one fails the
/// test; elsewhere the test is skipped, saying what to install.
public struct ExternalTool: Sendable, CustomStringConvertible {
    /// The executable's absolute path.
    public let path: String
    /// The package that has it.
    public let package: String

    public static let litmus = ExternalTool(path: "/usr/bin/litmus", package: "litmus")
    public static let cadaver = ExternalTool(path: "/usr/bin/cadaver", package: "cadaver")
    public static let rclone = ExternalTool(path: "/usr/bin/rclone", package: "rclone")
    public static let mountDavfs = ExternalTool(path: "/usr/sbin/mount.davfs", package: "davfs2")
    /// Info-ZIP's zip, which makes archives as other people's tools do.
    public static let zip = ExternalTool(path: "/usr/bin/zip", package: "zip")
    public static let openssl = ExternalTool(path: "/usr/bin/openssl", package: "openssl")
    /// util-linux's setpriv, to run a command as another user.
    public static let setpriv = ExternalTool(path: "/usr/bin/setpriv", package: "util-linux")
    /// The OpenAPI fuzzer, wherever pip put it (by its long name: `st` may be another program).
    public static let schemathesis = ExternalTool(
        path: onPath("schemathesis") ?? "/usr/local/bin/schemathesis", package: "schemathesis",
        registry: "PyPI package")

    /// Which registry's package it is, for the message.
    public let registry: String

    public init(path: String, package: String, registry: String = "Debian package") {
        self.path = path
        self.package = package
        self.registry = registry
    }

    /// The first executable `name` in the `PATH` folders.
    public static func onPath(_ name: String) -> String? {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public var description: String { (path as NSString).lastPathComponent }

    public var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// Returns when the tool is installed. Otherwise fails the test on CI and
    /// skips it elsewhere (``Requirement``).
    public func require(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try Requirement.require(
            isInstalled, "\(self) is missing (\(registry) \(package); .ci/run installs it)",
            sourceLocation: sourceLocation)
    }
}
