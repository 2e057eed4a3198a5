import Crypto
import Foundation
import Synchronization

/// Remembers, for a short time, which name and password were verified, so
/// that bcrypt (slow on purpose: hundreds of milliseconds) runs once per
/// sign-in and not once per request: scripts and WebDAV clients send their
/// Basic credentials with every request.
///
/// An entry is keyed by HMAC-SHA-256 of the name and password under a key
/// made at random when the process starts: the cache holds no password,
/// and a key seen in memory cannot be tested against guesses offline
/// without the process's key. Only successes are kept (a wrong password
/// always costs a bcrypt, and the sign-in throttle counts it).
///
/// The cache is bounded (``capacity`` entries, the oldest dropped first),
/// an entry lasts ``lifetime`` at most, and ``removeAll()`` empties it:
/// the server calls it whenever the users file changes, so a changed
/// password or a removed user takes effect at the next request.
public final class CredentialCache: Sendable {
    /// The most entries kept.
    public let capacity: Int
    /// How long a verified password is trusted without running bcrypt again.
    public let lifetime: Duration
    /// HMAC-SHA-256 under the process's key, keyed once: each digest starts
    /// from a copy (keying per call was a third of a cached check).
    private let keyed: HMAC<SHA256>
    private let state: Mutex<State>

    struct State {
        var entries: [Data: Entry] = [:]
        /// Keys in the order they were added, for dropping the oldest.
        var order: [Data] = []
    }

    struct Entry {
        var user: String
        var expires: ContinuousClock.Instant
    }

    /// Creates an empty cache with a fresh random key.
    public init(capacity: Int = 1024, lifetime: Duration = .seconds(300)) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
        keyed = HMAC<SHA256>(key: SymmetricKey(size: .bits256))
        state = Mutex(State())
    }

    /// Whether `name` and `password` were verified within the lifetime, at `now`.
    public func contains(name: String, password: String, now: ContinuousClock.Instant) -> Bool {
        let digest = self.digest(name: name, password: password)
        return state.withLock { state in
            guard let entry = state.entries[digest] else { return false }
            guard entry.expires > now, entry.user == name else {
                state.entries.removeValue(forKey: digest)
                state.order.removeAll { $0 == digest }
                return false
            }
            return true
        }
    }

    /// Remembers that `password` is `name`'s, from `now` for ``lifetime``.
    public func insert(name: String, password: String, now: ContinuousClock.Instant) {
        let digest = self.digest(name: name, password: password)
        let entry = Entry(user: name, expires: now + lifetime)
        state.withLock { state in
            if state.entries.updateValue(entry, forKey: digest) == nil { state.order.append(digest) }
            while state.order.count > capacity {
                state.entries.removeValue(forKey: state.order.removeFirst())
            }
        }
    }

    /// Forgets everything (the users file changed).
    public func removeAll() {
        state.withLock { $0 = State() }
    }

    /// The number of entries kept now.
    public var count: Int { state.withLock { $0.entries.count } }

    private func digest(name: String, password: String) -> Data {
        // The name's length first, so "ab"+"c" and "a"+"bc" never share a key.
        var mac = keyed
        withUnsafeBytes(of: UInt32(name.utf8.count).bigEndian) { mac.update(data: $0) }
        var name = name
        var password = password
        name.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
        password.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
        return Data(mac.finalize())
    }
}
