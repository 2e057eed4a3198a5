import NIOCore

/// The deadlines of one connection between requests, as a pure state
/// machine: events and the time they happened in, actions out. The handler
/// that owns it (``ConnectionDeadlineHandler``) does the I/O and keeps the timer.
///
/// A connection is in one of three phases:
/// - idle: no request under way and no byte of the next one; closed without an
///   answer after the keep-alive timeout;
/// - reading a head: a byte of a request arrived; its whole header block must
///   follow before a fixed deadline, which later bytes do not move (a client
///   that drips a byte every few seconds is not making progress). Past it the
///   server answers 408 and closes;
/// - busy: a request's header arrived and its body is still coming or its
///   response not yet ended. No deadline here: a body is bounded by silence
///   (Hummingbird's idle timeout), and a response may stream for as long as
///   the client reads it.
struct ConnectionDeadlines: Sendable {
    enum Phase: Equatable, Sendable {
        /// Waiting for the first byte of a request since this time.
        case idle(since: NIODeadline)
        /// The header block must be complete by this time.
        case readingHead(deadline: NIODeadline)
        /// A request is being read or answered.
        case busy
        /// The connection is closed, or being closed.
        case closed
    }

    /// What the handler must do.
    enum Action: Equatable, Sendable {
        case none
        /// (Re)arm the one timer at this time.
        case setTimer(NIODeadline)
        case cancelTimer
        /// Close the connection, answering `408 Request Timeout` first when `answer`.
        case close(answer: Bool)
    }

    let headerTimeout: TimeAmount
    let keepAliveTimeout: TimeAmount
    private(set) var phase: Phase
    /// Requests whose head arrived and whose response has not ended
    /// (more than one when a client pipelines).
    private var openRequests = 0
    /// Whether the newest request's body is still arriving.
    private var readingBody = false
    /// Whether bytes arrived after the newest request's end while busy: the
    /// next (pipelined) request has begun.
    private var nextRequestBegun = false

    /// A connection accepted at `now`.
    init(headerTimeout: TimeAmount, keepAliveTimeout: TimeAmount, now: NIODeadline) {
        self.headerTimeout = headerTimeout
        self.keepAliveTimeout = keepAliveTimeout
        phase = .idle(since: now)
    }

    /// When the current phase ends, if it has a deadline.
    var deadline: NIODeadline? {
        switch phase {
        case .idle(let since): since + keepAliveTimeout
        case .readingHead(let deadline): deadline
        case .busy, .closed: nil
        }
    }

    /// The timer for the first phase.
    func start() -> Action {
        deadline.map(Action.setTimer) ?? .none
    }

    /// Bytes arrived from the client (before any decoding).
    mutating func bytesArrived(now: NIODeadline) -> Action {
        switch phase {
        case .idle:
            phase = .readingHead(deadline: now + headerTimeout)
            return start()
        case .busy:
            // Bytes while a body is read are the body's. After the request's
            // end they are the next request's, whose deadline starts when the
            // current response ends (a download may take longer than it).
            if !readingBody { nextRequestBegun = true }
            return .none
        case .readingHead, .closed:
            return .none
        }
    }

    /// A request's header block was decoded.
    mutating func headReceived() -> Action {
        guard phase != .closed else { return .none }
        openRequests += 1
        readingBody = true
        nextRequestBegun = false
        if phase == .busy { return .none }
        phase = .busy
        return .cancelTimer
    }

    /// A request's body ended.
    mutating func requestEnded(now: NIODeadline) -> Action {
        readingBody = false
        return leaveBusyIfDone(now: now)
    }

    /// A response ended (its last part was written).
    mutating func responseEnded(now: NIODeadline) -> Action {
        openRequests = max(0, openRequests - 1)
        return leaveBusyIfDone(now: now)
    }

    private mutating func leaveBusyIfDone(now: NIODeadline) -> Action {
        // A response may end before its request's body did (an early 413):
        // the connection stays busy until the rest of the body is read.
        guard phase == .busy, openRequests == 0, !readingBody else { return .none }
        phase = nextRequestBegun ? .readingHead(deadline: now + headerTimeout) : .idle(since: now)
        nextRequestBegun = false
        return start()
    }

    /// The timer fired at `now`. `bytesWaiting` tells whether the
    /// connection's socket holds bytes that no read has taken yet; it is
    /// asked only when an idle connection is about to be closed.
    ///
    /// An event loop that was kept busy (a long run of tasks, or its thread
    /// not scheduled on a loaded machine) runs the timers that fell due
    /// before it reads its sockets again: a request sent well within the
    /// keep-alive bound may still be waiting in the socket when the timer
    /// fires. Closing then would drop it unanswered, so it is taken for what
    /// it is, the start of a request, with the header deadline from now.
    mutating func timerFired(now: NIODeadline, bytesWaiting: () -> Bool) -> Action {
        guard let deadline else { return .none }
        // A timer may fire a little early, or late after the phase changed.
        guard now >= deadline else { return .setTimer(deadline) }
        switch phase {
        case .idle:
            if bytesWaiting() { return bytesArrived(now: now) }
            phase = .closed
            return .close(answer: false)
        case .readingHead:
            phase = .closed
            return .close(answer: true)
        case .busy, .closed:
            return .none
        }
    }

    /// The connection closed.
    mutating func closed() -> Action {
        phase = .closed
        return .cancelTimer
    }
}
