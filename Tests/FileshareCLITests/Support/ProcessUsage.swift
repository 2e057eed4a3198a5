import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a running process has used, read from `/proc/PID`: its memory
/// (resident now, and the peak since it started or since ``resetPeak()``)
/// and its CPU time (user and system, all threads).
struct ProcessUsage {
    let pid: Int32

    /// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`).
    func statusKiB(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = text.split(whereSeparator: \.isNewline).first { $0.hasPrefix(field + ":") }
        return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// Resident memory now, in MiB.
    var residentMiB: Double? { statusKiB("VmRSS").map { Double($0) / 1024 } }

    /// The peak of resident memory, in MiB.
    var peakMiB: Double? { statusKiB("VmHWM").map { Double($0) / 1024 } }

    /// Starts the peak again from the memory in use now (Linux 4.0 and later).
    func resetPeak() throws {
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
    }

    /// User and system CPU time of all its threads, in seconds.
    var cpuSeconds: Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Waits until its CPU time stops growing (no change over `quiet`), at
    /// most `timeout`: work it does in the background (thumbnails made
    /// ahead) is over. Returns whether it went quiet.
    func waitUntilQuiet(quiet: Duration = .milliseconds(500), timeout: Duration = .seconds(120)) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        var last = cpuSeconds
        while clock.now < end {
            try? await Task.sleep(for: quiet)
            let now = cpuSeconds
            // A tick (10 ms) of housekeeping is quiet enough.
            if let now, let before = last, now - before <= 0.02 { return true }
            last = now
        }
        return false
    }
}
