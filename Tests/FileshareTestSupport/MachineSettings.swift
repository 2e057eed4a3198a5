import Foundation
public import Testing

/// Shared by every test target of the package (they run in one process).

/// Tests that change a machine-wide setting (an inotify sysctl) hold this
/// exclusively; every other test that creates an observer holds it shared.
/// So a lowered limit never reaches a test that did not ask for it.
public actor MachineSettings {
    public static let lock = MachineSettings()

    /// At most this many tests hold observers at once (each is an inotify
    /// instance, and a user may have only 128).
    public static let maximumSharedHolders = 16
    private var readers = 0
    private var writer = false
    private var waiting: [(exclusive: Bool, continuation: CheckedContinuation<Void, Never>)] = []

    private func acquire(exclusive: Bool) async {
        let free =
            exclusive
            ? (!writer && readers == 0 && waiting.isEmpty)
            : (!writer && readers < MachineSettings.maximumSharedHolders && !waiting.contains { $0.exclusive })
        if free {
            if exclusive { writer = true } else { readers += 1 }
            return
        }
        await withCheckedContinuation { waiting.append((exclusive, $0)) }
    }

    private func release(exclusive: Bool) {
        if exclusive { writer = false } else { readers -= 1 }
        while let next = waiting.first {
            if next.exclusive {
                guard readers == 0 && !writer else { break }
                writer = true
            } else {
                guard !writer && readers < MachineSettings.maximumSharedHolders else { break }
                readers += 1
            }
            waiting.removeFirst()
            next.continuation.resume()
        }
    }

    /// Whether the current task holds a shared place already (a test in a
    /// suite with `.holdsObservers` that also asks itself).
    @TaskLocal static var holdsShared = false

    /// Runs `body` alongside other shared holders. Asked again inside, it
    /// takes no second place: a second one could wait behind an exclusive
    /// holder that waits for the first.
    public static func shared<T>(_ body: () async throws -> T) async rethrows -> T {
        if holdsShared { return try await body() }
        await lock.acquire(exclusive: false)
        defer { Task { await lock.release(exclusive: false) } }
        return try await $holdsShared.withValue(true) { try await body() }
    }

    /// Runs `body` alone: for a load test whose timing other tests would disturb.
    public static func alone<T>(_ body: () async throws -> T) async rethrows -> T {
        await lock.acquire(exclusive: true)
        defer { Task { await lock.release(exclusive: true) } }
        return try await body()
    }

    /// Runs `body` alone, with `setting` (a /proc/sys path) set to `value`
    /// (worked out once every other test has let go) for as long as `body`
    /// runs, and put back on every path out.
    public static func with<T>(
        _ setting: String, setTo value: @autoclosure () throws -> Int, _ body: () async throws -> T
    )
        async throws -> T
    {
        await lock.acquire(exclusive: true)
        defer { Task { await lock.release(exclusive: true) } }
        let value = try value()
        let old = try String(contentsOfFile: setting, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try "\(value)\n".write(toFile: setting, atomically: false, encoding: .utf8)
        defer { try? "\(old)\n".write(toFile: setting, atomically: false, encoding: .utf8) }
        return try await body()
    }

    /// Whether this process may change inotify settings (root, writable /proc/sys).
    public static var canChangeInotifySettings: Bool {
        FileManager.default.isWritableFile(atPath: "/proc/sys/fs/inotify/max_queued_events")
    }

    /// Returns when this process may change inotify settings. Otherwise the
    /// test is skipped, saying why, and fails under CI (`CI` set), whose
    /// runs are made as root with a writable `/proc/sys`.
    public static func requireInotifySettings(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try Requirement.require(
            canChangeInotifySettings,
            "the inotify settings in /proc/sys/fs/inotify cannot be changed here (it needs root and a writable /proc/sys)",
            sourceLocation: sourceLocation)
    }
}

/// Each test of a suite (or the one test) with this trait runs inside
/// ``MachineSettings/shared(_:)``: for tests that hold observers (inotify
/// instances and watches), so a test that lowers the machine's inotify
/// limits never runs beside them and degrades their observers to polling.
public struct HoldsObservers: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await MachineSettings.shared { try await function() }
    }
}

extension Trait where Self == HoldsObservers {
    /// Runs each test beside other observers' holders, never beside a test
    /// that changes the machine's inotify limits (``MachineSettings``).
    public static var holdsObservers: Self { HoldsObservers() }
}
