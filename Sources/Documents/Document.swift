public import FileWatching
import Logging

/// One open document: its content in memory, saved safely, autosaved, and
/// told what others do to its file — what `UIDocument` with
/// `NSFilePresenter` gives an app on Apple's systems.
///
/// A document is tracked by the observer's id of its file, so a rename or a
/// move by anyone keeps it open (``path`` follows). Edit with
/// ``update(_:change:)``; it saves on its own after a quiet interval
/// (``DocumentWorkspace/Options/autosaveDelay``), on ``close()``, and when
/// the workspace shuts down gracefully. Everything that happens arrives in
/// order on ``events``; its own saves never come back as changes by someone else.
public actor Document {
    /// The id of the file (the observer's), or `nil` before a new document's first save is seen.
    public private(set) var id: ItemID?
    /// Where the file is now, relative to the folder.
    public private(set) var path: ItemPath
    /// The content as the person has it (saved or not): bytes, or a package.
    public private(set) var content: DocumentContents
    /// The bytes as the person has them, for a bytes document (empty for a package).
    public var contents: [UInt8] {
        if case .bytes(let bytes) = content { bytes } else { [] }
    }
    /// The package as the person has it, for a package document.
    public var package: PackageContents? {
        if case .package(let package) = content { package } else { nil }
    }
    /// How far a new version's arrival has come (offset, length if known), while ``DocumentState/progressAvailable``.
    public private(set) var progress: (offset: Int64, length: Int64?)?
    /// The last save's error, while ``DocumentState/savingError``.
    public private(set) var savingError: DocumentsError?
    /// What happens to the document, in order.
    public nonisolated let events: AsyncStream<DocumentEvent>

    private let workspace: DocumentWorkspace
    private var machine: DocumentMachine
    private let continuation: AsyncStream<DocumentEvent>.Continuation
    private var autosave: Task<Void, Never>?
    private var saving: Task<SaveResult, Never>?
    /// Saves ended so far: a stamp read while one began or ended is read again
    /// (``stampBetweenSaves()``).
    private var savesEnded = 0
    /// The kept versions moving to the document's new id (``adopt(_:)``):
    /// what reads or changes them waits for it, or it would find them half moved.
    private var adopting: Task<Void, Never>?
    /// The file last seen at the path (someone else's, after an atomic save
    /// by them), to know it again when the observer reports it elsewhere.
    private var lastSeen: ContentStamp?

    typealias SaveResult = Result<(SaveOutcome, ContentStamp), DocumentsError>

    init(workspace: DocumentWorkspace, id: ItemID?, path: ItemPath, content: DocumentContents, known: ContentStamp?) {
        self.workspace = workspace
        self.id = id
        self.path = path
        self.content = content
        machine = DocumentMachine(
            autosaveDelay: Int64(workspace.options.autosaveDelay.components.seconds) * 1_000_000_000
                + workspace.options.autosaveDelay.components.attoseconds / 1_000_000_000,
            known: known)
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// The document's state (an empty set is normal).
    public var state: DocumentState { machine.state }
    /// Whether there are changes not saved yet.
    public var hasUnsavedChanges: Bool { machine.hasUnsavedChanges }

    // MARK: Editing

    /// Replaces the content and counts the change; an autosave follows after the quiet interval.
    /// - Throws: ``DocumentsError/Code/notPackage`` for a package document.
    public func update(_ contents: [UInt8], change: DocumentChange = .done) throws(DocumentsError) {
        try update(.bytes(contents), change: change)
    }

    /// Replaces the package's content and counts the change; the next save writes the whole package.
    /// - Throws: ``DocumentsError/Code/notPackage`` for a bytes document.
    public func update(_ package: PackageContents, change: DocumentChange = .done) throws(DocumentsError) {
        try update(.package(package), change: change)
    }

    /// Replaces the content (of the same kind) and counts the change.
    public func update(_ content: DocumentContents, change: DocumentChange = .done) throws(DocumentsError) {
        try requireOpen()
        guard content.isPackage == self.content.isPackage else {
            throw DocumentsError(
                .notPackage,
                "'\(path)' is a \(self.content.isPackage ? "package" : "file"); its content cannot become the other kind"
            )
        }
        self.content = content
        perform(machine.edited(change, now: now()))
    }

    /// Counts a change without new content (an edit the content already holds, an undo).
    public func updateChangeCount(_ change: DocumentChange) {
        perform(machine.edited(change, now: now()))
    }

    /// Saves now, and returns what the save did. Waits for a save under way first.
    @discardableResult
    public func save() async throws(DocumentsError) -> SaveOutcome {
        try requireOpen()
        while let running = saving { _ = await running.value }
        return try await startSave().value.map(\.0).get()
    }

    /// Reads the file again, dropping unsaved changes (after someone else changed it, say).
    public func revert() async throws(DocumentsError) {
        try requireOpen()
        while let running = saving { _ = await running.value }
        let folder = workspace.folder
        let path = self.path
        let isPackage = content.isPackage
        let (read, stamp) = try await blocking { () throws(DocumentsError) -> (DocumentContents, ContentStamp) in
            if isPackage {
                let (package, stamp) = try folder.readPackage(path)
                return (.package(package), stamp)
            }
            let (bytes, stamp) = try folder.read(path)
            return (.bytes(bytes), stamp)
        }
        content = read
        perform(machine.read(stamp))
        perform(machine.edited(.cleared, now: now()))
    }

    /// Ends a conflict: the current content stays; the conflict versions
    /// become ordinary versions (kept for as long as the keeper's retention
    /// says), except those in `discarding`, which a person chose to let go.
    public func resolveConflict(discarding: [String] = []) async throws(DocumentsError) {
        await adoptionsEnded()
        if let id {
            let keeper = workspace.folder.keeper
            try await blocking { () throws(DocumentsError) in try keeper.resolve(id, discarding: discarding) }
        }
        perform(machine.conflictResolved())
    }

    /// Saves what is unsaved and closes. A failed save leaves the document open
    /// (``DocumentState/savingError``): closing never loses changes.
    public func close() async {
        guard !machine.state.contains(.closed) else { return }
        perform(machine.closeRequested())
        // The machine saves (again, for edits made meanwhile) until it closes,
        // or a save fails.
        while let running = saving { _ = await running.value }
    }

    // MARK: What others do

    /// Another client took (or released) a lock on the file: editing waits while it holds it.
    public func lockChanged(heldByOther: Bool) {
        perform(machine.lockChanged(heldByOther: heldByOther, now: now()))
    }

    /// A new version is arriving (an upload): `offset` of `length` bytes so far; `nil` when it ended.
    public func progressChanged(offset: Int64?, length: Int64? = nil) {
        progress = offset.map { ($0, length) }
        perform(machine.progressChanged(available: offset != nil))
    }

    /// Whether an item the observer reports at `landing` (under an id the
    /// workspace does not know) is this document's file: one put at the
    /// document's path (an atomic save by someone else), or the very file
    /// (device and inode) it last read or saved, arriving elsewhere (saved,
    /// then moved before the observer could pair the two; written to by
    /// someone meanwhile or not — the content is judged after). `stamp` is
    /// what is at `landing` now.
    func claims(_ landing: ItemPath, stamp: ContentStamp?) async -> Bool {
        while let running = saving { _ = await running.value }
        if landing == path { return true }
        guard let stamp else { return false }
        // (By birth time too: the inode of a file replaced a moment ago is
        // often given to the next new file, another program's temporary one.)
        return [machine.known, lastSeen].contains { $0?.isSameFile(as: stamp) == true }
    }

    /// Whether the document is a package (a folder saved whole).
    var isPackage: Bool { content.isPackage }

    /// The document's file has a new id from now on (see ``claims(_:stamp:)``).
    /// A package gets one at every save (the observer sees a new folder
    /// take the old one's place): its kept versions follow it to the new id.
    func adopt(_ newID: ItemID) async {
        let old = id
        id = newID
        guard let old, old != newID else { return }
        let keeper = workspace.folder.keeper
        let previous = adopting
        let moving = Task {
            await previous?.value
            await runBlocking { keeper.reattach(from: old, to: newID) }
        }
        adopting = moving
        await adoptionsEnded()
    }

    /// Waits until the kept versions have followed every new id. Each
    /// adoption waits for the one before it, so the newest is all to wait
    /// for; a finished one is cleared here, by whoever waited, because
    /// awaiting a finished task does not suspend: a loop that only awaited
    /// would hold the actor and spin, and the adoption that would clear it
    /// could never run (the fresh-clone suite hung on just that).
    private func adoptionsEnded() async {
        while let moving = adopting {
            await moving.value
            if adopting == moving { adopting = nil }
        }
    }

    /// Something inside the package changed (reported by the observer under
    /// the item's own id): judge the whole tree.
    func observedInside() async {
        while let running = saving { _ = await running.value }
        await judgeContent()
    }

    /// A change the observer reported about this document's file.
    func observed(_ change: Change) async {
        // A save under way has changed the disk but not yet what the document
        // knows: judge the change once it ends, or the document's own save
        // would come back as someone else's.
        while let running = saving { _ = await running.value }
        // Changes of an identity the file had before it was taken over.
        guard change.id == id else { return }
        switch change {
        case .renamed(let from, let to, _, _), .moved(let from, let to, _, _):
            if to == path {
                // Another file was renamed onto the document's path.
                await judgeContent()
            } else {
                path = to
                continuation.yield(.moved(from: from, to: to))
            }
        case .removed(let removed, _, _):
            // A file is still at the path: another took its place (an atomic
            // save, ours or someone else's), and its own change follows.
            if await currentStamp() != nil { return }
            continuation.yield(.deleted(path: removed))
        case .added(let reported), .modified(let reported), .duplicated(let reported, _):
            // The batch can be behind the observer; what it knows of the id
            // now is what counts (a file written, then renamed onto the
            // path, is no longer being written at its old name). Gone since:
            // its removal follows.
            guard let item = workspace.observer.item(id: reported.id) else { return }
            if item.path != path {
                // The observer saw a move as a removal and an arrival (it could
                // not pair them, as while the file was being written); the id
                // says it is this document's file.
                let from = path
                path = item.path
                continuation.yield(.moved(from: from, to: item.path))
            }
            if item.isWriting {
                // The document's own save, seen before it settled (its
                // `finished` follows), is no other writer.
                if let stamp = await stampBetweenSaves(), stamp == machine.known { return }
                perform(machine.writerChanged(writing: true, now: now()))
                return
            }
            await judgeContent()
        case .finished:
            perform(machine.writerChanged(writing: false, now: now()))
            await judgeContent()
        default:
            break
        }
    }

    /// Whether what is at the path now is someone else's content.
    private func judgeContent() async {
        guard let stamp = await stampBetweenSaves() else { return }
        lastSeen = stamp
        perform(machine.changedOnDisk(stamp, path: path))
    }

    /// The workspace shuts down: save and close.
    func shutDown() async { await close() }

    // MARK: Carrying out the machine's actions

    private func perform(_ actions: [DocumentMachine.Action]) {
        for action in actions {
            switch action {
            case .save:
                if saving == nil { _ = startSave() }
            case .scheduleAutosave(let deadline):
                autosave?.cancel()
                let delay = max(0, deadline - now())
                autosave = Task {
                    try? await Task.sleep(for: .nanoseconds(delay))
                    guard !Task.isCancelled else { return }
                    self.autosaveFired()
                }
            case .cancelAutosave:
                autosave?.cancel()
                autosave = nil
            case .publish(let event):
                if case .saveFailed(let error) = event { savingError = error }
                if case .saved = event { savingError = nil }
                continuation.yield(event)
            case .finishClosing:
                workspace.forget(self)
                continuation.finish()
            }
        }
    }

    private func autosaveFired() {
        perform(machine.autosaveDue(now: now()))
    }

    private func startSave() -> Task<SaveResult, Never> {
        let task = Task { await self.performSave() }
        saving = task
        return task
    }

    /// One save, start to end; the machine hears of both.
    private func performSave() async -> SaveResult {
        machine.saveStarted()
        let content = self.content
        let path = self.path
        let id = self.id
        let known = machine.known
        let folder = workspace.folder
        let result = await blockingResult { () throws(DocumentsError) in
            switch content {
            case .bytes(let bytes): try folder.save(bytes, to: path, id: id, known: known)
            case .package(let package): try folder.savePackage(package, to: path, id: id, known: known)
            }
        }
        saving = nil
        savesEnded += 1
        if case .failure(let error) = result {
            workspace.logger.warning("saving \(path) failed: \(error)")
        }
        perform(machine.saveEnded(result, now: now()))
        return result
    }

    /// What is at the path now, read while no save of this document ran.
    /// The actor is entered again while the disk is read: a save begun then
    /// may have put its file at the path before the machine knows the file
    /// as its own, and the document's own save would come back as someone
    /// else's (CI saw it: a save's file judged between the rename and the
    /// save's end). Such a read is read again once the save has ended.
    private func stampBetweenSaves() async -> ContentStamp? {
        while true {
            while let running = saving { _ = await running.value }
            let ended = savesEnded
            let stamp = await currentStamp()
            if saving == nil && savesEnded == ended { return stamp }
        }
    }

    private func currentStamp() async -> ContentStamp? {
        let folder = workspace.folder
        let path = self.path
        return await runBlocking { folder.stamp(of: path) }
    }

    private func requireOpen() throws(DocumentsError) {
        if machine.state.contains(.closed) { throw DocumentsError(.closed, "the document '\(path)' is closed") }
    }

    private func now() -> Int64 { workspace.now() }
}
