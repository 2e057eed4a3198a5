import Foundation
public import Synchronization

/// Held while a process is made and started. In the child, Foundation's
/// `Process` closes the descriptors that were open when it began to launch:
/// one that another thread opens meanwhile (the pipes of another process)
/// would be inherited, and would keep that other process's output from
/// ending, and its exit from being seen, for as long as the child lives.
public let processLaunch = Mutex(())

/// A program run to its end on a thread of its own (see ``onOwnThread(_:)``):
/// its exit status and what it wrote.
///
/// Tests that wait for a helper program (python making a sample, curl,
/// unzip, openssl) with `waitUntilExit()` in an `async` function hold one of
/// the cooperative pool's threads, two on CI, for as long as the program
/// runs; two at once stall every other test of the process, and the
/// in-process servers they talk to.
public struct ProgramRun: Sendable {
    /// The exit status (for a program ended by a signal, the signal's number).
    public let status: Int32
    /// What it wrote on standard output.
    public let output: String
    /// What it wrote on standard error.
    public let errorOutput: String

    /// Runs `program` with `arguments` to its end, off the cooperative pool.
    public static func run(_ program: String, _ arguments: [String]) async throws -> ProgramRun {
        try await onOwnThread { try blocking(program, arguments) }
    }

    /// ``run(_:_:)`` for code that is on a thread of its own already.
    public static func blocking(_ program: String, _ arguments: [String]) throws -> ProgramRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        // One launch at a time (see `processLaunch`): from the pipes to the start.
        let (output, errors) = try processLaunch.withLock { _ in
            let pipes = (Pipe(), Pipe())
            process.standardOutput = pipes.0
            process.standardError = pipes.1
            try process.run()
            return pipes
        }
        // Standard error is read beside standard output: a program that
        // fills one pipe while the other is read would wait forever.
        let errorText = Mutex("")
        let errorsRead = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorText.withLock { $0 = String(decoding: data, as: UTF8.self) }
            errorsRead.signal()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        process.waitUntilExit()
        return ProgramRun(
            status: process.terminationStatus, output: String(decoding: data, as: UTF8.self),
            errorOutput: errorText.withLock { $0 })
    }
}

/// The samples `Tests/Samples/make_sample.py` writes: PNGs in their
/// variants, comics and other ZIP archives, made to measure.
public enum Samples {
    /// The script.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples/make_sample.py").path

    /// A sample could not be written.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `make_sample.py` with `arguments` (the kind, the path, its
    /// options), off the cooperative pool.
    /// - Throws: ``Failure`` with what the script wrote on standard error.
    public static func make(_ arguments: [String]) async throws {
        let run = try await ProgramRun.run("/usr/bin/env", ["python3", script] + arguments)
        guard run.status == 0 else {
            throw Failure(description: "make_sample.py \(arguments.joined(separator: " ")): \(run.errorOutput)")
        }
    }
}
