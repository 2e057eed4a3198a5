import FileshareTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The built `fileshare` binary (or another program), run with its output
/// collected line by line.
final class CommandProcess: Sendable {
    /// What the process reads on stdin.
    enum Input: Sendable {
        /// The test process's own stdin.
        case inherited
        /// This text, then the end of the input.
        case text(String)
        /// A stream the test writes to with `writeInput(_:)` and ends with `closeInput()`.
        case pipe
    }

    private let process: Process

    /// The process's id.
    var processIdentifier: Int32 { process.processIdentifier }

    /// What the process wrote: stdout as lines, stderr as text.
    private final class Output: Sendable {
        let stdout = Mutex<(lines: [String], partial: String)>(([], ""))
        let stderr = Mutex<String>("")
        /// The read ends of the two pipes, until each reached its end.
        let readers = Mutex<(stdout: FileHandle?, stderr: FileHandle?)>((nil, nil))

        func take(_ data: Data, fromStdout: Bool) {
            if fromStdout {
                stdout.withLock { state in
                    state.partial += String(decoding: data, as: UTF8.self)
                    while let newline = state.partial.firstIndex(of: "\n") {
                        state.lines.append(String(state.partial[..<newline]))
                        state.partial.removeSubrange(...newline)
                    }
                    if data.isEmpty && !state.partial.isEmpty {
                        state.lines.append(state.partial)
                        state.partial = ""
                    }
                }
            } else {
                stderr.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            if data.isEmpty {
                readers.withLock { if fromStdout { $0.stdout = nil } else { $0.stderr = nil } }
            }
        }

        /// Set to make the readers take what is in their pipe now and stop.
        let stopping = Atomic<Bool>(false)

        /// Reads `handle` on a thread of its own, until the pipe's end (or
        /// until ``stop()``, for a pipe a daemon the process started still holds).
        ///
        /// A plain loop of `poll` and `read`, not `FileHandle.readabilityHandler`:
        /// on Linux, tearing that handler's dispatch source down races
        /// libdispatch's epoll bookkeeping and can crash the whole test
        /// process in `_dispatch_event_loop_drain` (swift-corelibs-libdispatch
        /// issue 949; it crashed the suite once, in CI).
        func read(_ handle: FileHandle, fromStdout: Bool) {
            readers.withLock { if fromStdout { $0.stdout = handle } else { $0.stderr = handle } }
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 65536)
                var ready = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
                // Reads once told to stop: what is there then, not what a daemon writes on and on.
                var readsLeft = 64
                while true {
                    let stop = stopping.load(ordering: .acquiring)
                    if stop {
                        readsLeft -= 1
                        if readsLeft < 0 { break }
                    }
                    // Only what poll says is there (or the end): a read never waits.
                    let polled = poll(&ready, 1, stop ? 0 : 50)
                    if polled < 0 && errno == EINTR { continue }
                    guard polled > 0 else {
                        if stop || polled < 0 { break }
                        continue
                    }
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(ready.fd, $0.baseAddress, $0.count) }
                    if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    guard count > 0 else { break }
                    take(Data(buffer[..<count]), fromStdout: fromStdout)
                }
                take(Data(), fromStdout: fromStdout)
                // The handle closes its descriptor when it goes, after the last read.
                _ = handle
            }
        }

        var reachedEnds: Bool { readers.withLock { $0.stdout == nil && $0.stderr == nil } }

        /// Has the readers take what is left in the pipes without waiting
        /// for their ends, and waits for them to finish.
        func stop() async {
            stopping.store(true, ordering: .releasing)
            while !reachedEnds { try? await Task.sleep(for: .milliseconds(1)) }
        }
    }

    private let output = Output()
    /// Our end of the socket the process reads as stdin (`nil` once closed).
    private let input = Mutex<Int32?>(nil)

    static var binary: String {
        // The test bundle sits beside the products of the build.
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        while !directory.path.isEmpty && directory.path != "/" {
            let candidate = directory.appendingPathComponent("fileshare").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return ".build/debug/fileshare"
    }

    init(
        _ arguments: [String], in directory: String? = nil, executable: String = CommandProcess.binary,
        environment: [String: String] = [:], input: Input = .inherited
    ) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        // One launch at a time (see `processLaunch`): from the pipes to the start.
        try processLaunch.withLock { _ in try start(input: input) }
        if case .text(let text) = input {
            // On its own thread: a long text may fill the socket before the process reads it.
            Thread.detachNewThread { [self] in
                writeInput(text)
                closeInput()
            }
        }
    }

    deinit {
        if process.isRunning { process.terminate() }
        closeInput()
        // A reader whose pipe a daemon still holds would otherwise poll on.
        output.stopping.store(true, ordering: .releasing)
    }

    /// Makes the pipes, connects the output readers and starts the process.
    private func start(input: Input) throws {
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        var childInput: Int32? = nil
        if case .inherited = input {
        } else {
            // A socket rather than a pipe: written with MSG_NOSIGNAL, a process
            // that exits before reading everything cannot kill the tests with SIGPIPE.
            var ends: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            process.standardInput = FileHandle(fileDescriptor: ends[0], closeOnDealloc: false)
            childInput = ends[0]
            self.input.withLock { $0 = ends[1] }
        }
        output.read(stdout.fileHandleForReading, fromStdout: true)
        output.read(stderr.fileHandleForReading, fromStdout: false)
        defer { if let childInput { close(childInput) } }
        do {
            try process.run()
        } catch {
            closeInput()
            throw error
        }
    }

    var lines: [String] { output.stdout.withLock { $0.lines } }
    var errorOutput: String { output.stderr.withLock { $0 } }
    var isRunning: Bool { process.isRunning }

    /// Writes to the process's stdin (made with `input: .pipe`); what the
    /// process can no longer read is dropped.
    func writeInput(_ text: String) {
        input.withLock { descriptor in
            guard let descriptor else { return }
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let sent = bytes.withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return }
                bytes = bytes.dropFirst(sent)
            }
        }
    }

    /// Ends the process's stdin (made with `input: .pipe`).
    func closeInput() {
        input.withLock { descriptor in
            if let descriptor { close(descriptor) }
            descriptor = nil
        }
    }

    /// Waits (up to a generous timeout: a loaded machine may take long to
    /// start a debug build) for a line that matches; returns early when the
    /// process has ended.
    func waitForLine(timeout: Duration = .seconds(60), _ matches: (String) -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while clock.now < end {
            if lines.contains(where: matches) { return true }
            if !process.isRunning && lines.contains(where: matches) == false {
                try? await Task.sleep(for: .milliseconds(50))
                return lines.contains(where: matches)
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the process to exit (killing it after a generous timeout).
    func exitStatus(timeout: Duration = .seconds(20)) async -> Int32 {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: timeout)
        while process.isRunning && clock.now < end { try? await Task.sleep(for: .milliseconds(10)) }
        if process.isRunning {
            process.terminate()
            return -1
        }
        // Let the readers take the last output, up to the end of both pipes;
        // then take what is left (a daemon the process started may hold them).
        let drained = clock.now.advanced(by: .milliseconds(500))
        while !output.reachedEnds && clock.now < drained { try? await Task.sleep(for: .milliseconds(5)) }
        if !output.reachedEnds { await output.stop() }
        return process.terminationStatus
    }
}

/// Waits (polling, up to `timeout`) until `condition` holds; returns whether it did.
func waitFor(timeout: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: timeout)
    while clock.now < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}
