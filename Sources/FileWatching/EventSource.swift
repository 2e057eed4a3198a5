/// Where kernel-like events come from: inotify on Linux (``InotifyReader``),
/// FSEvents or kqueue on Darwin later. A source only reports; the observer's
/// core decides what the events mean, by looking at the disk.
///
/// Polling needs no source: with ``ObserverOptions/pollingInterval`` set (or
/// for a subtree the kernel cannot watch), the core rescans on a timer and
/// reports the differences, pairing moved items by identity.
protocol EventSource: AnyObject {
    /// A descriptor that becomes readable when events are queued.
    var descriptor: Int32 { get }
    /// Reads what is queued now, without blocking, appending to `events`.
    /// Returns the number of events read (0 when the queue is empty).
    func readAvailable(into events: inout [SourceEvent]) -> Int
}
