import CFileshareShim
public import DocumentTypes
public import FileWatching
public import Logging
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Takes in the documents that arrive in a folder's Inbox, exactly once.
///
/// Each complete item (a file once the observer says it is `finished`, a
/// folder once nothing in it changed for a while) is identified, then moved
/// into the folder (or a per-type folder) under a name that clashes with
/// nothing, and handed to the handler; or, refused, moved to the quarantine
/// with a reason file beside it. A journal in the folder's private
/// `.fileshare/` records every step, flushed before or after it happens, so
/// that after a crash or `kill -9` at any instant the next start finishes the
/// work: every item ends in exactly one place, and the handler is called once
/// per document (again, told so, if it was running when the process died).
public final class InboxProcessor: Service, Sendable {
    /// The processed folder (absolute).
    public let root: String
    /// The Inbox (absolute).
    public let inboxPath: String
    /// Where refused items go (absolute).
    public let quarantinePath: String
    /// The options.
    public let options: InboxOptions
    let logger: Logger
    let handler: @Sendable (InboxDelivery) async throws -> Void
    let report: @Sendable (InboxEvent) -> Void
    let journalPath: String
    private let lockFD: Int32
    private let work = Mutex(WorkState())
    /// The observer of the whole folder this processor was given, if any (then it watches the Inbox through it).
    private let sharedObserver: FileObserver?

    struct WorkState {
        var journal: JournalState = JournalState()
        /// When each top-level Inbox item last changed (for folders' settle time).
        var lastChange: [String: ContinuousClock.Instant] = [:]
    }

    /// Prepares the Inbox (creating it, the quarantine and the private
    /// folder if missing) and takes the folder's Inbox lock: one processor
    /// per folder at a time (a second one waits for the first to end).
    ///
    /// - Parameters:
    ///   - root: The processed folder.
    ///   - options: How documents are taken in.
    ///   - logger: Where diagnostics go.
    ///   - report: Called with every event (from the processing task).
    ///   - observer: An observer of `root` that its owner starts and stops
    ///     (`fileshare serve --inbox` passes the server's): the Inbox is
    ///     watched through it. `nil` watches the Inbox with an observer of
    ///     the processor's own.
    ///   - handler: Called once per document taken in; a thrown error is reported, not retried.
    /// - Throws: ``InboxError`` when the folders cannot be made or do not fit together.
    public init(
        root: String, options: InboxOptions = InboxOptions(), logger: Logger, observer: FileObserver? = nil,
        report: @escaping @Sendable (InboxEvent) -> Void = { _ in },
        handler: @escaping @Sendable (InboxDelivery) async throws -> Void
    ) throws(InboxError) {
        guard let resolved = realpath(root, nil) else {
            throw InboxError(.badFolder, "\(root): \(String(cString: strerror(errno))); give an existing folder")
        }
        self.root = String(cString: resolved)
        free(resolved)
        if let observer, observer.root != self.root {
            throw InboxError(.badOptions, "the observer watches \(observer.root), not \(self.root)")
        }
        self.sharedObserver = observer
        self.options = options
        self.logger = logger
        self.handler = handler
        self.report = report
        guard !options.inboxName.isEmpty, !options.inboxName.contains("/"), options.inboxName != ".",
            options.inboxName != ".."
        else {
            throw InboxError(.badOptions, "the Inbox name '\(options.inboxName)' must be one folder name")
        }
        inboxPath = self.root + "/" + options.inboxName
        quarantinePath = options.quarantine.hasPrefix("/") ? options.quarantine : self.root + "/" + options.quarantine
        let privateFolder = self.root + "/.fileshare"
        for folder in [inboxPath, quarantinePath, privateFolder] {
            guard InboxProcessor.makeFolders(folder) else {
                throw InboxError(.io, "cannot create \(folder): \(String(cString: strerror(errno)))")
            }
        }
        if quarantinePath == inboxPath || quarantinePath.hasPrefix(inboxPath + "/") {
            throw InboxError(.badOptions, "the quarantine cannot be inside the Inbox: the Inbox ends empty")
        }
        var inboxInfo = stat(), quarantineInfo = stat(), rootInfo = stat()
        guard stat(inboxPath, &inboxInfo) == 0, stat(quarantinePath, &quarantineInfo) == 0,
            stat(self.root, &rootInfo) == 0
        else {
            throw InboxError(.io, "cannot read \(inboxPath): \(String(cString: strerror(errno)))")
        }
        guard inboxInfo.st_dev == quarantineInfo.st_dev, inboxInfo.st_dev == rootInfo.st_dev else {
            throw InboxError(
                .badOptions,
                "the Inbox, the quarantine and \(self.root) must be on one file system, so documents move by renaming")
        }
        journalPath = privateFolder + "/inbox-journal"
        lockFD = open(privateFolder + "/inbox.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if lockFD < 0 {
            throw InboxError(
                .io, "cannot create the Inbox lock in \(privateFolder): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(lockFD) }

    // MARK: Running

    /// Recovers what a previous process left, takes in what the Inbox holds,
    /// then keeps watching until a graceful shutdown (or cancellation).
    public func run() async throws {
        try await run(once: false)
    }

    /// Recovers, then takes in what the Inbox holds now (waiting for files
    /// still being written), then returns.
    public func processOnce() async throws {
        try await run(once: true)
    }

    private func run(once: Bool) async throws {
        try await acquireLock()
        defer { flock(lockFD, LOCK_UN) }
        let journal = try InboxJournal(path: journalPath)
        defer { journal.close() }
        try await recover(journal)
        let observer: FileObserver
        /// The Inbox among the observer's paths.
        let inbox: ItemPath
        if let sharedObserver {
            observer = sharedObserver
            inbox = ItemPath(options.inboxName)
        } else {
            // Initial items reported: a file changed within the settle time is
            // then "writing" until the observer finishes it.
            var observerOptions = ObserverOptions(settleTime: options.settleTime, latency: .milliseconds(20))
            observerOptions.reportsInitialItems = true
            do {
                observer = try FileObserver(root: inboxPath, options: observerOptions, logger: logger)
            } catch {
                throw InboxError(.io, error.message)
            }
            inbox = .root
        }
        let (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = observer.observe { [weak self] batch in
            let now = ContinuousClock.now
            var touched = false
            self?.work.withLock { state in
                for change in batch {
                    for path in change.itemPaths {
                        guard let name = InboxProcessor.topName(of: path, in: inbox) else { continue }
                        state.lastChange[name] = now
                        touched = true
                    }
                }
            }
            // The whole folder's observer reports more than the Inbox: only what
            // touches it (or the scan's own events) wakes the loop.
            if touched || inbox.isRoot || batch.contains(where: { $0.itemPaths.isEmpty }) {
                wake.yield()
            }
        }
        defer {
            token.cancel()
            if sharedObserver == nil { observer.stop() }
        }
        if sharedObserver == nil {
            do {
                try observer.start()
            } catch {
                throw InboxError(.io, error.message)
            }
        }
        await observer.sync()
        let started = ContinuousClock.now
        work.withLock { state in
            for item in observer.children(of: inbox) ?? [] where state.lastChange[item.name] == nil {
                state.lastChange[item.name] = started
            }
        }
        try await withGracefulShutdownHandler {
            // Folders wait out their settle time: a timer wakes the loop while any waits.
            while !Task.isCancelled {
                let waiting = try await takeIn(observer: observer, inbox: inbox, journal: journal)
                if once && !waiting { return }
                if waiting {
                    try? await Task.sleep(for: .milliseconds(200))
                } else {
                    var iterator = wakeups.makeAsyncIterator()
                    guard await iterator.next() != nil else { return }
                }
            }
        } onGracefulShutdown: {
            wake.finish()
        }
    }

    /// The lock on the folder's Inbox: waits while another process holds it.
    private func acquireLock() async throws {
        var warned = false
        let started = ContinuousClock.now
        while flock(lockFD, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw InboxError(.io, "cannot lock the Inbox: \(String(cString: strerror(errno)))")
            }
            if !warned && ContinuousClock.now - started > .seconds(2) {
                logger.warning(
                    "another process is taking in this Inbox; waiting for it to end",
                    metadata: ["inbox": "\(inboxPath)"])
                warned = true
            }
            try await Task.sleep(for: .milliseconds(25))
        }
    }

    /// The name of the Inbox item `path` is (or is in), for an observer
    /// whose paths put the Inbox at `inbox`; `nil` outside the Inbox.
    static func topName(of path: ItemPath, in inbox: ItemPath) -> String? {
        let components = path.components
        let depth = inbox.components.count
        guard components.count > depth, path.isSame(asOrUnder: inbox) else { return nil }
        return String(decoding: components[depth], as: UTF8.self)
    }

    /// Takes in every complete item now in the Inbox; returns whether some
    /// item is still waiting (being written, or a folder settling).
    private func takeIn(observer: FileObserver, inbox: ItemPath, journal: InboxJournal) async throws -> Bool {
        var waiting = false
        for item in observer.children(of: inbox) ?? [] {
            if Task.isCancelled { break }
            let name = item.name
            switch item.kind {
            case .file:
                if item.isWriting {
                    waiting = true
                    continue
                }
                if try await !takeIn(source: options.inboxName + "/" + name, name: name, journal: journal) {
                    waiting = true
                }
            case .directory:
                let lastChange = work.withLock { $0.lastChange[name] } ?? .now
                if ContinuousClock.now - lastChange < options.folderSettleTime
                    || InboxProcessor.isWriting(under: item.path, in: observer)
                {
                    waiting = true
                    continue
                }
                if try await !takeIn(folder: name, journal: journal) { waiting = true }
            case .symlink, .other:
                _ = try await takeIn(source: options.inboxName + "/" + name, name: name, journal: journal)
            }
        }
        return waiting
    }

    static func isWriting(under path: ItemPath, in observer: FileObserver) -> Bool {
        for child in observer.children(of: path) ?? [] {
            if child.isWriting { return true }
            if child.kind == .directory && isWriting(under: child.path, in: observer) { return true }
        }
        return false
    }

    // MARK: Deciding

    /// Decides on one file (or link, or special file) and takes it in;
    /// returns false when a process still has it open for writing.
    private func takeIn(source: String, name: String, journal: InboxJournal) async throws -> Bool {
        let absolute = root + "/" + source
        let options = self.options
        /// The type (`nil` when refused), the name it is taken in under, the reason for a refusal.
        enum Verdict { case gone, written, decided(stat, DocumentType?, String, String) }
        let verdict: Verdict = await offload {
            var info = stat()
            guard lstat(absolute, &info) == 0 else { return .gone }
            // The observer's word is checked with the kernel: a writer that
            // paused (or was there before the observer started) still holds it.
            if info.st_mode & S_IFMT == S_IFREG && InboxProcessor.hasWriter(absolute) { return .written }
            if info.st_mode & S_IFMT != S_IFREG {
                return .decided(info, nil, name, "'\(name)' is a symbolic link or a special file, not a document")
            }
            do {
                let decision = try options.acceptedTypes.check(
                    fileAt: absolute, name: name, misleadingNames: options.misleadingNames)
                switch decision {
                case .accepted(let identification): return .decided(info, identification.type, name, "")
                case .corrected(let identification, let corrected):
                    return .decided(info, identification.type, corrected, "")
                case .refused(let refusal): return .decided(info, nil, name, refusal.reason)
                }
            } catch {
                return .decided(info, nil, name, "'\(name)' cannot be read: \(error)")
            }
        }
        switch verdict {
        case .gone: return true
        case .written: return false
        case .decided(let info, let type, let finalName, let reason):
            try await claim(
                source: source, name: finalName, info: info, isFolder: false, type: type?.identifier.rawValue,
                typeName: type?.name,
                reason: reason, journal: journal)
            return true
        }
    }

    /// Whether a process has the file open for writing (asked with a read
    /// lease; where leases cannot answer, the observer's word stands).
    static func hasWriter(_ path: String) -> Bool {
        cfs_has_no_writers_at(AT_FDCWD, path) == 0
    }

    /// Decides on a folder: one package, or each file on its own; returns
    /// false when a file in it is still open for writing.
    private func takeIn(folder name: String, journal: InboxJournal) async throws -> Bool {
        let source = options.inboxName + "/" + name
        let absolute = root + "/" + source
        let options = self.options
        if options.folderHandling == .unpack {
            let files = await offload { InboxProcessor.files(under: absolute) }
            var complete = true
            for relative in files {
                let taken = try await takeIn(
                    source: source + "/" + relative, name: String(relative.split(separator: "/").last ?? ""),
                    journal: journal)
                complete = complete && taken
            }
            guard complete else { return false }
            await offload { InboxProcessor.removeEmptyFolders(absolute) }
            // What unpacking leaves (hidden files: the observer does not report
            // them) goes to the quarantine, so the Inbox ends empty.
            var info = stat()
            if lstat(absolute, &info) == 0 {
                try await claim(
                    source: source, name: name, info: info, isFolder: true, type: nil, typeName: nil,
                    reason: "what was left of '\(name)' after its documents were taken in (hidden files)",
                    journal: journal)
            }
            return true
        }
        enum Verdict { case gone, written, decided(stat, String) }
        let verdict: Verdict = await offload {
            var info = stat()
            guard lstat(absolute, &info) == 0 else { return .gone }
            var refused: [String] = []
            var corrections: [(relative: String, name: String)] = []
            for relative in InboxProcessor.files(under: absolute) {
                let path = absolute + "/" + relative
                var fileInfo = stat()
                guard lstat(path, &fileInfo) == 0 else { continue }
                if fileInfo.st_mode & S_IFMT == S_IFREG && InboxProcessor.hasWriter(path) { return .written }
                if fileInfo.st_mode & S_IFMT != S_IFREG {
                    refused.append("'\(relative)' is a symbolic link or a special file")
                    continue
                }
                let fileName = String(relative.split(separator: "/").last ?? "")
                do {
                    let decision = try options.acceptedTypes.check(
                        fileAt: path, name: fileName, misleadingNames: options.misleadingNames)
                    switch decision {
                    case .accepted: break
                    case .corrected(_, let corrected): corrections.append((relative, corrected))
                    case .refused(let refusal): refused.append("'\(relative)': \(refusal.reason)")
                    }
                } catch {
                    refused.append("'\(relative)' cannot be read: \(error)")
                }
            }
            // A package is moved whole: its lying names are corrected where
            // they are, each by one rename that takes no name (a crash leaves
            // either name, and the next pass decides again). Not in a package
            // that is refused anyway: it goes to the quarantine as it came.
            if refused.isEmpty {
                for (relative, corrected) in corrections {
                    let inner = relative.split(separator: "/").dropLast()
                    let folder = inner.isEmpty ? absolute : absolute + "/" + inner.joined(separator: "/")
                    let free = UniqueName.make(for: corrected) { candidate in
                        var existing = stat()
                        return lstat(folder + "/" + candidate, &existing) == 0
                    }
                    let result = InboxProcessor.move(absolute + "/" + relative, to: folder + "/" + free)
                    if result != 0 {
                        refused.append(
                            "'\(relative)' could not be renamed '\(free)': \(String(cString: strerror(-result)))")
                    }
                }
            }
            let reason =
                refused.isEmpty
                ? "" : "\(refused.count) of its files cannot be taken in: " + refused.prefix(5).joined(separator: "; ")
            return .decided(info, reason)
        }
        switch verdict {
        case .gone: return true
        case .written: return false
        case .decided(let info, let reason):
            try await claim(
                source: source, name: name, info: info, isFolder: true, type: reason.isEmpty ? "public.folder" : nil,
                typeName: nil,
                reason: reason, journal: journal)
            return true
        }
    }

    /// Plans where an item goes, records the plan, then carries it out.
    private func claim(
        source: String, name: String, info: stat, isFolder: Bool, type: String?, typeName: String?, reason: String,
        journal: InboxJournal
    ) async throws {
        let folder = destinationFolder(accepted: type != nil, typeName: isFolder ? nil : typeName)
        let destination = await offload { self.freeName(for: name, in: folder, refused: type == nil) }
        let sequence = work.withLock { $0.journal.lastSequence + 1 }
        let claim = InboxClaim(
            source: source, destination: destination, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
            isFolder: isFolder,
            typeIdentifier: type, reason: reason)
        try record(JournalRecord(sequence: sequence, step: .claim(claim)), in: journal)
        try await carryOut(sequence: sequence, claim: claim, journal: journal, moved: false, handling: false)
    }

    /// The folder (relative to the root, or absolute for the quarantine) an item goes to.
    private func destinationFolder(accepted: Bool, typeName: String?) -> String {
        guard accepted else { return quarantinePath }
        guard options.foldersPerType, let typeName else { return root }
        let safe = typeName.replacingSlashes()
        return root + "/" + (safe.isEmpty || safe.hasPrefix(".") ? "Documents" : safe)
    }

    /// A name free in `folder` (for a refused item, its reason file's name must be free too).
    private func freeName(for name: String, in folder: String, refused: Bool) -> String {
        _ = InboxProcessor.makeFolders(folder)
        let chosen = UniqueName.make(for: name) { candidate in
            var info = stat()
            if lstat(folder + "/" + candidate, &info) == 0 { return true }
            return refused && lstat(folder + "/" + candidate + ".reason.txt", &info) == 0
        }
        return InboxProcessor.relative(folder + "/" + chosen, to: root)
    }

    // MARK: Carrying out

    func record(_ record: JournalRecord, in journal: InboxJournal) throws(InboxError) {
        try journal.append(record)
        work.withLock { $0.journal.apply(record) }
    }

    /// Moves, reports, hands over: each step recorded; the steps already
    /// done (`moved`, `handling`) are skipped, as recovery asks.
    func carryOut(sequence: UInt64, claim initial: InboxClaim, journal: InboxJournal, moved: Bool, handling: Bool)
        async throws
    {
        var claim = initial
        if !moved {
            while true {
                let source = root + "/" + claim.source
                let destination = absolute(claim.destination)
                if !claim.isAccepted {
                    let reasonFile = destination + ".reason.txt"
                    let text = "\(claim.reason)\nIt was \(claim.source), refused on \(InboxProcessor.now()).\n"
                    await offload { self.writeAtomically(text, to: reasonFile) }
                }
                let result = await offload { InboxProcessor.move(source, to: destination) }
                if result == 0 { break }
                if result == -EEXIST {
                    // The name was taken meanwhile: another one, recorded before the next try.
                    let folder = String(destination[..<destination.lastIndex(of: "/")!])
                    let name = String(destination[destination.index(after: destination.lastIndex(of: "/")!)...])
                    if !claim.isAccepted { _ = unlink(destination + ".reason.txt") }
                    let refused = !claim.isAccepted
                    claim.destination = await offload { self.freeName(for: name, in: folder, refused: refused) }
                    try record(JournalRecord(sequence: sequence, step: .claim(claim)), in: journal)
                    continue
                }
                if result == -ENOENT {
                    report(.error(message: "\(claim.source) left the Inbox before it was taken in", path: claim.source))
                    if !claim.isAccepted { _ = unlink(destination + ".reason.txt") }
                    try record(JournalRecord(sequence: sequence, step: .done), in: journal)
                    return
                }
                throw InboxError(
                    .io, "cannot move \(claim.source) to \(claim.destination): \(String(cString: strerror(-result)))")
            }
            try record(JournalRecord(sequence: sequence, step: .moved), in: journal)
        }
        guard claim.isAccepted, let type = claim.typeIdentifier else {
            report(.refused(from: claim.source, path: claim.destination, reason: claim.reason))
            try record(JournalRecord(sequence: sequence, step: .done), in: journal)
            try compactIfIdle(journal)
            return
        }
        if !handling {
            report(.takenIn(from: claim.source, path: claim.destination, type: type))
            try record(JournalRecord(sequence: sequence, step: .handling), in: journal)
        }
        let delivery = InboxDelivery(
            path: absolute(claim.destination), relativePath: claim.destination, source: claim.source,
            typeIdentifier: type,
            isRepeat: handling)
        do {
            try await handler(delivery)
            report(.handled(path: claim.destination, isRepeat: handling))
        } catch {
            report(.error(message: "the handler failed for \(claim.destination): \(error)", path: claim.destination))
        }
        try record(JournalRecord(sequence: sequence, step: .done), in: journal)
        try compactIfIdle(journal)
    }

    /// Empties the journal when nothing is pending.
    private func compactIfIdle(_ journal: InboxJournal) throws {
        let idle = work.withLock { $0.journal.pending.isEmpty }
        if idle {
            try journal.truncate()
            work.withLock { $0.journal = JournalState() }
        }
    }

    /// Finishes what the journal says was begun.
    private func recover(_ journal: InboxJournal) async throws {
        // Reason files a killed process was writing.
        for name in InboxProcessor.names(in: root + "/.fileshare") where name.hasPrefix("inbox-tmp-") {
            _ = unlink(root + "/.fileshare/" + name)
        }
        let state = JournalState(InboxJournal.load(path: journalPath))
        work.withLock { $0.journal = state }
        for (sequence, entry) in state.pending {
            var moved = entry.moved
            if !moved {
                let claim = entry.claim
                let where_ = await offload { () -> Int in
                    var info = stat()
                    if lstat(self.root + "/" + claim.source, &info) == 0 && UInt64(info.st_ino) == claim.inode
                        && UInt64(info.st_dev) == claim.device
                    {
                        return 0  // not moved yet
                    }
                    if lstat(self.absolute(claim.destination), &info) == 0 && UInt64(info.st_ino) == claim.inode
                        && UInt64(info.st_dev) == claim.device
                    {
                        return 1  // moved; the record was lost with the process
                    }
                    return 2
                }
                if where_ == 2 {
                    report(.error(message: "\(claim.source) left the Inbox before it was taken in", path: claim.source))
                    try record(JournalRecord(sequence: sequence, step: .done), in: journal)
                    continue
                }
                if where_ == 1 {
                    try record(JournalRecord(sequence: sequence, step: .moved), in: journal)
                    moved = true
                }
            }
            try await carryOut(
                sequence: sequence, claim: entry.claim, journal: journal, moved: moved, handling: entry.handling)
        }
        try compactIfIdle(journal)
    }

    // MARK: The disk

    func absolute(_ relative: String) -> String { relative.hasPrefix("/") ? relative : root + "/" + relative }

    static func relative(_ path: String, to root: String) -> String {
        path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
    }

    /// rename with RENAME_NOREPLACE, then both folders flushed; 0 or -errno.
    static func move(_ source: String, to destination: String) -> Int32 {
        let result = cfs_renameat2(AT_FDCWD, source, AT_FDCWD, destination, UInt32(CFS_RENAME_NOREPLACE))
        if result < 0 { return result }
        for folder in [source, destination].map({ String($0[..<$0.lastIndex(of: "/")!]) }) {
            let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 {
                _ = fsync(fd)
                close(fd)
            }
        }
        return 0
    }

    /// Writes a small file by a flushed temporary file (in the private
    /// folder, where one a kill leaves behind is removed at the next start)
    /// and a rename.
    func writeAtomically(_ text: String, to path: String) {
        try? AtomicFile.write(Array(text.utf8), to: path, temporary: root + "/.fileshare/inbox-tmp-\(getpid())")
    }

    /// The regular files, links and special files under a folder (relative paths).
    static func files(under folder: String, prefix: String = "") -> [String] {
        var result: [String] = []
        for name in names(in: folder) where !name.hasPrefix(".") {
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                result += files(under: folder + "/" + name, prefix: prefix + name + "/")
            } else {
                result.append(prefix + name)
            }
        }
        return result.sorted()
    }

    /// Removes the folders left empty under (and including) `folder`.
    static func removeEmptyFolders(_ folder: String) {
        for child in names(in: folder) {
            var info = stat()
            if lstat(folder + "/" + child, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
                removeEmptyFolders(folder + "/" + child)
            }
        }
        _ = rmdir(folder)
    }

    /// The names in a folder (`.` and `..` left out; none when it cannot be read).
    static func names(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func makeFolders(_ path: String) -> Bool {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST { return false }
        }
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs blocking work (renames, flushes, reading files) off the cooperative threads.
    func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await runBlocking(work)
    }
}

extension String {
    func replacingSlashes() -> String {
        String(map { $0 == "/" ? "-" : $0 })
    }
}
