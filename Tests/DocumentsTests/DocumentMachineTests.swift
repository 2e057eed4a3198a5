import FileWatching
import Testing

@testable import Documents

/// The rules of a document, with time passed in: no waiting, no disk.
@Suite("Document rules")
struct DocumentMachineTests {
    static let delay: Int64 = 2_000_000_000
    static let opened = ContentStamp(device: 1, inode: 10, size: 5, modified: 100)
    static let saved = ContentStamp(device: 1, inode: 11, size: 7, modified: 200)
    static let theirs = ContentStamp(device: 1, inode: 12, size: 9, modified: 300)

    func machine() -> DocumentMachine { DocumentMachine(autosaveDelay: Self.delay, known: Self.opened) }

    @Test("an edit schedules an autosave after the quiet interval; a later edit moves it")
    func autosaveAfterQuiet() {
        var machine = machine()
        #expect(machine.edited(.done, now: 0) == [.scheduleAutosave(at: Self.delay)])
        #expect(machine.edited(.done, now: 500) == [.scheduleAutosave(at: 500 + Self.delay)])
        #expect(machine.changeCount == 2)
        #expect(machine.autosaveDue(now: 500 + Self.delay) == [.save])
    }

    @Test("undoing back to the saved content cancels the autosave; nothing to save, no save")
    func undoToSaved() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        #expect(machine.edited(.undone, now: 1) == [.cancelAutosave])
        #expect(!machine.hasUnsavedChanges)
        #expect(machine.autosaveDue(now: Self.delay).isEmpty)
        _ = machine.edited(.done, now: 2)
        #expect(machine.edited(.cleared, now: 3) == [.cancelAutosave])
    }

    @Test("a clean save publishes it, knows the new content, and leaves nothing unsaved")
    func cleanSave() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        machine.saveStarted()
        let actions = machine.saveEnded(.success((.clean, Self.saved)), now: 10)
        #expect(actions == [.publish(.saved(.clean))])
        #expect(machine.known == Self.saved)
        #expect(machine.state == .normal && !machine.hasUnsavedChanges)
    }

    @Test("edits made while a save runs stay unsaved and are saved next")
    func editsDuringSave() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        machine.saveStarted()
        _ = machine.edited(.done, now: 5)
        #expect(machine.autosaveDue(now: 6).isEmpty, "no second save while one runs")
        let actions = machine.saveEnded(.success((.clean, Self.saved)), now: 10)
        #expect(actions == [.publish(.saved(.clean)), .scheduleAutosave(at: 10 + Self.delay)])
        #expect(machine.changeCount == 1)
    }

    @Test("a failed save sets savingError, keeps the changes, retries; a good save clears it")
    func failedSave() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        machine.saveStarted()
        let error = DocumentsError(.diskFull, "full")
        let failed = machine.saveEnded(.failure(error), now: 10)
        #expect(
            failed == [
                .publish(.saveFailed(error)), .publish(.stateChanged(from: .normal, to: .savingError)),
                .scheduleAutosave(at: 10 + Self.delay),
            ])
        #expect(machine.hasUnsavedChanges && machine.known == Self.opened)
        #expect(machine.autosaveDue(now: 10 + Self.delay) == [.save])
        machine.saveStarted()
        let retried = machine.saveEnded(.success((.clean, Self.saved)), now: 20)
        #expect(retried == [.publish(.saved(.clean)), .publish(.stateChanged(from: .savingError, to: .normal))])
    }

    @Test("a save that met someone else's content is inConflict until resolved")
    func conflict() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        machine.saveStarted()
        let actions = machine.saveEnded(.success((.conflict(version: "v1"), Self.saved)), now: 10)
        #expect(
            actions == [
                .publish(.saved(.conflict(version: "v1"))), .publish(.stateChanged(from: .normal, to: .inConflict)),
            ])
        #expect(machine.conflictResolved() == [.publish(.stateChanged(from: .inConflict, to: .normal))])
    }

    @Test("its own save is not a change by someone else; another content is")
    func ownSaveNotEchoed() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        machine.saveStarted()
        _ = machine.saveEnded(.success((.clean, Self.saved)), now: 10)
        #expect(machine.changedOnDisk(Self.saved, path: "a.txt").isEmpty)
        #expect(machine.changedOnDisk(Self.theirs, path: "a.txt") == [.publish(.changedBySomeoneElse(path: "a.txt"))])
        #expect(machine.changedOnDisk(Self.theirs, path: "a.txt").isEmpty, "one content, reported once")
    }

    @Test("another writer or a lock disables editing: the autosave waits, then runs when they are done")
    func editingDisabled() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        #expect(
            machine.writerChanged(writing: true, now: 1) == [
                .publish(.stateChanged(from: .normal, to: .editingDisabled))
            ])
        #expect(machine.autosaveDue(now: Self.delay).isEmpty)
        _ = machine.lockChanged(heldByOther: true, now: 2)
        #expect(machine.writerChanged(writing: false, now: 3).isEmpty, "the lock still holds it")
        #expect(
            machine.lockChanged(heldByOther: false, now: 4) == [
                .publish(.stateChanged(from: .editingDisabled, to: .normal)), .scheduleAutosave(at: 4 + Self.delay),
            ])
    }

    @Test("close saves first, then closes; with nothing unsaved it closes at once")
    func closeSaves() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        #expect(machine.closeRequested() == [.cancelAutosave, .save])
        machine.saveStarted()
        let actions = machine.saveEnded(.success((.clean, Self.saved)), now: 10)
        #expect(
            actions == [
                .publish(.saved(.clean)), .publish(.stateChanged(from: .normal, to: .closed)), .cancelAutosave,
                .finishClosing,
            ])
        var idle = self.machine()
        #expect(
            idle.closeRequested() == [
                .publish(.stateChanged(from: .normal, to: .closed)), .cancelAutosave, .finishClosing,
            ])
        #expect(idle.edited(.done, now: 1).isEmpty, "a closed document takes no edits")
    }

    @Test("close does not wait on another writer: it saves (their content becomes a conflict version)")
    func closeWhileOtherWrites() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        _ = machine.writerChanged(writing: true, now: 1)
        #expect(machine.closeRequested() == [.cancelAutosave, .save])
    }

    @Test("a close whose save fails leaves the document open, with its changes")
    func closeFailedSave() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        _ = machine.closeRequested()
        machine.saveStarted()
        let actions = machine.saveEnded(.failure(DocumentsError(.diskFull, "full")), now: 10)
        #expect(!machine.state.contains(.closed) && machine.state.contains(.savingError))
        #expect(machine.hasUnsavedChanges)
        #expect(actions.contains(.scheduleAutosave(at: 10 + Self.delay)))
    }

    @Test("a close asked for during a save saves the later edits, then closes")
    func closeDuringSave() {
        var machine = machine()
        _ = machine.edited(.done, now: 0)
        machine.saveStarted()
        _ = machine.edited(.done, now: 1)
        #expect(machine.closeRequested().isEmpty)
        #expect(machine.saveEnded(.success((.clean, Self.saved)), now: 10).last == .save)
        machine.saveStarted()
        #expect(machine.saveEnded(.success((.clean, Self.theirs)), now: 20).last == .finishClosing)
        #expect(machine.state == .closed)
    }

    @Test("progress of an arriving version comes and goes")
    func progress() {
        var machine = machine()
        #expect(
            machine.progressChanged(available: true) == [.publish(.stateChanged(from: .normal, to: .progressAvailable))]
        )
        #expect(machine.progressChanged(available: true).isEmpty)
        #expect(
            machine.progressChanged(available: false) == [
                .publish(.stateChanged(from: .progressAvailable, to: .normal))
            ])
    }

    @Test("states read as Apple names them")
    func stateNames() {
        #expect(DocumentState.normal.description == "normal")
        #expect(DocumentState([.inConflict, .savingError]).description == "inConflict+savingError")
    }
}
