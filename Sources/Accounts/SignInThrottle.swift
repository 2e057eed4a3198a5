/// Slows down guessing: failed sign-ins are counted per client address and
/// per user name, and past a few, each further attempt from that address
/// or for that name must wait, longer after each failure.
///
/// The limits (``Limits``, the defaults): 5 failures are free; the 6th
/// failure makes the next attempt wait 1 second, and each failure after it
/// doubles the wait, up to 5 minutes. Failures are forgotten 15 minutes
/// after the last one; a success forgets the name's failures (not the
/// address's: one address guessing many names stays slowed). At most
/// ``Limits/maxTracked`` addresses and names are tracked, the ones left
/// alone longest dropped first, so a flood of names cannot fill memory.
///
/// A pure state machine: time is given to every call, and nothing here sleeps.
public struct SignInThrottle: Sendable {
    /// How failures are counted and slowed.
    public struct Limits: Sendable, Equatable {
        /// Failures before any wait.
        public var freeFailures: Int
        /// The wait after the first failure past the free ones; doubled for each further one.
        public var firstDelay: Duration
        /// The longest wait.
        public var maxDelay: Duration
        /// How long after the last failure they are forgotten.
        public var forgetAfter: Duration
        /// The most addresses and names tracked at once.
        public var maxTracked: Int

        public init(
            freeFailures: Int = 5, firstDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300),
            forgetAfter: Duration = .seconds(900), maxTracked: Int = 10_000
        ) {
            self.freeFailures = freeFailures
            self.firstDelay = firstDelay
            self.maxDelay = maxDelay
            self.forgetAfter = forgetAfter
            self.maxTracked = maxTracked
        }
    }

    /// What is counted: a client address or a user name.
    public enum Key: Hashable, Sendable {
        case address(String)
        case name(String)
    }

    struct Record: Sendable {
        var failures: Int
        var last: ContinuousClock.Instant
        /// No attempt before this.
        var notBefore: ContinuousClock.Instant
    }

    /// The limits in force.
    public let limits: Limits
    private var records: [Key: Record] = [:]

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// How long an attempt from `address` for `name` must wait at `now`; `nil`: it may go ahead.
    public mutating func wait(address: String, name: String, now: ContinuousClock.Instant) -> Duration? {
        // Asked before every request a remembered password signs in (not only
        // at sign-in): with no failure on record, as nearly always, it hashes
        // nothing; and no array of the two keys is made for the loop.
        guard !records.isEmpty else { return nil }
        let byAddress = wait(for: .address(address), now: now)
        let byName = wait(for: .name(name), now: now)
        guard let byAddress else { return byName }
        return max(byAddress, byName ?? .zero)
    }

    /// How long `key`'s failures make an attempt wait at `now`; forgotten ones are dropped.
    private mutating func wait(for key: Key, now: ContinuousClock.Instant) -> Duration? {
        guard let record = records[key] else { return nil }
        if now - record.last >= limits.forgetAfter {
            records.removeValue(forKey: key)
            return nil
        }
        return record.notBefore > now ? record.notBefore - now : nil
    }

    /// Admits an attempt from `address` for `name` at `now` and counts it as
    /// a failure at once, before its password is checked: attempts sent at
    /// the same moment then find each other counted, and no more of them are
    /// checked than the limits allow one after the other (5 free, the 6th,
    /// then one a wait). A success takes its count back
    /// (``attemptSucceeded(address:name:now:)``).
    /// - Returns: How long the attempt must wait (it is refused and not
    ///   counted); `nil` when it may go ahead.
    public mutating func attempt(address: String, name: String, now: ContinuousClock.Instant) -> Duration? {
        if let wait = wait(address: address, name: name, now: now) { return wait }
        failed(address: address, name: name, now: now)
        return nil
    }

    /// Takes back the count of an attempt (``attempt(address:name:now:)``)
    /// that succeeded: the address keeps its earlier failures, the name's are forgotten.
    public mutating func attemptSucceeded(address: String, name: String, now: ContinuousClock.Instant) {
        records.removeValue(forKey: .name(name))
        guard var record = records[.address(address)] else { return }
        record.failures -= 1
        if record.failures <= 0 {
            records.removeValue(forKey: .address(address))
            return
        }
        record.notBefore = record.last + delay(afterFailures: record.failures)
        records[.address(address)] = record
    }

    /// Counts a failed attempt at `now`.
    public mutating func failed(address: String, name: String, now: ContinuousClock.Instant) {
        for key in [Key.address(address), .name(name)] {
            var record = records[key] ?? Record(failures: 0, last: now, notBefore: now)
            if now - record.last >= limits.forgetAfter { record.failures = 0 }
            record.failures += 1
            record.last = now
            record.notBefore = now + delay(afterFailures: record.failures)
            records[key] = record
        }
        trim(now: now)
    }

    /// Forgets the failures for `name` after a successful sign-in.
    public mutating func succeeded(name: String) {
        records.removeValue(forKey: .name(name))
    }

    /// The wait after `failures` failures.
    public func delay(afterFailures failures: Int) -> Duration {
        let past = failures - limits.freeFailures
        guard past > 0 else { return .zero }
        // 2^(past-1) times the first delay, without overflowing.
        var delay = limits.firstDelay
        for _ in 1..<past {
            delay *= 2
            if delay >= limits.maxDelay { return limits.maxDelay }
        }
        return min(delay, limits.maxDelay)
    }

    /// The number of addresses and names tracked.
    public var trackedCount: Int { records.count }

    private mutating func trim(now: ContinuousClock.Instant) {
        guard records.count > limits.maxTracked else { return }
        records = records.filter { now - $0.value.last < limits.forgetAfter }
        while records.count > limits.maxTracked {
            guard let oldest = records.min(by: { $0.value.last < $1.value.last })?.key else { break }
            records.removeValue(forKey: oldest)
        }
    }
}
