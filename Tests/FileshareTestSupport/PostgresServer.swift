import Foundation
import Synchronization
public import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL server for one test: a data folder of its own in
/// a temporary folder, reached only through a Unix socket there, no
/// password (`trust`), the role `fileshare`, and stopped on every path out.
///
/// Start-up, measured here: `initdb` takes about 1.2 s, a copy of its
/// result 0.3 s and the server's start 0.05 s. So `initdb` runs once per
/// test process, into a template, and every server starts from a copy.
///
/// The server runs under a small shell that reads its stdin from a pipe
/// whose other end only this object holds: closing it (``stop()``, or the
/// end of the test process, even by a crash) makes the shell ask the server
/// for a fast shutdown. The shell and the server are a process group of
/// their own, killed whole when the shell ends or does not end in time.
///
/// As root, `initdb` and `postgres` refuse to run: they run as the user
/// `postgres` through util-linux's `setpriv`, and the folder is given to it.
public final class PostgresServer: Sendable {
    /// Why a server cannot be started on this machine.
    public struct Unavailable: Error, CustomStringConvertible {
        /// For a person: what is missing or what failed.
        public var reason: String
        public var description: String { reason }
    }

    /// The role to log in as (created by `initdb`, the superuser).
    public static let user = "fileshare"
    /// The database that exists from the start.
    public static let database = "postgres"

    /// The folder that holds the data, the socket and the server's log.
    public let folder: TemporaryFolder
    /// The folder of the server's socket (`.s.PGSQL.5432` in it).
    public var socketFolder: String { folder("socket") }
    /// The database URL of the server, as `fileshare serve --database` takes it.
    public var url: String { "postgresql://\(Self.user)@/\(Self.database)?host=\(socketFolder)" }
    /// What the server wrote to its log so far.
    public var log: String { (try? String(contentsOfFile: folder("server.log"), encoding: .utf8)) ?? "" }

    /// The server now (a new one after ``restart()``).
    private let running: Mutex<ProcessGroup>
    private var process: ProcessGroup { running.withLock { $0 } }
    private let programs: Programs
    /// Our end of the shell's stdin, until it is closed (once: a number
    /// closed twice may meanwhile name another test's socket).
    private let lifeline: Mutex<Int32?>

    private init(folder: TemporaryFolder, programs: Programs, process: ProcessGroup, lifeline: Int32) {
        self.folder = folder
        self.programs = programs
        self.running = Mutex(process)
        self.lifeline = Mutex(lifeline)
    }

    deinit {
        // Not stopped (a test that threw past its scope): the shell sees the
        // end of its input and shuts the server down.
        cutLifeline()
    }

    private func cutLifeline() {
        lifeline.withLock { fd in
            if let fd { close(fd) }
            fd = nil
        }
    }

    /// Starts a server and waits until it accepts connections.
    /// - Throws: ``Unavailable`` saying why, when there is no PostgreSQL
    ///   on the machine or it does not start.
    public static func start() async throws -> PostgresServer {
        try await StartLimit.databaseStarts.run { try await startNow() }
    }

    private static func startNow() async throws -> PostgresServer {
        let programs = try Programs.find()
        let template = try await Template.shared(programs).value
        let folder = try TemporaryFolder()
        try programs.account.give(folder.path)
        let data = folder("data")
        let copy = try await ProcessGroup.run(
            programs.account.prefix + ["/bin/cp", "-a", template.folder("data"), data], output: folder("copy.log"))
        guard copy == 0 else {
            throw Unavailable(reason: "cannot copy the template data folder: \(tail(of: folder("copy.log")))")
        }
        try FileManager.default.createDirectory(atPath: folder("socket"), withIntermediateDirectories: false)
        try programs.account.give(folder("socket"))
        let (process, lifeline) = try launch(programs, in: folder)
        let server = PostgresServer(folder: folder, programs: programs, process: process, lifeline: lifeline)
        do {
            try await server.waitUntilReady()
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    /// Starts `postgres` on the data folder in `folder`, under the shell
    /// that shuts it down when the returned lifeline is closed.
    private static func launch(_ programs: Programs, in folder: TemporaryFolder) throws -> (ProcessGroup, Int32) {
        let data = folder("data")
        // A socket pair rather than a pipe: made close-on-exec at once, so no
        // other program the tests start inherits our end.
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw Unavailable(reason: "cannot make a socket pair: errno \(errno)")
        }
        let script = """
            exec 3<&0
            "$@" </dev/null 3<&- &
            server=$!
            (read -r _ <&3; kill -INT "$server" 2>/dev/null) &
            watcher=$!
            wait "$server"
            status=$?
            kill "$watcher" 2>/dev/null
            exit "$status"
            """
        let command =
            programs.account.prefix + [
                "/bin/sh", "-c", script, "sh", programs.postgres, "-D", data, "-k", folder("socket"), "-c",
                "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "shared_buffers=16MB",
                "-c", "max_connections=60",
            ]
        let process: ProcessGroup
        do {
            process = try ProcessGroup(command, input: ends[0], output: folder("server.log"))
        } catch {
            close(ends[0])
            close(ends[1])
            throw Unavailable(reason: "cannot start postgres: \(error)")
        }
        close(ends[0])
        return (process, ends[1])
    }

    /// Stops the server (fast shutdown) and starts it again on the same data
    /// and socket, as an operator's restart does: clients' connections break
    /// meanwhile, and new ones are refused until it is ready again.
    public func restart() async throws {
        await stop()
        try await startAgain()
    }

    /// Starts a server that was stopped (``stop()``) again on its data and
    /// socket, and waits until it accepts connections.
    public func startAgain() async throws {
        let (process, lifeline) = try Self.launch(programs, in: folder)
        running.withLock { $0 = process }
        self.lifeline.withLock { $0 = lifeline }
        try await waitUntilReady()
    }

    /// Waits until `postmaster.pid` says `ready` (as `pg_ctl` does), the
    /// server exits, or 60 s pass.
    private func waitUntilReady() async throws {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .seconds(60))
        while clock.now < end {
            try Task.checkCancellation()
            if let text = try? String(contentsOfFile: folder("data/postmaster.pid"), encoding: .utf8) {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                if lines.count > 7 && lines[7].trimmingCharacters(in: .whitespaces) == "ready" { return }
            }
            if process.hasExited {
                throw Unavailable(reason: "postgres exited at start: \(Self.tail(of: folder("server.log")))")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Unavailable(reason: "postgres was not ready after 60 s: \(Self.tail(of: folder("server.log")))")
    }

    /// Shuts the server down (fast: open transactions are rolled back) and
    /// waits until it and everything it started have exited; killed after
    /// 10 s. Not cut short by cancellation.
    public func stop() async {
        cutLifeline()
        await process.waitForExit(timeout: .seconds(10))
    }

    /// Whether the server has exited.
    public var hasExited: Bool { process.hasExited }

    /// Kills the server at once (`SIGKILL` to the postmaster alone), as a crash would.
    public func killPostmaster() throws {
        let text = try String(contentsOfFile: folder("data/postmaster.pid"), encoding: .utf8)
        guard let pid = text.split(separator: "\n").first.flatMap({ pid_t($0) }) else {
            throw Unavailable(reason: "no process id in postmaster.pid")
        }
        kill(pid, SIGKILL)
    }

    /// The last lines of a log file, for a message.
    static func tail(of path: String) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no log)"
        return text.split(whereSeparator: \.isNewline).suffix(5).joined(separator: " | ")
    }
}

/// Starts a throwaway PostgreSQL server (``PostgresServer``), runs `body`
/// with it, and stops it on every path out (also when `body` throws or the
/// task is cancelled).
///
/// When no server can be started, the test says why: under CI (`CI` set,
/// where `.ci/run` installs PostgreSQL) it fails; elsewhere it is skipped.
public func withPostgres<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (PostgresServer) async throws -> T
) async throws -> T {
    let server: PostgresServer
    do {
        server = try await PostgresServer.start()
    } catch let unavailable as PostgresServer.Unavailable {
        let message =
            "PostgreSQL cannot be started: \(unavailable.reason) (Debian package postgresql; .ci/run installs it)"
        if ProcessInfo.processInfo.environment["CI"] != nil { throw unavailable }
        try Test.cancel("skipped: \(message)", sourceLocation: sourceLocation)
    }
    let result: Result<T, any Error>
    do {
        result = .success(try await body(server))
    } catch {
        result = .failure(error)
    }
    await server.stop()
    return try result.get()
}

extension PostgresServer {
    /// Who runs the server: this user, or `postgres` through `setpriv` when this is root.
    struct Account: Sendable {
        /// What to put before a command to run it as that user.
        var prefix: [String]
        var uid: uid_t
        var gid: gid_t

        /// Gives a folder to the user.
        func give(_ path: String) throws {
            guard chown(path, uid, gid) == 0 else {
                throw Unavailable(reason: "cannot give \(path) to the postgres user: errno \(errno)")
            }
        }
    }

    /// The programs of the newest PostgreSQL on the machine, and who runs them.
    struct Programs: Sendable {
        var initdb: String
        var postgres: String
        var account: Account

        /// Finds `initdb` and `postgres` on `PATH`, else in the newest
        /// `/usr/lib/postgresql/*/bin` (Debian keeps them there).
        static func find() throws -> Programs {
            let fileManager = FileManager.default
            var folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            let versions = ((try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
                .compactMap { name in Int(name).map { (name, $0) } }
                .sorted { $0.1 > $1.1 }
            folders += versions.map { "/usr/lib/postgresql/\($0.0)/bin" }
            guard
                let folder = folders.first(where: {
                    fileManager.isExecutableFile(atPath: $0 + "/initdb")
                        && fileManager.isExecutableFile(atPath: $0 + "/postgres")
                })
            else {
                throw Unavailable(reason: "no initdb and postgres on PATH or in /usr/lib/postgresql/*/bin")
            }
            var account = Account(prefix: [], uid: getuid(), gid: getgid())
            if geteuid() == 0 {
                guard let entry = getpwnam("postgres") else {
                    throw Unavailable(reason: "running as root, and there is no user postgres to run the server as")
                }
                guard fileManager.isExecutableFile(atPath: "/usr/bin/setpriv") else {
                    throw Unavailable(reason: "running as root, and util-linux's setpriv is missing")
                }
                account = Account(
                    prefix: ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"],
                    uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
            }
            return Programs(initdb: folder + "/initdb", postgres: folder + "/postgres", account: account)
        }
    }

    /// The data folder `initdb` made, once per test process; servers start from copies.
    final class Template: Sendable {
        let folder: TemporaryFolder

        private init(folder: TemporaryFolder) { self.folder = folder }

        private static let made = Mutex<Task<Template, any Error>?>(nil)

        /// The one template of this process (made on first use; a failure is remembered).
        static func shared(_ programs: Programs) -> Task<Template, any Error> {
            made.withLock { made in
                if let made { return made }
                let task = Task { try await make(programs) }
                made = task
                return task
            }
        }

        private static func make(_ programs: Programs) async throws -> Template {
            let folder = try TemporaryFolder(function: "postgresTemplate")
            try programs.account.give(folder.path)
            let status = try await ProcessGroup.run(
                programs.account.prefix + [
                    programs.initdb, "-A", "trust", "-U", PostgresServer.user, "-D", folder("data"), "--no-sync",
                    "-E", "UTF8", "--locale=C",
                ], output: folder("initdb.log"))
            guard status == 0 else {
                throw Unavailable(reason: "initdb failed: \(PostgresServer.tail(of: folder("initdb.log")))")
            }
            // Removed when the test process ends (a static is never released).
            Template.removeAtExit(folder.path)
            return Template(folder: folder)
        }

        private static let leftOver = Mutex<[String]>([])

        private static func removeAtExit(_ path: String) {
            leftOver.withLock { $0.append(path) }
            atexit {
                for path in Template.leftOver.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
            }
        }
    }
}
