import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program started in a process group of its own, with its output in a
/// file: what a test starts and must be sure to end, with everything that
/// program starts in turn.
///
/// When the program exits, whatever is left of its group is killed
/// (`SIGKILL`) before the program is reaped, while its id still names the
/// group; so nothing it started outlives it.
public final class ProcessGroup: Sendable {
    /// The program's process id, which is also its group's id.
    public let pid: Int32
    /// `nil` while the program runs; then its wait status.
    private let exit = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    /// Starts `arguments[0]` (an absolute path) with the other arguments.
    /// - Parameters:
    ///   - input: A descriptor the program reads as stdin (`nil`: `/dev/null`).
    ///   - output: The file stdout and stderr are appended to.
    /// - Throws: `POSIXError` when the program cannot be started.
    public init(_ arguments: [String], input: Int32? = nil, output: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test process: another test's pipe held open
        // here would keep that test from seeing its end.
        _ = ProcessGroup.closeFrom?(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var cArguments = arguments.map { strdup($0) }
        cArguments.append(nil)
        defer { for argument in cArguments { free(argument) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, &attributes, cArguments, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        pid = child
        // A thread of its own waits for the exit: a blocking wait, never on the cooperative pool.
        Thread.detachNewThread { [self] in awaitExit() }
    }

    private func awaitExit() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        // The program is a zombie: its id still names the group.
        Glibc.kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let waiters = self.exit.withLock { exit in
            exit.status = status
            defer { exit.waiters.removeAll() }
            return exit.waiters
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    /// Whether the program has exited.
    public var hasExited: Bool { exit.withLock { $0.status != nil } }

    /// Waits for the program to exit and returns its wait status (not cut
    /// short by cancellation: what is started is always waited for).
    public func waitForExit() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = exit.withLock { exit in
                if exit.status == nil { exit.waiters.append(continuation) }
                return exit.status
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// Waits up to `timeout` for the exit; then kills the whole group and waits for that.
    @discardableResult
    public func waitForExit(timeout: Duration) async -> Int32 {
        let killer = Thread { [self] in
            var remaining = timeout
            while !hasExited && remaining > .zero {
                usleep(10_000)
                remaining -= .milliseconds(10)
            }
            if !hasExited { Glibc.kill(-pid, SIGKILL) }
        }
        killer.start()
        return await waitForExit()
    }

    /// Sends `signal` to every process of the group.
    public func signalGroup(_ signal: Int32) { Glibc.kill(-pid, signal) }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later),
    /// found at run time: the Glibc module declares it only for `_GNU_SOURCE`.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    /// Runs a program to its end (killed after `timeout`) and returns its wait status.
    public static func run(_ arguments: [String], output: String, timeout: Duration = .seconds(120)) async throws
        -> Int32
    {
        try await ProcessGroup(arguments, output: output).waitForExit(timeout: timeout)
    }
}
