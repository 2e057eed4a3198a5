import FileshareTestSupport
import Testing

@testable import FileSharing

/// The roles of a server among several on one folder, with time given: no
/// database, no observer.
@Suite("leadership roles", .timeLimit(.minutes(5)))
struct LeadershipMachineTests {
    typealias Machine = LeadershipMachine
    let start = ContinuousClock.now

    @Test("a follower that gains the lock takes over, then leads; the takeover's time is kept")
    func takeover() {
        var machine = Machine(now: start)
        #expect(machine.role == .follower && !machine.isLeader && !machine.settled)
        #expect(machine.handle(.lockGained, at: start + .seconds(1)) == [.takeOver])
        #expect(machine.role == .takingOver && !machine.isLeader)
        // Gaining it again (a report repeated) asks for nothing more.
        #expect(machine.handle(.lockGained, at: start + .seconds(1)).isEmpty)
        #expect(machine.handle(.takeoverFinished, at: start + .milliseconds(1_750)).isEmpty)
        #expect(machine.role == .leader && machine.isLeader && machine.settled)
        #expect(machine.lastTakeover == .milliseconds(750))
        #expect(machine.takeovers == 1)
        #expect(machine.roleSince == start + .milliseconds(1_750))
    }

    @Test("a leader that loses the lock steps down at once, and takes over again when it gains it")
    func lockLost() {
        var machine = Machine(now: start)
        _ = machine.handle(.lockGained, at: start)
        _ = machine.handle(.takeoverFinished, at: start + .seconds(1))
        #expect(machine.handle(.lockLost, at: start + .seconds(5)) == [.stepDown])
        #expect(machine.role == .follower && machine.roleSince == start + .seconds(5))
        // A follower losing what it does not hold does nothing.
        #expect(machine.handle(.lockLost, at: start + .seconds(6)).isEmpty)
        #expect(machine.handle(.lockGained, at: start + .seconds(7)) == [.takeOver])
        #expect(machine.handle(.takeoverFinished, at: start + .seconds(9)).isEmpty)
        #expect(machine.takeovers == 2 && machine.lastTakeover == .seconds(2))
    }

    @Test("the lock lost while the takeover runs: the finished takeover is undone")
    func lostDuringTakeover() {
        var machine = Machine(now: start)
        _ = machine.handle(.lockGained, at: start)
        #expect(machine.handle(.lockLost, at: start + .seconds(1)) == [.stepDown])
        #expect(machine.handle(.takeoverFinished, at: start + .seconds(2)) == [.stepDown])
        #expect(machine.role == .follower && machine.takeovers == 0)
    }

    @Test("a server that finds the lock held elsewhere knows its role: it follows")
    func heldElsewhere() {
        var machine = Machine(now: start)
        #expect(machine.handle(.lockHeldElsewhere, at: start).isEmpty)
        #expect(machine.settled && machine.role == .follower)
    }

    @Test("a failed takeover undoes itself and lets go of the lock, so it is tried again")
    func takeoverFailed() {
        var machine = Machine(now: start)
        _ = machine.handle(.lockGained, at: start)
        #expect(machine.handle(.takeoverFailed, at: start + .seconds(1)) == [.stepDown, .releaseLock])
        #expect(machine.role == .follower && machine.lastTakeover == nil)
        #expect(machine.handle(.lockGained, at: start + .seconds(3)) == [.takeOver])
    }

    @Test("the database gone: a leader stops writing and lets go; a follower only notes it", arguments: [true, false])
    func databaseDown(leading: Bool) {
        var machine = Machine(now: start)
        if leading {
            _ = machine.handle(.lockGained, at: start)
            _ = machine.handle(.takeoverFinished, at: start)
        }
        let actions = machine.handle(.databaseDown, at: start + .seconds(1))
        #expect(actions == (leading ? [.stepDown, .releaseLock] : []))
        #expect(machine.role == .follower && !machine.databaseReachable)
        // Finding the lock held by another, or gaining it, means the database answers.
        #expect(machine.handle(.lockHeldElsewhere, at: start + .seconds(2)).isEmpty)
        #expect(machine.databaseReachable && machine.role == .follower)
        #expect(machine.handle(.lockGained, at: start + .seconds(3)) == [.takeOver])
    }

    @Test("seeded random events, run as the driver runs them: never leading without the lock")
    func randomEvents() {
        var generator = SeededRandom(seed: 15)
        // What the lock can report: to its holder, or to a server without it.
        let holding: [Machine.Event] = [.lockLost, .databaseDown]
        let waiting: [Machine.Event] = [.lockGained, .lockHeldElsewhere, .databaseDown]
        for _ in 0..<200 {
            var machine = Machine(now: start)
            var holdsLock = false
            var now = start
            for _ in 0..<50 {
                now += .milliseconds(Int(generator.next() % 1000))
                let events = holdsLock ? holding : waiting
                let event = events[Int(generator.next() % UInt64(events.count))]
                switch event {
                case .lockGained: holdsLock = true
                case .lockLost, .lockHeldElsewhere: holdsLock = false
                default: break
                }
                // The driver does each action before it takes the next event;
                // a takeover's end is the next thing the machine hears.
                var actions = machine.handle(event, at: now)
                while !actions.isEmpty {
                    switch actions.removeFirst() {
                    case .takeOver:
                        #expect(holdsLock && machine.role == .takingOver)
                        let result: Machine.Event = generator.next() % 4 == 0 ? .takeoverFailed : .takeoverFinished
                        actions += machine.handle(result, at: now)
                    case .releaseLock: holdsLock = false
                    case .stepDown: #expect(!machine.isLeader)
                    }
                }
                #expect(!machine.isLeader || holdsLock)
                #expect(machine.role != .takingOver, "a takeover always ends before the next event")
            }
        }
    }
}
