import Foundation
public import Testing

/// What a test needs of the machine (a program, root, a library), checked
/// inside the test so that a test that cannot run says so by name.
///
/// `.ci/run` provides all of it, so under CI (`CI` set) a missing need fails
/// the test; elsewhere the test is skipped (cancelled, with `skipped:` and
/// the reason), which the run's summary counts as skipped, never as passed.
public enum Requirement {
    /// Whether this run is CI's (or a run by hand that asked to fail as CI does).
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

    /// Returns when `met`; otherwise fails the test under CI and skips it
    /// elsewhere, with `missing` (what is missing and how to get it) as the reason.
    public static func require(
        _ met: Bool, _ missing: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        if met { return }
        let message = missing()
        if isCI { throw Unmet(message: message) }
        try Test.cancel("skipped: \(message)", sourceLocation: sourceLocation)
    }

    /// Returns when this process runs as root (mounts, other users, sysctls).
    public static func requireRoot(
        for purpose: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try require(getuid() == 0, "\(purpose) needs root", sourceLocation: sourceLocation)
    }

    /// A need CI should have met.
    public struct Unmet: Error, CustomStringConvertible {
        public var message: String
        public var description: String { "\(message) (CI must provide it: see .ci/run)" }
    }
}
