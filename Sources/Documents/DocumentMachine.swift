import FileWatching

/// The rules of one document, with no I/O: what its state is, when it saves,
/// and what it tells its presenter. ``Document`` feeds it what happens and
/// carries out the actions it returns.
///
/// Time is passed in (nanoseconds on a monotonic clock), so the rules are
/// tested without waiting.
struct DocumentMachine: Sendable {
    /// What the owner must do next.
    enum Action: Sendable, Hashable {
        /// Save now.
        case save
        /// Wake ``autosaveDue(now:)`` at this time (replaces an earlier one).
        case scheduleAutosave(at: Int64)
        /// No autosave is due any more.
        case cancelAutosave
        /// Tell the presenter.
        case publish(DocumentEvent)
        /// Release everything: the document is closed.
        case finishClosing
    }

    /// How long a document waits after the last edit before it saves.
    let autosaveDelay: Int64

    private(set) var state: DocumentState = .normal
    /// Unsaved changes: done adds one, undone takes one away, cleared zeroes.
    private(set) var changeCount = 0
    /// The content last read or written, to tell our own writes from others'.
    private(set) var known: ContentStamp?
    /// Whether a save is under way, and the change count it started with.
    private(set) var savingCount: Int?
    /// A save was asked for while one was under way.
    private var saveAgain = false
    private var otherWriter = false
    private var lockedByOther = false
    private var closing = false
    /// Someone else's content last reported, so it is reported once.
    private var reported: ContentStamp?

    init(autosaveDelay: Int64, known: ContentStamp?) {
        self.autosaveDelay = autosaveDelay
        self.known = known
    }

    var hasUnsavedChanges: Bool { changeCount != 0 }

    // MARK: Inputs

    /// The content was read (opened or reverted): it is what the document knows.
    mutating func read(_ stamp: ContentStamp) -> [Action] {
        known = stamp
        return []
    }

    /// The person edited (or undid, or reverted).
    mutating func edited(_ change: DocumentChange, now: Int64) -> [Action] {
        guard !state.contains(.closed) else { return [] }
        switch change {
        case .done: changeCount += 1
        case .undone: changeCount -= 1
        case .cleared: changeCount = 0
        }
        return hasUnsavedChanges ? [.scheduleAutosave(at: now + autosaveDelay)] : [.cancelAutosave]
    }

    /// The quiet interval has passed (or a save was asked for): save if there
    /// is something to save and nothing stands in the way.
    mutating func autosaveDue(now: Int64) -> [Action] {
        guard !state.contains(.closed), hasUnsavedChanges || closing else { return [] }
        if savingCount != nil {
            saveAgain = true
            return []
        }
        // Someone else is writing: wait until they are done (``writerChanged``
        // schedules the save again).
        if state.contains(.editingDisabled) && !closing { return [] }
        return [.save]
    }

    /// A save begins with the current change count.
    mutating func saveStarted() {
        savingCount = changeCount
    }

    /// A save ended: `outcome` and the stamp of what is now on disk, or the error.
    mutating func saveEnded(_ result: Result<(SaveOutcome, ContentStamp), DocumentsError>, now: Int64) -> [Action] {
        let started = savingCount ?? changeCount
        savingCount = nil
        var actions: [Action] = []
        var next = state
        switch result {
        case .success(let (outcome, stamp)):
            known = stamp
            // Edits made while the save ran stay unsaved.
            changeCount -= started
            next.remove(.savingError)
            if case .conflict = outcome { next.insert(.inConflict) }
            // The file at the path is now the document's own: whoever was
            // writing the one it replaced writes into the kept version (its
            // `finished` may never be reported, as its id left with it).
            otherWriter = false
            if !lockedByOther { next.remove(.editingDisabled) }
            actions.append(.publish(.saved(outcome)))
        case .failure(let error):
            next.insert(.savingError)
            actions.append(.publish(.saveFailed(error)))
        }
        actions += transition(to: next)
        if closing {
            switch result {
            case .success:
                if !hasUnsavedChanges { return actions + close() }
                // Edits arrived while the save ran: save them too before closing.
                saveAgain = false
                return actions + [.save]
            case .failure:
                // A failed save leaves the document open with its changes:
                // nothing is lost by closing.
                closing = false
            }
        }
        if saveAgain || hasUnsavedChanges {
            saveAgain = false
            actions.append(.scheduleAutosave(at: now + autosaveDelay))
        }
        return actions
    }

    /// The file changed on disk (reported by the observer), now at `stamp`.
    /// Our own saves are recognised and not reported.
    mutating func changedOnDisk(_ stamp: ContentStamp, path: ItemPath) -> [Action] {
        // Once per content: the observer may speak of one write more than once
        // (modified, finished, a move).
        guard !state.contains(.closed), stamp != known, stamp != reported else { return [] }
        reported = stamp
        return [.publish(.changedBySomeoneElse(path: path))]
    }

    /// Another process started or stopped writing the file.
    mutating func writerChanged(writing: Bool, now: Int64) -> [Action] {
        otherWriter = writing
        return editingAllowedChanged(now: now)
    }

    /// Another client took or released a lock on the file.
    mutating func lockChanged(heldByOther: Bool, now: Int64) -> [Action] {
        lockedByOther = heldByOther
        return editingAllowedChanged(now: now)
    }

    /// A new version is arriving (`true`), or arrived or stopped.
    mutating func progressChanged(available: Bool) -> [Action] {
        var next = state
        if available { next.insert(.progressAvailable) } else { next.remove(.progressAvailable) }
        return transition(to: next)
    }

    /// The conflict was resolved.
    mutating func conflictResolved() -> [Action] {
        var next = state
        next.remove(.inConflict)
        return transition(to: next)
    }

    /// Close: save what is unsaved first. Another writer does not hold a
    /// close back: the save keeps their content as a conflict version, so
    /// closing (and shutting down) never waits on someone else, and loses nothing.
    mutating func closeRequested() -> [Action] {
        guard !state.contains(.closed) else { return [] }
        closing = true
        if savingCount != nil {
            saveAgain = true
            return []
        }
        return hasUnsavedChanges ? [.cancelAutosave, .save] : close()
    }

    // MARK: Helpers

    private mutating func close() -> [Action] {
        closing = false
        var actions = transition(to: .closed)
        actions += [.cancelAutosave, .finishClosing]
        return actions
    }

    private mutating func editingAllowedChanged(now: Int64) -> [Action] {
        var next = state
        if otherWriter || lockedByOther { next.insert(.editingDisabled) } else { next.remove(.editingDisabled) }
        var actions = transition(to: next)
        if !next.contains(.editingDisabled) && hasUnsavedChanges && savingCount == nil {
            actions.append(.scheduleAutosave(at: now + autosaveDelay))
        }
        return actions
    }

    private mutating func transition(to next: DocumentState) -> [Action] {
        guard next != state else { return [] }
        let previous = state
        state = next
        return [.publish(.stateChanged(from: previous, to: next))]
    }
}
